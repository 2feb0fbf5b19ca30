"""Paired significance: is system A better than system B on the same documents?

Documents i = 1 .. n are scored by both systems, a_i and b_i, and

    d_i = a_i - b_i,        delta = (1/n) sum_i d_i = mean_a - mean_b.

Two tests of H0 "A and B are equally good" and an interval for delta:

* **Paired bootstrap** (Koehn 2004's paired resampling of documents, with the
  p-value of Berg-Kirkpatrick et al. 2012 made two-sided; Efron and Tibshirani
  1993, ch. 16).  Replicate r gives document i a Poisson(1) weight w_ir (the
  Poisson bootstrap: a multinomial resample of n documents as n grows), and the
  resampled difference

      delta*_r = sum_i w_ir d_i / sum_i w_ir.

  The spread of delta*_r around delta stands in for the spread of delta around
  the true difference, so under H0 (true difference 0)

      p_bootstrap = (1 + #{r : |delta*_r - delta| >= |delta|}) / (1 + R'),

  over the R' replicates with sum_i w_ir > 0.  The interval is the percentile
  interval of delta*_r at the given confidence.  (sacreBLEU's `--paired-bs`
  shifts |delta*_r| by its mean instead of shifting delta*_r by delta, and counts
  with `>`; both approximate the same null distribution.)

* **Approximate randomization** (Noreen 1989; Riezler and Maxwell 2005;
  sacreBLEU's `--paired-ar`).  Under H0 the labels A and B of each document are
  exchangeable, so swapping them (d_i -> -d_i) leaves the distribution of
  delta unchanged.  With random signs s_ir = +1 or -1,

      p_permutation = (1 + #{r : |sum_i s_ir d_i| >= |sum_i d_i|}) / (1 + R).

  The +1 counts the observed labelling among the R random ones (Davison and
  Hinkley 1997; Phipson and Smyth 2010), so p is never 0 and the test
  never rejects more often than its level; `>=` (sacreBLEU counts `>`) makes a
  system compared with itself get p = 1.

Every draw is counter-based: w_ir and s_ir are functions of (seed, doc_id, r)
only (`rouge_core.resampling.counter_bits`), so the sums can be accumulated in
any order, on any number of workers, and merged.  Scores enter as exact
integers (`to_units`: 1e-5, the precision ROUGE-1.5.5 keeps), so the sums and
both p-values are exact; only the means and the interval are floating point.

Across m comparisons, `holm` controls the family-wise error rate and
`benjamini_hochberg` the false discovery rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from rouge_core.errors import RougeConfigError
from rouge_core.resampling import (
    SCORE_UNITS,
    counter_bit_matrix,
    percentile_interval,
    poisson_weight_block,
    poisson_weights,
    to_units,
)

# An accumulator holds three int64 arrays of R replicates (24 bytes per replicate
# and key); 100,000 replicates resolve p-values down to 1e-5 in 2.4 MB per key.
MAX_REPLICATES = 100_000


def check_replicates(replicates: int) -> int:
    if (
        not isinstance(replicates, int)
        or isinstance(replicates, bool)
        or not 1 <= replicates <= MAX_REPLICATES
    ):
        raise RougeConfigError(
            f"replicates must be an integer from 1 to {MAX_REPLICATES:,}, got {replicates!r}"
        )
    return replicates


def check_confidence(confidence: float) -> float:
    if not 0 < float(confidence) < 100:
        raise RougeConfigError(f"confidence must be a percentage between 0 and 100, got {confidence!r}")
    return float(confidence)


def sign_flips(key: str, replicates: int, seed: int) -> np.ndarray:
    """s_r = +1 or -1 with probability 1/2 each: the top bit of the counter-based
    stream of (seed, "sign" + key), independent of the key's Poisson weights.

    Example:
        >>> s = sign_flips("doc-1", 10_000, seed=0)
        >>> sorted(set(s.tolist())), abs(float(s.mean())) < 0.03
        ([-1, 1], True)
    """
    return sign_flip_matrix([key], replicates, seed)[0]


def sign_flip_matrix(keys: Sequence[str], replicates: int, seed: int) -> np.ndarray:
    """`sign_flips` of many documents at once, one row per key.

    Example:
        >>> bool((sign_flip_matrix(["a", "b"], 7, seed=2)[1] == sign_flips("b", 7, seed=2)).all())
        True
    """
    bits = counter_bit_matrix([f"sign\x1f{key}" for key in keys], replicates, seed)
    return 1 - 2 * (bits >> np.uint64(63)).astype(np.int64)


@lru_cache(maxsize=4)
def _draw_block(doc_ids: tuple[str, ...], replicates: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(weights, signs) of a block of documents, remembered (read-only): in the
    pipeline the same block reaches the tests of every pair of systems in turn."""
    weights = poisson_weight_block(doc_ids, replicates, seed)
    signs = sign_flip_matrix(doc_ids, replicates, seed)
    signs.flags.writeable = False
    return weights, signs


