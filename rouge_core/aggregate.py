"""The per-system accumulator: every metric of one system's scored documents, exactly.

One document enters as its values: the float64 bytes of an array of shape
(metrics, 6) holding each metric's `MetricStats` fields in order (reference
total, candidate total, hits, R, P, F; `stats_bytes`).  `SystemSums` keeps only
exact quantities (integers in 1e-5 score units, exact sums of the counts,
integer arrays), so merging in any order, on any number of workers, gives
bit-identical results; the statistics are the pure functions of
`rouge_core.resampling`, and this module only accumulates.  Documents wait in a
small buffer and enter the bootstrap and jackknife sums a block at a time, as
matrix products.  `SystemSums.metric(m)` gives each metric's `SystemStats`:
the mean R/P/F over documents, the pooled counts (and their micro average),
Poisson-bootstrap replicate means and jackknife standard errors.

Beam's `pipeline` CombineFn and `rouge_core.corpus_score` both accumulate with it.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterable
from fractions import Fraction
from functools import cache
from itertools import chain
from typing import NamedTuple

import numpy as np
from threadpoolctl import ThreadpoolController

from rouge_core.presets.rouge155 import f_measure
from rouge_core.resampling import (
    SCORE_UNITS,
    jackknife_bucket_block,
    jackknife_standard_error,
    percentile_interval,
    poisson_weight_block,
    to_units,
    units_of,
)

BLOCK = 512  # documents per matrix product
_EXACT_SCALE = 1074  # every finite double is an integer multiple of 2**-1074
_SMALL = float(1 << 31)  # whole counts below this are summed as int64


class _OneBlasThread:
    """BLAS on one thread while any caller is inside (a runner may score in several
    threads of one process): the first to enter sets the limit, the last to leave
    restores what the process had.  The thread pools are found once, at the first
    use (a search of the loaded libraries costs 0.2 ms; a limit set through them,
    8 us): numpy's BLAS, which the products use, is loaded by then; a BLAS loaded
    later (another package's) is neither limited nor touched."""

    def __init__(self):
        self.lock = threading.Lock()
        self.inside = 0
        self.controller = ThreadpoolController()
        self.limiter = None

    def __enter__(self):
        with self.lock:
            if not self.inside:
                self.limiter = self.controller.limit(limits=1, user_api="blas")
            self.inside += 1

    def __exit__(self, *exc):
        with self.lock:
            self.inside -= 1
            if not self.inside:
                self.limiter.restore_original_limits()
                self.limiter = None


@cache
def one_blas_thread() -> _OneBlasThread:
    """A context in which BLAS runs on one thread; the caller's limits are restored
    after.  Every Beam worker process already owns a core, and OpenBLAS's thread
    pool on top of that made the block products below 30x slower on this 2-core
    machine; a notebook's own BLAS work after a `corpus_score` keeps its threads."""
    return _OneBlasThread()


def stats_bytes(scores: dict, tags) -> bytes:
    """A scorer's {tag: MetricStats} as ScoredDocument.values: float64 bytes of an
    array (metrics, 6), each row the MetricStats fields in order (packed by
    `struct`, the bytes of numpy's float64 array in native order, without
    numpy's per-object inspection of the NamedTuples: once per scored pair)."""
    tags = tuple(tags)
    return _packer(6 * len(tags)).pack(*chain.from_iterable(map(scores.__getitem__, tags)))


@cache
def _packer(count: int) -> struct.Struct:
    return struct.Struct(f"={count}d")


def stats_array(values: bytes) -> np.ndarray:
    """A ScoredDocument's `values` as a read-only (metrics, 6) array."""
    return np.frombuffer(values, dtype=np.float64).reshape(-1, 6)


def stack(values: list[bytes]) -> np.ndarray:
    """Several documents' values as one (documents, metrics, 6) array."""
    return np.frombuffer(b"".join(values), dtype=np.float64).reshape(len(values), -1, 6)


def units(values: np.ndarray) -> np.ndarray:
    """R, P, F (five-decimal scores) of every metric as exact integers in 1e-5 units,
    shape (metrics, 3); `to_units` on arrays."""
    return units_of(values[..., 3:6])


def exact_mean(scores: Iterable[float]) -> float:
    """The mean of five-decimal scores, summed exactly in 1e-5 units: the mean
    `SystemSums` forms, whatever the order of the scores.

    Example:
        >>> exact_mean([0.1, 0.2, 0.3]), sum([0.1, 0.2, 0.3]) / 3
        (0.2, 0.20000000000000004)
    """
    scores = list(scores)
    if not scores:
        raise ValueError("the mean of no scores")
    return sum(to_units(score) for score in scores) / (len(scores) * SCORE_UNITS)


def _scaled(x: float) -> int:
    """A double as an exact integer count of 2**-1074."""
    numerator, denominator = float(x).as_integer_ratio()
    return numerator << (_EXACT_SCALE - (denominator.bit_length() - 1))


def exact_units(values: np.ndarray) -> int:
    """The exact sum of some doubles, as an integer count of 2**-1074 (the sum of
    `_scaled` of each), found per binary exponent: a double is m * 2**e with m a
    53-bit integer, the m of one exponent summed in int64 (at most BLOCK of them:
    below 2**62), one Python integer shift and add per exponent, not per value."""
    if not np.isfinite(values).all():
        return sum(_scaled(x) for x in values.tolist())  # (raises, as _scaled does)
    fraction, exponent = np.frexp(values)
    mantissa = (fraction * 2.0**53).astype(np.int64)  # exact: 53 bits
    shift = exponent.astype(np.int64) + (_EXACT_SCALE - 53)
    total = 0
    for k in np.unique(shift).tolist():
        part = int(mantissa[shift == k].sum())
        total += part << k if k >= 0 else part >> -k  # (a subnormal's m is a multiple of 2**-k)
    return total


def bucket_sums(rows: np.ndarray, buckets: np.ndarray, count: int) -> np.ndarray:
    """(count, columns) int64: row i of `rows` added into line buckets[i], as
    np.add.at does, in a sort and one reduceat (np.add.at took 0.2 us a document)."""
    out = np.zeros((count, rows.shape[1]), dtype=np.int64)
    if len(rows):
        order = np.argsort(buckets, kind="stable")
        ordered = buckets[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        out[ordered[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return out


class SystemSums:
    """Sufficient statistics of one system's documents, for M metrics (M set by
    the first document):

        n                            documents
        totals[3m + k]               sum of R/P/F units                 (int64)
        counts_small / counts_exact  sum of the three counts: int64 for whole
                                     counts below 2**31, exact integers of
                                     2**-1074 for the rest (ROUGE-W, averages)
        bootstrap[0, r]              sum of Poisson weights of replicate r
        bootstrap[1 + m, r]          weighted sum of F units (only F has an interval)
        jackknife[0, b]              documents of jackknife bucket b
        jackknife[1 + 3m + k, b]     sum of R/P/F units of bucket b
        pending                      (doc_id, values) not in the sums yet: at
                                     most BLOCK documents (336 bytes each with
                                     14 metrics)

    Their size does not grow with the documents.  A partial accumulator of a few
    documents (what a Beam bundle hands to the shuffle per system) holds only
    `pending`: the dense replicate arrays (64 KB at 7 metrics) are allocated when BLOCK
    documents have arrived, or when the sums are read.  Every sum is an exact
    integer, so when a document enters them does not change a bit.
    """

    def __init__(self, replicates: int, buckets: int):
        self.replicates, self.buckets = replicates, buckets
        self.n = 0
        self.totals = self.counts_small = self.counts_exact = self.bootstrap = self.jackknife = None
        self.pending: list = []

    def _allocate(self, metrics: int) -> None:
        self.totals = np.zeros(3 * metrics, dtype=np.int64)
        self.counts_small = np.zeros(3 * metrics, dtype=np.int64)
        self.counts_exact = [0] * (3 * metrics)
        self.bootstrap = np.zeros((1 + metrics, self.replicates), dtype=np.int64)
        self.jackknife = np.zeros((1 + 3 * metrics, self.buckets), dtype=np.int64)

    def add(self, doc_id: str, values: bytes, seed: int) -> SystemSums:
        """One document; the pending ones enter the sums once BLOCK have arrived."""
        return self.extend([(doc_id, values)], seed)

    def extend(self, documents: list, seed: int) -> SystemSums:
        """(doc_id, values) documents, `add`ed in order: each whole BLOCK of pending
        documents enters the sums."""
        pending = self.pending
        pending.extend(documents)
        while len(pending) >= BLOCK:
            self._enter(pending[:BLOCK], seed)
            del pending[:BLOCK]
        return self

    def flush(self, seed: int) -> SystemSums:
        """Enter the pending documents into the sums, BLOCK at a time."""
        while self.pending:
            block, self.pending = self.pending[:BLOCK], self.pending[BLOCK:]
            self._enter(block, seed)
        return self

    def _enter(self, block: list, seed: int) -> None:
        ids = tuple([doc_id for doc_id, _ in block])  # (the key of the caches of block hashes)
        values = stack([v for _, v in block])
        k = len(ids)
        if self.totals is None:
            self._allocate(values.shape[1])
        scores = units(values).reshape(k, -1)  # (k, 3M)
        rows = np.concatenate([np.ones((k, 1), dtype=np.int64), scores], axis=1)  # (k, 1 + 3M)
        self.n += k
        self.totals += scores.sum(axis=0)
        counts = values[..., :3].reshape(k, -1)
        small = (counts == np.floor(counts)) & (np.abs(counts) < _SMALL)
        self.counts_small += np.where(small, counts, 0).sum(axis=0).astype(np.int64)
        exact = ~small
        if exact.any():
            for j in np.flatnonzero(exact.any(axis=0)).tolist():
                self.counts_exact[j] += exact_units(counts[exact[:, j], j])
        # Exact in double precision: |units| <= 1e5, weights <= 12, k <= BLOCK.
        weights = poisson_weight_block(ids, self.replicates, seed)  # (float64)
        counted = rows[:, ::3]  # the weight row and each metric m's F (column 3(m + 1) of rows)
        with one_blas_thread():
            self.bootstrap += (counted.T.astype(np.float64) @ weights).astype(np.int64)
        self.jackknife += bucket_sums(rows, jackknife_bucket_block(ids, self.buckets), self.buckets).T

    def merge(self, other: SystemSums, seed: int) -> SystemSums:
        """Add `other`'s sums and pending documents."""
        self.pending.extend(other.pending)
        if other.totals is not None:
            if self.totals is None:
                self._allocate(len(other.totals) // 3)
            self.n += other.n
            self.totals += other.totals
            self.counts_small += other.counts_small
            self.counts_exact = [a + b for a, b in zip(self.counts_exact, other.counts_exact)]
            self.bootstrap += other.bootstrap
            self.jackknife += other.jackknife
        if len(self.pending) >= BLOCK:
            self.flush(seed)
        return self

    def counts(self, j: int) -> Fraction:
        return self.counts_small[j] + Fraction(self.counts_exact[j], 1 << _EXACT_SCALE)

    def metric(self, m: int) -> SystemStats:
        """Metric m's statistics over the documents in the sums (flush first)."""
        rows = range(1 + 3 * m, 4 + 3 * m)
        weight = self.bootstrap[0]
        used = weight > 0
        return SystemStats(
            documents=self.n,
            means=tuple(int(self.totals[row - 1]) / (self.n * SCORE_UNITS) for row in rows),
            counts=tuple(self.counts(j) for j in range(3 * m, 3 * m + 3)),
            bootstrap_f=self.bootstrap[1 + m][used] / (weight[used] * SCORE_UNITS),
            jackknife_se=tuple(
                jackknife_standard_error(self.jackknife[row] / SCORE_UNITS, self.jackknife[0]) for row in rows
            ),
        )

    @property
    def metrics(self) -> int:
        """How many metrics the documents have (0 before the first flush)."""
        return 0 if self.totals is None else len(self.totals) // 3


class SystemStats(NamedTuple):
    """One system and metric, summed over its documents."""

    documents: int
    means: tuple  # R, P, F
    counts: tuple  # pooled reference total, candidate total, hits (exact Fractions)
    bootstrap_f: np.ndarray  # the F mean of every replicate that drew a document
    jackknife_se: tuple  # R, P, F

    def micro(self, alpha: float) -> tuple[float, float, float]:
        """Corpus-level R/P/F from the pooled counts, as ROUGE-1.5.5 `-t 1` forms them:
        R = sum(hits) / sum(reference totals), P likewise, no f^-1 for ROUGE-W."""
        reference, candidate, hits = self.counts
        recall = float(hits / reference) if reference else 0.0
        precision = float(hits / candidate) if candidate else 0.0
        return recall, precision, f_measure(recall, precision, alpha, rounded=False)

    def bootstrap_interval(self, confidence: float):
        if not len(self.bootstrap_f):
            return None, None
        return percentile_interval(self.bootstrap_f, confidence)
