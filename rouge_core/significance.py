"""Paired significance: is system A better than system B on the same documents?

Documents i = 1 .. n are scored by both systems, a_i and b_i, and

    d_i = a_i - b_i,    delta = (1/n) sum_i d_i = mean_a - mean_b.

**The test.** H0: the labels A and B of each document are exchangeable, so each
d_i is as likely to be -d_i (Fisher 1935; the sign-flip or "approximate
randomization" test of Noreen 1989 and sacreBLEU's --paired-ar).  Its statistic
is |sum_i d_i|, and since sum_i (s_i d_i)^2 = sum_i d_i^2 for every sign pattern
s, the paired t statistic

    t = delta / (sd(d) / sqrt(n)) = D sqrt(n - 1) / sqrt(n Q - D^2),
    D = sum_i d_i,  Q = sum_i d_i^2,

is a monotone function of it: the sign-flip test of the mean and of t are one
test.  Its p-value is computed two ways:

* **exactly**, for n <= EXACT_MAX_DOCUMENTS (20): all 2^n sign patterns are
  enumerated (as two halves of 2^(n/2) sums that meet in the middle), and
  p = #{s : |sum_i s_i d_i| >= |D|} / 2^n, in integers;
* **by Student's t** with n - 1 degrees of freedom beyond that: the sign-flip
  distribution of t converges to Student's t (Pitman 1937; Lehmann and Romano,
  Testing Statistical Hypotheses, 3rd ed., ch. 15), and the paired t-test
  is the textbook test of a mean over many independent documents (Dror et al.
  2018 discuss when it applies in NLP).  Its p-value is clipped below at
  2^(1-n), the smallest p the sign-flip test can give on n documents, so a
  setting's smallest p is `smallest_p(n)` whichever way it was computed.

Both need only a few integer sums per pair of systems (below), so p can go as
low as the evidence goes (a +15-point ROUGE-1 gap on 11,490 CNN/DM documents has
t = -136 and p far below 1e-300), without replicates and without holding documents.
The tests compare both with scipy (ttest_rel, permutation_test) and state the
error of the t approximation against the exact test at n = 21 .. 40.

Stated with every pair: the mean difference, the t interval for it
(delta +- t_{n-1} sd(d)/sqrt(n)), the standardized effect size d_z =
delta / sd(d) (Cohen 1988, for paired data), the statistic t, the p-value, its
floor and the method.  Across m comparisons, `holm` controls the family-wise
error rate and `benjamini_hochberg` the false discovery rate.

**The sums** (`PairSums`, one per score column: a metric and measure).  Scores
enter as exact integers (`to_units`: 1e-5, the precision ROUGE-1.5.5 keeps).  With
X the documents x systems matrix of scores (0 where a system did not score the
document) and M its 0/1 presence mask, every pair (a, b) needs, over the
documents both scored,

    n_ab   = (M^T M)_ab          sum a   = (X^T M)_ab      sum b   = (X^T M)_ba
    sum a b = (X^T X)_ab         sum a^2 = (X^2^T M)_ab    sum b^2 = (X^2^T M)_ba

and then D = sum a - sum b and Q = sum a^2 + sum b^2 - 2 sum a b.  When every
document so far was scored by every system (the usual case), M is all ones and
only X^T X is a matrix; the others are per-system vectors.  These are integer
sums, so any split of the documents, merged in any order, gives the same numbers
bit for bit; documents are added a block at a time as matrix products in double
precision, which is exact while every partial sum is an integer below 2^53 (the
block size is chosen so), and accumulated in int64.

Memory: O(S^2) integers per score column (8 S^2 bytes when every system scored
every document, 32 S^2 otherwise: 8 MB or 32 MB at S = 1,000), plus at most 20
documents' scores for the exact test; never documents x replicates x pairs.
Work: O(S^2 D) multiply-adds in BLAS per column, and O(S^2) at the end.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from rouge_core import student_t
from rouge_core.errors import RougeConfigError
from rouge_core.resampling import SCORE_UNITS, units_of

# Up to this many paired documents the sign-flip test is enumerated exactly
# (2^20 patterns as two halves of 1,024 sums per pair); beyond, Student's t.
EXACT_MAX_DOCUMENTS = 20
EXACT = "exact sign-flip"
STUDENT_T = "t"
# Names the test in signatures (run.json's significance_signature).
SIGNIFICANCE_METHOD = f"signflip:exact<={EXACT_MAX_DOCUMENTS}+t"

_EXACT_DOUBLE = 2**53  # integers up to this are exact in a double
_INT64 = 2**63


def smallest_p(documents: int) -> float:
    """The smallest two-sided p-value the test can report on `documents` paired documents.

    2^(1 - n): at best only the observed signs and their mirror image reach |sum d|
    (as when every d_i is non-zero and of one sign), 2 of 2^n patterns.  The t
    branch is clipped to the same floor, so this holds for every n.  Below the
    smallest normal double (n > 1022) it is that double, 2.2e-308.

    Example:
        >>> smallest_p(1), smallest_p(5), smallest_p(20)
        (1.0, 0.0625, 1.9073486328125e-06)
    """
    if isinstance(documents, bool) or not isinstance(documents, (int, np.integer)) or documents < 1:
        raise ValueError(f"smallest_p needs a number of documents >= 1, got {documents!r}")
    return max(2.0 ** (1 - int(documents)), sys.float_info.min)


def check_confidence(confidence: float) -> float:
    if not 0 < float(confidence) < 100:
        raise RougeConfigError(f"confidence must be a percentage between 0 and 100, got {confidence!r}")
    return float(confidence)


# ------------------------------------------------------------------ the sums


class PairSums:
    """The sufficient statistics of every pair's paired test for one score column.

    Fields (S = len(systems), all integers in score units):

        systems              sorted system names; column k of every array is systems[k]
        documents            documents added
        count, total, squares  per system: documents scored, sum x, sum x^2
        products             S x S: sum over documents both scored of x_a x_b
        shared, sums, sum_squares
                             S x S, only once some document lacked some system
                             (None before): n_ab, sum_{both} x_a, sum_{both} x_a^2
        raw                  while documents <= EXACT_MAX_DOCUMENTS: (doc ids,
                             units D x S, presence D x S), for the exact test;
                             None beyond

    `add` takes a block of documents, `merge` another PairSums (of any systems:
    the union is formed); both are exact, so the result does not depend on how
    the documents were split or in which order the parts were merged.

    With `against` (a baseline system's name), only the pairs (system, baseline)
    are kept: `products` and `shared` are S x 1 (each system's column against the
    baseline) and `sums`, `sum_squares` S x 2 (column 0: the system's own sums over
    the documents both scored, column 1: the baseline's), so memory is linear in
    the systems (5,000 systems: 0.4 MB, where every pair needs 800 MB).

    Example (two systems, three documents; b did not score d3):
        >>> s = PairSums().add(["d1", "d2", "d3"], ["a", "b"], [[5, 1], [7, 7], [2, 0]], [[1, 1], [1, 1], [1, 0]])
        >>> s.systems, s.documents, s.pair_sums(0, 1)
        (('a', 'b'), 3, (2, 12, 8, 74, 50, 54))
    """

    __slots__ = (
        "against",
        "count",
        "documents",
        "largest",
        "products",
        "raw",
        "shared",
        "squares",
        "sum_squares",
        "sums",
        "systems",
        "total",
    )

    def __init__(self, systems: Sequence[str] = (), against: str | None = None):
        self.against = against
        self.systems: tuple[str, ...] = ()
        self.documents = 0
        self.largest = 0  # max |x| seen: bounds every int64 sum
        size = 0
        self.count = np.zeros(size, dtype=np.int64)
        self.total = np.zeros(size, dtype=np.int64)
        self.squares = np.zeros(size, dtype=np.int64)
        self.products = np.zeros((size, size), dtype=np.int64)
        self.shared = self.sums = self.sum_squares = None
        self.raw = ([], np.zeros((0, size), dtype=np.int64), np.zeros((0, size), dtype=bool))
        if against is not None:
            self.products = np.zeros((0, 1), dtype=np.int64)
            systems = [*systems, against]
        self._include(systems)

    # -- systems ------------------------------------------------------------

    def _include(self, systems: Iterable[str]) -> None:
        """Widen every array to the union of the current and the given systems
        (the new systems scored none of the documents so far)."""
        union = tuple(sorted(set(self.systems).union(systems)))
        if union == self.systems:
            return
        if self.documents and self.shared is None:
            self._make_sparse()  # the documents so far lack the new systems
        old = np.searchsorted(union, self.systems).astype(np.intp)  # where each old column goes
        size = len(union)
        self.count, self.total, self.squares = (
            _widen_columns(v, old, size) for v in (self.count, self.total, self.squares)
        )
        widen = _widen_rows if self.against is not None else _widen_square
        self.products, self.shared, self.sums, self.sum_squares = (
            widen(m, old, size) for m in (self.products, self.shared, self.sums, self.sum_squares)
        )
        if self.raw is not None:
            ids, units, present = self.raw
            self.raw = (ids, _widen_columns(units, old, size), _widen_columns(present, old, size))
        self.systems = union

    def _make_sparse(self) -> None:
        """From "every document had every system" to the pairwise matrices."""
        size = len(self.systems)
        if self.against is not None:
            b = self.index(self.against)
            self.shared = np.full((size, 1), self.documents, dtype=np.int64)
            self.sums = np.stack([self.total, np.full(size, self.total[b])], axis=1)
            self.sum_squares = np.stack([self.squares, np.full(size, self.squares[b])], axis=1)
            return
        self.shared = np.full((size, size), self.documents, dtype=np.int64)
        self.sums = np.repeat(self.total[:, None], size, axis=1)
        self.sum_squares = np.repeat(self.squares[:, None], size, axis=1)

    # -- adding documents ---------------------------------------------------

    def add(self, doc_ids: Sequence[str], systems: Sequence[str], units, present=None, pairs_of=None) -> PairSums:
        """Add a block of documents.

        Args:
            doc_ids: one id per document (row), distinct, and not added before.
            systems: the system of each column of `units`.
            units: documents x systems integer scores in score units (`to_units`).
            present: documents x systems, true where the system scored the
                document (its unit is then ignored elsewhere); None: all scored.
            pairs_of: None, or some of `systems`: only the pair sums of pairs with
                one of them are made (work S x k per document, not S x S); the
                other pairs' stay 0, for a caller that has their results already
                (a run that reuses a previous run's, pipeline.reuse).
        """
        units = np.asarray(units, dtype=np.int64).reshape(len(doc_ids), len(systems))
        if len(set(systems)) != len(systems):
            raise ValueError(f"a block names a system twice: {sorted(systems)}")
        self._include(systems)
        some = None if pairs_of is None else np.searchsorted(self.systems, sorted(set(pairs_of))).astype(np.intp)
        if present is None and self.shared is None and tuple(systems) == self.systems:
            return self._add_matrix(list(doc_ids), units, None, some)  # (every system scored every document, in order)
        present = (
            np.ones(units.shape, dtype=bool)
            if present is None
            else np.asarray(present, dtype=bool).reshape(units.shape)
        )
        columns = np.searchsorted(self.systems, systems)
        x = np.zeros((len(doc_ids), len(self.systems)), dtype=np.int64)
        m = np.zeros(x.shape, dtype=bool)
        x[:, columns] = np.where(present, units, 0)
        m[:, columns] = present
        return self._add_matrix(list(doc_ids), x, m, some)

    def _add_matrix(self, doc_ids: list[str], x: np.ndarray, m: np.ndarray | None, some=None) -> PairSums:
        """`x` documents x self.systems; `m` its presence (None: every system scored every document)."""
        if not len(doc_ids):
            return self
        largest = int(np.abs(x).max()) if x.size else 0
        self._check_bounds(self.documents + len(doc_ids), max(self.largest, largest))
        self.largest = max(self.largest, largest)
        complete = m is None or bool(m.all())
        if self.shared is None and not complete:
            self._make_sparse()
        if m is None:
            self.count += len(doc_ids)
        else:
            self.count += m.sum(axis=0)
        self.total += x.sum(axis=0)
        self.squares += (x * x).sum(axis=0)
        b = None if self.against is None else self.index(self.against)
        for rows in _exact_blocks(len(doc_ids), largest):
            xf = x[rows].astype(np.float64)
            if some is not None and b is None:  # only the pairs with a system of `some` (run --reuse)
                mf = m[rows].astype(np.float64) if self.shared is not None else None
                terms = [(self.products, xf, xf)]
                if mf is not None:
                    terms += [(self.shared, mf, mf), (self.sums, xf, mf), (self.sum_squares, xf * xf, mf)]
                for target, left, right in terms:  # target += left^T right (only rows and columns `some`)
                    columns = _exact(left.T @ right[:, some])  # target[:, some]
                    across = _exact(left[:, some].T @ right)  # target[some, :]
                    across[:, some] = 0  # (target[some, some] is in `columns`)
                    target[:, some] += columns
                    target[some, :] += across
                continue
            # every pair: the systems' products; against a baseline: each system's with the baseline's column
            # (S x 1 per document: `some` need not narrow it)
            xb = xf if b is None else xf[:, b : b + 1]
            self.products += _exact(xf.T @ xb)
            if self.shared is not None:
                mf = m[rows].astype(np.float64)
                mb = mf if b is None else mf[:, b : b + 1]
                self.shared += _exact(mf.T @ mb)
                if b is None:
                    self.sums += _exact(xf.T @ mf)
                    self.sum_squares += _exact((xf * xf).T @ mf)
                else:
                    self.sums += _exact(np.hstack([xf.T @ mb, mf.T @ xb]))
                    self.sum_squares += _exact(np.hstack([(xf * xf).T @ mb, mf.T @ (xb * xb)]))
        self.documents += len(doc_ids)
        self._keep_raw(doc_ids, x, m)
        return self

    def _keep_raw(self, doc_ids, x, m) -> None:
        if self.raw is None or self.documents > EXACT_MAX_DOCUMENTS:
            self.raw = None
            return
        ids, units, present = self.raw
        m = np.ones(x.shape, dtype=bool) if m is None else m
        self.raw = (ids + list(doc_ids), np.vstack([units, x]), np.vstack([present, m]))

    @staticmethod
    def _check_bounds(documents: int, largest: int) -> None:
        if documents * largest * largest >= _INT64:
            raise OverflowError(
                f"{documents:,} documents of scores up to {largest:,} units overflow the int64 sums of "
                "PairSums (documents x largest^2 must stay below 2^63); split the comparison"
            )

    # -- merging ------------------------------------------------------------

    def merge(self, other: PairSums) -> PairSums:
        """Add `other`'s documents (none of which may be in this one)."""
        if other.against != self.against:
            raise ValueError(f"sums against {other.against!r} cannot join sums against {self.against!r}")
        self._include(other.systems)
        if other.systems != self.systems:
            widened = other.copy()
            widened._include(self.systems)
            other = widened
        self._check_bounds(self.documents + other.documents, max(self.largest, other.largest))
        if other.documents == 0:
            return self
        if self.documents == 0:
            self._take(other)
            return self
        if (self.shared is None) != (other.shared is None):
            if self.shared is None:
                self._make_sparse()
            else:
                other = other.copy()
                other._make_sparse()
        self.largest = max(self.largest, other.largest)
        self.count += other.count
        self.total += other.total
        self.squares += other.squares
        self.products += other.products
        if self.shared is not None:
            self.shared += other.shared
            self.sums += other.sums
            self.sum_squares += other.sum_squares
        self.documents += other.documents
        if self.raw is not None and other.raw is not None and self.documents <= EXACT_MAX_DOCUMENTS:
            (ids, units, present), (ids2, units2, present2) = self.raw, other.raw
            self.raw = (ids + ids2, np.vstack([units, units2]), np.vstack([present, present2]))
        else:
            self.raw = None
        return self

    def _take(self, other: PairSums) -> None:
        for name in self.__slots__:
            value = getattr(other, name)
            setattr(self, name, value.copy() if isinstance(value, np.ndarray) else value)
        if other.raw is not None:
            ids, units, present = other.raw
            self.raw = (list(ids), units.copy(), present.copy())

    def copy(self) -> PairSums:
        twin = PairSums(against=self.against)
        twin._take(self)
        return twin

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state):
        for name, value in state.items():
            setattr(self, name, value)

    @property
    def nbytes(self) -> int:
        """Bytes held in arrays (what the accumulator costs)."""
        arrays = [
            self.count,
            self.total,
            self.squares,
            self.products,
            self.shared,
            self.sums,
            self.sum_squares,
        ]
        if self.raw is not None:
            arrays += self.raw[1:]
        return sum(a.nbytes for a in arrays if a is not None)

    # -- reading ------------------------------------------------------------

    def pair_sums(self, a, b):
        """(n, sum a, sum b, sum a^2, sum b^2, sum a b) over the documents both
        systems scored, for system indices (or index arrays) a and b (with
        `against`: b is the baseline's index)."""
        if self.against is not None and np.any(np.asarray(b) != self.index(self.against)):
            raise ValueError(f"these sums hold only the pairs against {self.against!r}")
        column = 0 if self.against is not None else b
        if self.shared is None:
            n = np.full(np.shape(a), self.documents, dtype=np.int64)
            sa, sb, qa, qb = self.total[a], self.total[b], self.squares[a], self.squares[b]
        elif self.against is not None:
            n = self.shared[a, 0]
            sa, sb, qa, qb = self.sums[a, 0], self.sums[a, 1], self.sum_squares[a, 0], self.sum_squares[a, 1]
        else:
            n = self.shared[a, b]
            sa, sb, qa, qb = self.sums[a, b], self.sums[b, a], self.sum_squares[a, b], self.sum_squares[b, a]
        values = (n, sa, sb, qa, qb, self.products[a, column])
        return tuple(int(v) for v in values) if np.ndim(a) == 0 else values

    def index(self, system: str) -> int:
        k = int(np.searchsorted(self.systems, system))
        if k == len(self.systems) or self.systems[k] != system:
            raise KeyError(f"system {system!r} is not among the {len(self.systems)} systems of these sums")
        return k


def _widen_columns(array: np.ndarray, old: np.ndarray, size: int) -> np.ndarray:
    """A per-system vector (or documents x systems matrix) with `size` system
    columns, the old ones at positions `old`, zeros elsewhere."""
    out = np.zeros(array.shape[:-1] + (size,), dtype=array.dtype)
    out[..., old] = array
    return out


def _widen_rows(array: np.ndarray | None, old: np.ndarray, size: int) -> np.ndarray | None:
    """A systems x k matrix (a baseline's columns) widened in its rows (None stays None)."""
    if array is None:
        return None
    out = np.zeros((size,) + array.shape[1:], dtype=array.dtype)
    out[old] = array
    return out


def _widen_square(array: np.ndarray | None, old: np.ndarray, size: int) -> np.ndarray | None:
    """A systems x systems matrix widened the same way in both axes (None stays None)."""
    if array is None:
        return None
    out = np.zeros((size, size), dtype=array.dtype)
    out[np.ix_(old, old)] = array
    return out


def _exact_blocks(rows: int, largest: int) -> list[slice]:
    """Row blocks whose products sum to integers below 2^53 (so BLAS is exact)."""
    if largest * largest >= _EXACT_DOUBLE:
        raise OverflowError(f"scores of {largest:,} units are too large for exact sums (at most 2^26)")
    per_block = min(4096, (_EXACT_DOUBLE - 1) // max(1, largest * largest))
    return [slice(start, start + per_block) for start in range(0, rows, per_block)]


def _exact(product: np.ndarray) -> np.ndarray:
    """A matrix product of integers (exact in doubles) as int64."""
    return product.astype(np.int64)


# ------------------------------------------------------------------ the tests


class PairedResult(NamedTuple):
    """One paired comparison of system A with system B; scores on the 0-1 scale;
    None where undefined (no documents; one document has no spread)."""

    documents: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None  # mean_a - mean_b over the documents both scored
    ci_low: float | None  # the t interval of the difference
    ci_high: float | None
    effect_size: float | None  # d_z = difference / sd(d), +-inf when every d_i is the same
    statistic: float | None  # t = d_z sqrt(n)
    p_value: float | None  # two-sided, of the sign-flip test (exact or by Student's t)
    p_floor: float | None  # smallest_p(documents): no data could give a smaller p_value
    method: str | None  # EXACT or STUDENT_T


RESULT_FIELDS = PairedResult._fields


def paired_tests(sums: PairSums, a, b, confidence: float = 95.0) -> dict[str, np.ndarray]:
    """The paired test of systems a against b (index arrays into sums.systems), for
    every pair at once: a dict of the PairedResult fields, one array each (float
    arrays with NaN where the field is undefined; `method` an object array).

    Example (A is 0.1 better on each of 3 documents: all 8 sign patterns, 2 of
    which reach |sum d|, so p = 1/4; the spread is 0, so t is infinite):
        >>> s = PairSums().add(["d1", "d2", "d3"], ["A", "B"], [[50_000, 40_000], [60_000, 50_000], [70_000, 60_000]])
        >>> r = paired_result(s, "A", "B")
        >>> round(r.difference, 5), r.ci_low == r.ci_high, r.statistic, r.p_value, r.method
        (0.1, True, inf, 0.25, 'exact sign-flip')
    """
    check_confidence(confidence)
    a, b = np.atleast_1d(np.asarray(a, dtype=np.intp)), np.atleast_1d(np.asarray(b, dtype=np.intp))
    if len(a) <= _PAIRS_PER_CHUNK:
        return _paired_tests(sums, a, b, confidence)
    parts = [
        _paired_tests(
            sums, a[start : start + _PAIRS_PER_CHUNK], b[start : start + _PAIRS_PER_CHUNK], confidence
        )
        for start in range(0, len(a), _PAIRS_PER_CHUNK)
    ]
    return {name: np.concatenate([part[name] for part in parts]) for name in RESULT_FIELDS}


_PAIRS_PER_CHUNK = 1 << 16  # bounds the temporary arrays of one paired_tests call


def _paired_tests(sums: PairSums, a: np.ndarray, b: np.ndarray, confidence: float) -> dict[str, np.ndarray]:
    n, sa, sb, qa, qb, ab = sums.pair_sums(a, b)
    total = sa - sb  # D, exact
    square = qa + qb - 2 * ab  # Q, exact
    # n Q - D^2 = n (n - 1) var(d), exactly (Python integers: n Q can pass 2^63)
    spread = (n.astype(object) * square.astype(object) - total.astype(object) ** 2).astype(np.float64)
    nf = n.astype(np.float64)
    out = {name: np.full(n.shape, np.nan) for name in RESULT_FIELDS}
    out["documents"] = n.copy()
    out["method"] = np.full(n.shape, None, dtype=object)
    some = n > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = nf * SCORE_UNITS
        out["mean_a"] = np.where(some, sa / scale, np.nan)
        out["mean_b"] = np.where(some, sb / scale, np.nan)
        out["difference"] = np.where(some, total / scale, np.nan)
        spread_ok = n > 1
        root = np.sqrt(spread)
        # t = D sqrt(n - 1) / sqrt(n Q - D^2); both 0: no difference at all, t undefined
        t = np.where(root > 0, total * np.sqrt(nf - 1) / root, np.sign(total) * np.inf)
        t = np.where(spread_ok & ((root > 0) | (total != 0)), t, np.nan)
        out["statistic"] = t
        out["effect_size"] = t / np.sqrt(nf)
        standard_error = root / (nf * np.sqrt(nf - 1) * SCORE_UNITS)
    distinct, where = np.unique(n[spread_ok], return_inverse=True)
    if len(distinct):
        upper = student_t.quantile(1 - (1 - confidence / 100) / 2, distinct - 1)
        half_width = upper[where.reshape(-1)] * standard_error[spread_ok]
        out["ci_low"][spread_ok] = out["difference"][spread_ok] - half_width
        out["ci_high"][spread_ok] = out["difference"][spread_ok] + half_width
    with np.errstate(under="ignore"):  # smallest_p of every n, at once
        floor = np.maximum(np.power(2.0, 1.0 - np.maximum(n, 1)), sys.float_info.min)
    out["p_floor"] = np.where(some, floor, np.nan)

    # p: exact where the documents are at hand and few, else Student's t
    exact = some & (n <= EXACT_MAX_DOCUMENTS) & (sums.raw is not None)
    by_t = some & ~exact & spread_ok
    out["method"][exact] = EXACT
    out["method"][by_t] = STUDENT_T
    if exact.any():
        _, units, present = sums.raw
        both = present[:, a[exact]] & present[:, b[exact]]
        differences = np.where(both, units[:, a[exact]] - units[:, b[exact]], 0).T
        out["p_value"][exact] = exact_sign_flip_p(differences)
    if by_t.any():
        no_difference = by_t & (total == 0)
        p = np.ones(n.shape)
        rest = by_t & ~no_difference
        if rest.any():
            p[rest] = np.maximum(student_t.two_sided_p(t[rest], nf[rest] - 1), out["p_floor"][rest])
        out["p_value"][by_t] = p[by_t]
    one = some & (n == 1) & ~exact  # one document: both sign patterns reach |d|
    out["p_value"][one] = 1.0
    out["method"][one] = EXACT
    return out


def result_rows(columns: dict[str, np.ndarray]) -> list[PairedResult]:
    """`paired_tests`' columns as PairedResult rows (NaN -> None)."""

    def cell(value):
        if value is None:
            return None
        value = float(value)
        return None if math.isnan(value) else value

    count = len(columns["documents"])
    fields = [[cell(v) for v in columns[name]] for name in RESULT_FIELDS[1:-1]]
    return [
        PairedResult(int(columns["documents"][i]), *(f[i] for f in fields), columns["method"][i])
        for i in range(count)
    ]


def paired_result(sums: PairSums, system_a: str, system_b: str, confidence: float = 95.0) -> PairedResult:
    """The paired test of one pair of systems, by name."""
    (result,) = result_rows(paired_tests(sums, [sums.index(system_a)], [sums.index(system_b)], confidence))
    return result


def paired_significance(
    doc_ids: Sequence[str], scores_a: Sequence[float], scores_b: Sequence[float], confidence: float = 95.0
) -> PairedResult:
    """The paired test of two systems' scores (0-1 scale) on the same documents, in one call.

    Example (identical systems: no difference, nothing significant):
        >>> r = paired_significance(["d1", "d2"], [0.5, 0.1], [0.5, 0.1])
        >>> r.difference, r.ci_low, r.ci_high, r.p_value
        (0.0, 0.0, 0.0, 1.0)
    """
    if not len(doc_ids) == len(scores_a) == len(scores_b):
        raise ValueError("doc_ids, scores_a and scores_b must have the same length")
    if len(set(doc_ids)) != len(doc_ids):
        raise ValueError("doc_ids must be distinct: a document enters a paired test once")
    units = np.stack([units_of(scores_a), units_of(scores_b)], axis=1).reshape(len(doc_ids), 2)
    sums = PairSums(["a", "b"])
    for start in range(0, len(doc_ids), 4096):
        sums.add(doc_ids[start : start + 4096], ["a", "b"], units[start : start + 4096])
    return paired_result(sums, "a", "b", confidence)


# --------------------------------------------------- the exact sign-flip test


@lru_cache(maxsize=32)
def _sign_patterns(k: int) -> np.ndarray:
    """All 2^k patterns of k signs +-1, one per row."""
    bits = (np.arange(2**k)[:, None] >> np.arange(k)) & 1
    return (1 - 2 * bits).astype(np.int64)


def exact_sign_flip_p(differences) -> np.ndarray:
    """The exact two-sided sign-flip p-value of each row of integer differences:

        p = #{s in {-1, 1}^n : |sum_i s_i d_i| >= |sum_i d_i|} / 2^n.

    The 2^n sums are those of two halves, L (first n//2 documents) and R (the
    rest), 2^(n/2) sums each.  The sums are symmetric about 0 (s and -s), so for
    T = |sum d| > 0 the count is twice #{(l, r) : r >= T - l}, found for all l at
    once by binary search in the sorted R, for every row at once (each row's sums
    shifted into a band of its own).  For T = 0 every pattern counts: p = 1.
    Zeros in a row (documents a pair did not share) leave p unchanged.  Sums are
    integers held exactly in doubles.

    Example (d = 3, 1, 2: of the 8 patterns only +++ and --- reach |sum| = 6;
    d = 5, -5, 1: every pattern's sum is odd, so each reaches 1):
        >>> exact_sign_flip_p([[3, 1, 2], [0, 0, 0], [5, -5, 1]]).tolist()
        [0.25, 1.0, 1.0]
    """
    d = np.atleast_2d(np.asarray(differences, dtype=np.int64))
    rows, n = d.shape
    if n > 40:
        raise ValueError(f"exact enumeration of 2^{n} sign patterns is not offered; at most 2^40")
    target = np.abs(d.sum(axis=1))
    p = np.ones(rows)
    test = np.flatnonzero(target > 0)
    if not len(test):
        return p
    half = n // 2
    left_signs, right_signs = (_sign_patterns(k).astype(np.float64) for k in (half, n - half))
    width = 2 * int(np.abs(d).sum(axis=1).max()) + 2  # a row's sums and queries span less than this
    chunk = max(1, min((1 << 20) // len(right_signs), (_EXACT_DOUBLE // 2) // width))
    if width * 2 >= _EXACT_DOUBLE:
        raise OverflowError("differences too large for exact enumeration in doubles")
    for start in range(0, len(test), chunk):
        block = test[start : start + chunk]
        x = d[block].astype(np.float64)
        left = np.sort(x[:, :half] @ left_signs.T, axis=1)  # rows x 2^half, each row ascending
        right = np.sort(x[:, half:] @ right_signs.T, axis=1)
        # queries T - l, ascending in each row and, with the bands, across rows (fast binary search)
        offset = (np.arange(len(block), dtype=np.float64) * (2 * width))[:, None]
        queries = (target[block, None] - left[:, ::-1]) + offset
        found = np.searchsorted((right + offset).ravel(), queries.ravel(), side="left").reshape(queries.shape)
        row_end = ((np.arange(len(block)) + 1) * right.shape[1])[:, None]
        reaching = (row_end - found).sum(axis=1)  # r >= T - l, per row
        p[block] = 2 * reaching / float(2**n)
    return p


# ------------------------------------------------------------ adjustments


def _sorted_defined(p_values) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the defined p-values, smallest p first, ties in input order; their values)."""
    p = np.array([np.nan if v is None else v for v in p_values], dtype=np.float64)
    defined = np.flatnonzero(~np.isnan(p))
    order = defined[np.argsort(p[defined], kind="stable")]
    return order, p[order]


def holm_array(p_values) -> np.ndarray:
    """`holm` on a float array, NaN for undefined (vectorised: 500,000 pairs at once)."""
    p = np.asarray(p_values, dtype=np.float64)
    order, ranked = _sorted_defined(p)
    m = len(ranked)
    out = np.full(p.shape, np.nan)
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked)) if m else ranked
    return out


def benjamini_hochberg_array(p_values) -> np.ndarray:
    """`benjamini_hochberg` on a float array, NaN for undefined."""
    p = np.asarray(p_values, dtype=np.float64)
    order, ranked = _sorted_defined(p)
    m = len(ranked)
    scaled = m * ranked / np.arange(1, m + 1)
    out = np.full(p.shape, np.nan)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1]) if m else ranked
    return out


def _as_list(adjusted: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in adjusted.tolist()]


def holm(p_values: Iterable[float | None]) -> list[float | None]:
    """Holm's (1979) step-down adjusted p-values, controlling the family-wise error rate.

    With the m defined p-values sorted, p_(1) <= ... <= p_(m),

        p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).

    Undefined (None) p-values stay None and do not count in m.  After adjustment
    the smallest p of a family of m tests is m x the smallest unadjusted p.

    Example:
        >>> holm([0.01, 0.04, 0.03, None])
        [0.03, 0.06, 0.06, None]
    """
    return _as_list(holm_array([np.nan if p is None else p for p in p_values]))


def benjamini_hochberg(p_values: Iterable[float | None]) -> list[float | None]:
    """Benjamini and Hochberg's (1995) step-up adjusted p-values, controlling the
    false discovery rate (for independent or positively dependent tests).

    With the m defined p-values sorted, p_(1) <= ... <= p_(m),

        p~_(i) = min_{j >= i} min(1, m p_(j) / j).

    Example:
        >>> benjamini_hochberg([0.01, 0.04, 0.03, None])
        [0.03, 0.04, 0.04, None]
    """
    return _as_list(benjamini_hochberg_array([np.nan if p is None else p for p in p_values]))


ADJUSTMENTS = {"holm": holm, "bh": benjamini_hochberg}
ADJUSTMENT_ARRAYS = {"holm": holm_array, "bh": benjamini_hochberg_array}