@lru_cache(maxsize=16)
def document_draws(doc_id: str, replicates: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(w_i., s_i.): the Poisson(1) weights and the signs of one document in every
    replicate.  Cached (read-only) because a document is paired with every other
    system on every metric, one after the other."""
    weights = poisson_weights(doc_id, replicates, seed)
    signs = sign_flips(doc_id, replicates, seed)
    weights.flags.writeable = False
    signs.flags.writeable = False
    return weights, signs


class PairedResult(NamedTuple):
    """One paired comparison; scores on the 0-1 scale; None where undefined (no documents)."""

    documents: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_bootstrap: float | None
    p_permutation: float | None


class PairedSums:
    """The sufficient statistics of both tests, exact and mergeable:

        n, sum_i a_i, sum_i b_i                    (integers, score units)
        weight[r]   = sum_i w_ir                   (int64 per replicate)
        weighted[r] = sum_i w_ir d_i
        signed[r]   = sum_i s_ir d_i

    Merging adds every field, so any split of the documents, merged in any
    order, gives the same sums.  Memory: 24 bytes per replicate.
    """

    __slots__ = ("documents", "signed", "sum_a", "sum_b", "weight", "weighted")

    def __init__(self, replicates: int):
        check_replicates(replicates)
        self.documents = 0
        self.sum_a = 0
        self.sum_b = 0
        self.weight = np.zeros(replicates, dtype=np.int64)
        self.weighted = np.zeros(replicates, dtype=np.int64)
        self.signed = np.zeros(replicates, dtype=np.int64)

    @property
    def replicates(self) -> int:
        return len(self.weight)

    def add(self, doc_id: str, a: int, b: int, seed: int) -> PairedSums:
        """Add one document's scores, as integers in score units (`to_units`)."""
        weights, signs = document_draws(doc_id, self.replicates, seed)
        d = a - b
        self.documents += 1
        self.sum_a += a
        self.sum_b += b
        self.weight += weights
        if d:
            self.weighted += d * weights
            self.signed += d * signs
        return self

    def merge(self, other: PairedSums) -> PairedSums:
        if other.replicates != self.replicates:
            raise ValueError(f"cannot merge {other.replicates} replicates into {self.replicates}")
        self.documents += other.documents
        self.sum_a += other.sum_a
        self.sum_b += other.sum_b
        self.weight += other.weight
        self.weighted += other.weighted
        self.signed += other.signed
        return self

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state):
        for name, value in state.items():
            setattr(self, name, value)


# Draws held at a time by `paired_sums`: 2 x 2**22 values, 64 MB.
_DRAWS_PER_CHUNK = 1 << 22
_MAX_WEIGHT = 12  # poisson_weights' table ends at P(X <= 11)


def paired_sums(
    doc_ids: Sequence[str], columns: Sequence[tuple[Sequence[int], Sequence[int]]], replicates: int, seed: int
) -> list[PairedSums]:
    """The `PairedSums` of several paired score columns (a, b), in score units, over
    the same documents, drawing each document's weights and signs once for all
    columns and vectorising over chunks of documents.

    The sums over a chunk are matrix products in double precision (BLAS), which
    are exact: every term and partial sum is an integer of magnitude at most
    max|d| x 12 x (documents per chunk), below 2**53 for scores in [0, 1]
    (1e5 x 12 x 2**22 < 5.1e12); beyond that bound, int64 products are used.

    Example:
        >>> ab, ba = paired_sums(["d1", "d2"], [([3, 5], [1, 1]), ([1, 1], [3, 5])], 50, seed=0)
        >>> ab.sum_a - ab.sum_b, bool((ab.weighted == -ba.weighted).all())
        (6, True)
    """
    check_replicates(replicates)
    n = len(doc_ids)
    if any(not len(a) == len(b) == n for a, b in columns):
        raise ValueError("every score column must have one value per document")
    a = np.asarray([a for a, _ in columns], dtype=np.int64).reshape(len(columns), n)
    b = np.asarray([b for _, b in columns], dtype=np.int64).reshape(len(columns), n)
    differences = a - b
    chunk = max(1, _DRAWS_PER_CHUNK // replicates)
    largest = int(np.abs(differences).max()) if differences.size else 0
    exact_type = np.float64 if largest * _MAX_WEIGHT * chunk < 2**53 else np.int64
    sums = [PairedSums(replicates) for _ in columns]
    for start in range(0, n, chunk):
        ids = doc_ids[start : start + chunk]
        weights, signs = (draws.astype(exact_type) for draws in _draw_block(tuple(ids), replicates, seed))
        d = differences[:, start : start + chunk].astype(exact_type)
        weight = weights.sum(axis=0).astype(np.int64)
        weighted = (d @ weights).astype(np.int64)
        signed = (d @ signs).astype(np.int64)
        for k, acc in enumerate(sums):
            acc.weight += weight
            acc.weighted += weighted[k]
            acc.signed += signed[k]
    for k, acc in enumerate(sums):
        acc.documents = n
        acc.sum_a = int(a[k].sum())
        acc.sum_b = int(b[k].sum())
    return sums


def paired_test(sums: PairedSums, confidence: float = 95.0) -> PairedResult:
    """Means, difference, bootstrap interval and both p-values from the sums.

    With D = sum_i d_i and, per replicate, W_r = sum_i w_ir and V_r = sum_i w_ir d_i,
    |delta*_r - delta| >= |delta| is decided exactly in integers as
    |n V_r - D W_r| >= |D| W_r.

    Example (identical systems: no difference, nothing significant):
        >>> s = PairedSums(99).add("d1", 50_000, 50_000, seed=0).add("d2", 1_000, 1_000, seed=0)
        >>> r = paired_test(s)
        >>> r.difference, r.p_bootstrap, r.p_permutation
        (0.0, 1.0, 1.0)
    """
    check_confidence(confidence)
    n = sums.documents
    if n == 0:
        return PairedResult(0, None, None, None, None, None, None, None)
    total = sums.sum_a - sums.sum_b  # D, exact
    mean_a = sums.sum_a / (n * SCORE_UNITS)
    mean_b = sums.sum_b / (n * SCORE_UNITS)
    difference = total / (n * SCORE_UNITS)

    used = sums.weight > 0
    ci_low = ci_high = p_bootstrap = None
    if used.any():
        weight, weighted = sums.weight[used], sums.weighted[used]
        ci_low, ci_high = percentile_interval(weighted / (weight * SCORE_UNITS), confidence)
        w, v = weight.astype(object), weighted.astype(object)  # Python integers: no overflow
        extreme = int(np.count_nonzero(np.abs(n * v - total * w) >= abs(total) * w))
        p_bootstrap = (1 + extreme) / (1 + len(weight))

    extreme = int(np.count_nonzero(np.abs(sums.signed) >= abs(total)))
    p_permutation = (1 + extreme) / (1 + sums.replicates)
    return PairedResult(n, mean_a, mean_b, difference, ci_low, ci_high, p_bootstrap, p_permutation)


def paired_significance(
    doc_ids: Sequence[str],
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    *,
    replicates: int = 1000,
    seed: int = 0,
    confidence: float = 95.0,
) -> PairedResult:
    """`paired_test` of two systems' scores (0-1 scale) on the same documents, in one call.

    Example (A is 0.1 better on each of 3 documents: every resample gives 0.1, so
    the bootstrap finds no spread at all (p = 1 / (1 + R')), while only the 2 of 8 sign patterns
    with equal signs reach |sum s d| = |sum d|, so p_permutation is near 1/4):
        >>> r = paired_significance(["d1", "d2", "d3"], [0.5, 0.6, 0.7], [0.4, 0.5, 0.6], replicates=99)
        >>> round(r.difference, 5), r.ci_low == r.ci_high, r.p_bootstrap < 0.02, r.p_permutation
        (0.1, True, True, 0.25)
    """
    if not len(doc_ids) == len(scores_a) == len(scores_b):
        raise ValueError("doc_ids, scores_a and scores_b must have the same length")
    if len(set(doc_ids)) != len(doc_ids):
        raise ValueError("doc_ids must be distinct: a document enters a paired test once")
    (sums,) = paired_sums(
        list(doc_ids), [([to_units(x) for x in scores_a], [to_units(x) for x in scores_b])], replicates, seed
    )
    return paired_test(sums, confidence)


def _order(p_values: Sequence[float | None]) -> list[int]:
    """Indices of the defined p-values, smallest p first (ties in input order)."""
    return sorted((i for i, p in enumerate(p_values) if p is not None), key=lambda i: p_values[i])


def holm(p_values: Iterable[float | None]) -> list[float | None]:
    """Holm's (1979) step-down adjusted p-values, controlling the family-wise error rate.

    With the m defined p-values sorted, p_(1) <= ... <= p_(m),

        p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).

    Undefined (None) p-values stay None and do not count in m.

    Example:
        >>> holm([0.01, 0.04, 0.03, None])
        [0.03, 0.06, 0.06, None]
    """
    p_values = list(p_values)
    order = _order(p_values)
    m = len(order)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for j, i in enumerate(order, 1):
        running = max(running, min(1.0, (m - j + 1) * p_values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Iterable[float | None]) -> list[float | None]:
    """Benjamini and Hochberg's (1995) step-up adjusted p-values, controlling the
    false discovery rate (for independent or positively dependent tests).

    With the m defined p-values sorted, p_(1) <= ... <= p_(m),

        p~_(i) = min_{j >= i} min(1, m p_(j) / j).

    Example:
        >>> benjamini_hochberg([0.01, 0.04, 0.03, None])
        [0.03, 0.04, 0.04, None]
    """
    p_values = list(p_values)
    order = _order(p_values)
    m = len(order)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 1.0
    for j in range(m, 0, -1):
        i = order[j - 1]
        running = min(running, m * p_values[i] / j)
        adjusted[i] = running
    return adjusted


ADJUSTMENTS = {"holm": holm, "bh": benjamini_hochberg}
