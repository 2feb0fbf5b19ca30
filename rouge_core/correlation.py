"""How well a metric agrees with human judgments: correlations, their intervals, tests.

The statistics of Lin (2004, section 6), of SummEval (Fabbri et al. 2021) and of
REALSumm (Bhandari et al. 2020), with the resampling of Deutsch, Dror and Roth
(2021, "A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods").

Scores come as matrices with one row per system and one column per document
(`X[i, j]`: the metric's score of system i's summary of document j; `Z[i, j]`:
the human judgment of it).  NaN marks a missing cell; a cell missing from
either matrix is left out of both.

Coefficients, for n paired values (x_i, y_i):

* Pearson  r = sum (x_i - mean x)(y_i - mean y) / sqrt(sum (x_i - mean x)^2 sum (y_i - mean y)^2)
* Spearman rho = Pearson r of the ranks (ties get the mean of the ranks they span)
* Kendall: with S = concordant - discordant pairs, n0 = n(n-1)/2, n1 and n2 the
  pairs tied in x and in y, and m the fewer of the two numbers of distinct values,
  tau_b = S / sqrt((n0 - n1)(n0 - n2)) and tau_c = 2S / (n^2 (m-1)/m).

All four are undefined (NaN) when x or y is constant or n < 2, as in scipy.stats.

Levels (Deutsch et al. 2021, section 3):

* system level: r(mean_j X[i, j], mean_j Z[i, j]) over the systems i;
* summary level: (1/D) sum_j r(X[:, j], Z[:, j]) over the D documents whose
  correlation is defined; documents with constant scores are counted as
  `undefined` and left out (or counted as 0 with `undefined="zero"`), and with
  `alpha` only the per-document correlations with p <= alpha are averaged (the
  REALSumm notebook's `print_ktau_matrix`), the others counted as `filtered`.

Random draws are counter-based: draw k of the stream named (seed, stream,
replicate) is a pure function of those values (`resampling.counter_uniforms`),
so every replicate can be recomputed alone, anywhere.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple, Sequence

import numpy as np

from rouge_core.resampling import counter_uniforms, percentile_interval

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
LEVELS = ("system", "summary")
RESAMPLING = ("documents", "systems", "both")
PERMUTATION_UNITS = ("documents", "systems", "both")
_PAIR_BUDGET = 1 << 22  # elements of one n x n x k block of pair signs (32 MB of float64)


# --------------------------------------------------------------------------
# Coefficients, one per column of two (n x k) matrices
# --------------------------------------------------------------------------


def column_correlations(
    x: np.ndarray, y: np.ndarray, methods: Sequence[str] = METHODS, *, p_values: bool = False
) -> dict:
    """Correlation of x[:, c] with y[:, c] for every column c, by every method.

    Rows where either value is NaN are left out of that column.

    Returns:
        {method: values (k,)}, or {method: (values, two-sided p-values)} with
        `p_values`; NaN where the correlation is undefined.

    Example:
        >>> x = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
        >>> y = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 3.0]])
        >>> for method, values in column_correlations(x, y).items():
        ...     print(method, values.round(4).tolist())
        pearson [0.5, nan]
        spearman [0.5, nan]
        kendall_b [0.3333, nan]
        kendall_c [0.3333, nan]
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.ndim == 1:
        x, y = x[:, None], y[:, None]
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in shape: {x.shape} vs {y.shape}")
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown correlation method(s) {sorted(unknown)}; choose from {METHODS}")
    n, k = x.shape
    step = max(1, _PAIR_BUDGET // max(1, n * n))
    blocks = [_block(x[:, c : c + step], y[:, c : c + step], methods, p_values) for c in range(0, k, step)]
    if not blocks:
        empty = np.zeros(0)
        return {m: (empty, empty) if p_values else empty for m in methods}
    if p_values:
        return {
            m: (np.concatenate([b[m][0] for b in blocks]), np.concatenate([b[m][1] for b in blocks]))
            for m in methods
        }
    return {m: np.concatenate([b[m] for b in blocks]) for m in methods}


class _Ties(NamedTuple):
    signs: np.ndarray  # (n, n, k) int8: sign(a_i - a_j) where both cells are valid, else 0
    group: np.ndarray  # (n, k): size of the tie group of a valid cell (itself included), 0 if invalid
    constant: np.ndarray  # (k,): every valid value equal


def _ties(a: np.ndarray, valid: np.ndarray, pair: np.ndarray) -> _Ties:
    above = a[:, None, :] > a[None, :, :]
    below = a[:, None, :] < a[None, :, :]
    signs = (above.astype(np.int8) - below) * pair  # int8: an eighth of float64's memory traffic
    group = (~above & ~below & pair).sum(axis=1)
    n = valid.sum(axis=0)
    return _Ties(signs, group, group.max(axis=0, initial=0) == n)


def _pearson_columns(x: np.ndarray, y: np.ndarray, valid: np.ndarray, n: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = np.where(valid, x - np.where(valid, x, 0).sum(axis=0) / n, 0)
        dy = np.where(valid, y - np.where(valid, y, 0).sum(axis=0) / n, 0)
        r = (dx * dy).sum(axis=0) / np.sqrt((dx * dx).sum(axis=0) * (dy * dy).sum(axis=0))
    return np.clip(r, -1, 1)


def _block(x: np.ndarray, y: np.ndarray, methods: Sequence[str], p_values: bool) -> dict:
    valid = ~(np.isnan(x) | np.isnan(y))
    x, y = np.where(valid, x, 0), np.where(valid, y, 0)
    n = valid.sum(axis=0)
    pair = valid[:, None, :] & valid[None, :, :]
    tx, ty = _ties(x, valid, pair), _ties(y, valid, pair)
    undefined = tx.constant | ty.constant | (n < 2)
    result = {}
    for method in methods:
        if method == "pearson":
            value = _pearson_columns(x, y, valid, n)
        elif method == "spearman":
            # Average rank: 1 + (values below) + (tie group - 1) / 2.
            rx = (tx.signs > 0).sum(axis=1) + (tx.group + 1) / 2
            ry = (ty.signs > 0).sum(axis=1) + (ty.group + 1) / 2
            value = _pearson_columns(rx, ry, valid, n)
        else:
            s, pairs, x_ties, y_ties = _kendall_counts(tx, ty, valid, n)
            with np.errstate(invalid="ignore", divide="ignore"):
                if method == "kendall_b":
                    value = s / np.sqrt(pairs - x_ties) / np.sqrt(pairs - y_ties)
                else:
                    # Distinct values: the sum over valid cells of 1 / (their tie group).
                    distinct = np.minimum(
                        np.where(valid, 1 / np.maximum(tx.group, 1), 0).sum(axis=0),
                        np.where(valid, 1 / np.maximum(ty.group, 1), 0).sum(axis=0),
                    ).round()
                    value = 2 * s / (n.astype(np.float64) ** 2 * (distinct - 1) / distinct)
            value = np.clip(value, -1, 1)
        value = np.where(undefined, np.nan, value)
        if p_values:
            result[method] = (value, _p_values(method, value, tx, ty, valid, n, undefined))
        else:
            result[method] = value
    return result


def _kendall_counts(tx: _Ties, ty: _Ties, valid: np.ndarray, n: np.ndarray):
    """S = concordant - discordant, the n0 pairs, and the pairs tied in x and in y."""
    s = (tx.signs * ty.signs).sum(axis=(0, 1), dtype=np.int64) / 2
    pairs = n * (n - 1) / 2
    x_ties = np.where(valid, tx.group - 1, 0).sum(axis=0) / 2
    y_ties = np.where(valid, ty.group - 1, 0).sum(axis=0) / 2
    return s, pairs, x_ties, y_ties


# --------------------------------------------------------------------------
# Two-sided p-values, as scipy.stats computes them (pearsonr, spearmanr, kendalltau):
# Pearson's and Spearman's from scipy.special.betainc (imported when a p-value is
# asked for, so `import rouge_core` does not load scipy), Kendall's written out
# --------------------------------------------------------------------------


def _p_values(method, value, tx, ty, valid, n, undefined) -> np.ndarray:
    p = np.full(value.shape, np.nan)
    if method in ("pearson", "spearman"):
        defined = ~undefined
        p[defined] = t_test_p_value(value[defined], n[defined])
        if method == "spearman":  # with two pairs r = +-1 and scipy gives p = NaN (df = 0)
            p[defined & (n == 2)] = np.nan
        return p
    s = _kendall_counts(tx, ty, valid, n)[0]
    for c in np.flatnonzero(~undefined):
        size, gx, gy = int(n[c]), tx.group[valid[:, c], c], ty.group[valid[:, c], c]
        p[c] = kendall_p_value(int(s[c]), size, gx, gy)
    return p


def t_test_p_value(r, n):
    """Two-sided p of Pearson (or Spearman) r from n pairs, element-wise over arrays.

    With df = n - 2 and t = r sqrt(df / (1 - r^2)), p = P(|T_df| >= |t|)
    = I_{1 - r^2}(df/2, 1/2), the regularized incomplete beta function
    (scipy.special.betainc, as scipy.stats.pearsonr); p = 1 for n = 2 (r = +-1 is
    certain), NaN for n < 2 or r NaN.

    Example:
        >>> round(float(t_test_p_value(0.8909090909090905, 10)), 9)   # scipy.stats.pearsonr: 0.000542144
        0.000542144
    """
    from scipy.special import betainc

    r, n = np.asarray(r, dtype=float), np.asarray(n, dtype=float)
    df = np.where(n > 2, n - 2, 1.0)
    p = betainc(df / 2, 0.5, np.clip(1 - r * r, 0.0, 1.0))
    return np.where((n < 2) | np.isnan(r), np.nan, np.where(n == 2, 1.0, p))


def kendall_p_value(s: int, n: int, x_groups: np.ndarray, y_groups: np.ndarray) -> float:
    """Two-sided p of Kendall's S = concordant - discordant, as scipy's method="auto".

    Without ties and with n <= 33 (or at most one discordant or concordant
    pair): exact, from the number of permutations of n with at most c inversions
    (Kendall 1970), p = 2 sum_{k <= c} M(n, k) / n! with c = min(discordant,
    concordant).  Otherwise the normal approximation with the tie-corrected
    variance, for tie groups of sizes t (u in y) and v0 = n(n-1)(2n+5):

        var S = (v0 - sum t(t-1)(2t+5) - sum u(u-1)(2u+5)) / 18
              + sum t(t-1) sum u(u-1) / (2 n(n-1))
              + sum t(t-1)(t-2) sum u(u-1)(u-2) / (9 n(n-1)(n-2))

    and p = erfc(|S| / sqrt(2 var S)).

    Args:
        s: concordant - discordant pairs.
        n: pairs of values.
        x_groups, y_groups: per value, the size of its tie group (itself included).
    """
    x_groups, y_groups = np.asarray(x_groups, np.int64), np.asarray(y_groups, np.int64)
    x_ties = int((x_groups - 1).sum()) // 2
    y_ties = int((y_groups - 1).sum()) // 2
    total = n * (n - 1) // 2
    if x_ties == 0 and y_ties == 0:
        discordant = (total - s) // 2
        if n <= 33 or min(discordant, total - discordant) <= 1:
            return _kendall_exact_p(n, min(discordant, total - discordant))
    m = n * (n - 1)
    x0, y0 = int(((x_groups - 1) * (x_groups - 2)).sum()), int(((y_groups - 1) * (y_groups - 2)).sum())
    x1, y1 = (
        int(((x_groups - 1) * (2 * x_groups + 5)).sum()),
        int(((y_groups - 1) * (2 * y_groups + 5)).sum()),
    )
    var = (m * (2 * n + 5) - x1 - y1) / 18 + (2 * x_ties * y_ties) / m + x0 * y0 / (9 * m * (n - 2))
    return math.erfc(abs(s) / math.sqrt(var) / math.sqrt(2))


def _kendall_exact_p(n: int, c: int) -> float:
    """2 P(at most c inversions) for a random permutation of n, capped at 1."""
    if n <= 2 or 4 * c == n * (n - 1):
        return 1.0
    counts = [1] + [0] * c  # M(1, k)
    for j in range(2, n + 1):  # M(j, k) = sum_{i < j} M(j-1, k-i)
        running, new = 0, []
        for k in range(c + 1):
            running += counts[k] - (counts[k - j] if k >= j else 0)
            new.append(running)
        counts = new
    return min(1.0, float(Fraction(2 * sum(counts), math.factorial(n))))


# --------------------------------------------------------------------------
# One pair of vectors
# --------------------------------------------------------------------------


def correlation(x: Sequence[float], y: Sequence[float], method: str) -> float:
    """One coefficient (see the module docstring) of two equally long vectors."""
    return float(column_correlations(x, y, (method,))[method][0])


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r.

    Example:
        >>> pearson([1, 2, 3, 4], [1, 3, 2, 4])
        0.8
    """
    return correlation(x, y, "pearson")


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson's r of the average ranks.

    Example:
        >>> spearman([1, 2, 3, 4], [10, 30, 20, 1000])
        0.8
    """
    return correlation(x, y, "spearman")


def kendall_tau(x: Sequence[float], y: Sequence[float], variant: str = "b") -> float:
    """Kendall's tau-b (default) or tau-c.

    Example (5 concordant and 1 discordant of the n0 = 6 pairs, no ties: S = 4):
        >>> round(kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]), 12)
        0.666666666667
    """
    if variant not in ("b", "c"):
        raise ValueError(f"Kendall's tau variant must be 'b' or 'c'; got {variant!r}")
    return correlation(x, y, f"kendall_{variant}")


# --------------------------------------------------------------------------
# System level and summary level
# --------------------------------------------------------------------------


class LevelCorrelation(NamedTuple):
    """A correlation at one level, with what went into it.

    `n`: systems correlated (system level) or per-document correlations
    averaged (summary level); `undefined`: documents whose correlation is
    undefined (constant scores, fewer than 2 systems); `filtered`: documents
    left out by the p <= alpha filter.
    """

    value: float
    n: int
    undefined: int
    filtered: int


def _paired(metric, human) -> tuple[np.ndarray, np.ndarray]:
    x, z = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    if x.ndim != 2 or x.shape != z.shape:
        raise ValueError(
            f"metric and human must be (systems x documents) matrices of one shape; got {x.shape}, {z.shape}"
        )
    missing = np.isnan(x) | np.isnan(z)
    return np.where(missing, np.nan, x), np.where(missing, np.nan, z)


def system_means(matrix: np.ndarray) -> np.ndarray:
    """Per system (row), the mean over the documents it has (NaN for none).

    The sums are exact (math.fsum, correctly rounded), so two systems whose
    scores are the same multiset get the same mean, in any order: a tie stays a
    tie for Spearman and Kendall.
    """
    means = np.full(len(matrix), np.nan)
    for i, row in enumerate(matrix):
        present = row[~np.isnan(row)]
        if len(present):
            means[i] = math.fsum(present.tolist()) / len(present)
    return means


def _check(level: str, undefined: str, alpha) -> None:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}; got {level!r}")
    if undefined not in ("exclude", "zero"):
        raise ValueError(f"undefined must be 'exclude' or 'zero'; got {undefined!r}")
    if alpha is not None and not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1]; got {alpha!r}")


def _summarize_documents(values: np.ndarray, p: np.ndarray | None, alpha, undefined: str):
    """Mean of per-document correlations along the last axis, with the counts."""
    defined = ~np.isnan(values)
    keep = defined.copy()
    if alpha is not None:
        keep &= p <= alpha  # NaN p (undefined) is never kept, as in the REALSumm notebook
    elif undefined == "zero":
        keep |= ~defined
    filled = np.where(defined, values, 0.0)
    count = keep.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(keep, filled, 0).sum(axis=-1) / count
    return mean, count, (~defined).sum(axis=-1), (defined & ~keep).sum(axis=-1)


def correlate(
    metric,
    human,
    level: str,
    methods: Sequence[str] = METHODS,
    *,
    alpha: float | None = None,
    undefined: str = "exclude",
) -> dict:
    """System- or summary-level correlations of a metric with human judgments.

    Args:
        metric, human: (systems x documents) scores, NaN for a missing cell.
        level: "system" (correlate the per-system means) or "summary" (correlate
            each document's scores across systems, then average over documents).
        methods: any of METHODS.
        alpha: summary level only: average only the per-document correlations
            whose two-sided p-value is <= alpha (the REALSumm notebook).
        undefined: summary level, without alpha: "exclude" documents whose
            correlation is undefined (the default) or count them as "zero".

    Returns:
        {method: LevelCorrelation}.

    Example (two documents; the second is constant in the metric, so undefined):
        >>> X = [[0.1, 0.5], [0.2, 0.5], [0.3, 0.5]]
        >>> Z = [[1.0, 2.0], [3.0, 1.0], [2.0, 3.0]]
        >>> correlate(X, Z, "summary", ["kendall_b"])["kendall_b"]
        LevelCorrelation(value=0.33333333333333337, n=1, undefined=1, filtered=0)
        >>> round(correlate(X, Z, "system", ["pearson"])["pearson"].value, 4)  # means .3 .35 .4 vs 1.5 2 2.5
        1.0
    """
    _check(level, undefined, alpha)
    x, z = _paired(metric, human)
    if level == "system":
        mx, mz = system_means(x), system_means(z)
        values = column_correlations(mx, mz, methods)
        n = int((~np.isnan(mx)).sum())
        return {m: LevelCorrelation(float(values[m][0]), n, 0, 0) for m in methods}
    values = column_correlations(x, z, methods, p_values=alpha is not None)
    result = {}
    for m in methods:
        v, p = values[m] if alpha is not None else (values[m], None)
        mean, count, undefined_count, filtered = _summarize_documents(v, p, alpha, undefined)
        result[m] = LevelCorrelation(float(mean), int(count), int(undefined_count), int(filtered))
    return result


# --------------------------------------------------------------------------
# Bootstrap intervals (Deutsch, Dror and Roth 2021)
# --------------------------------------------------------------------------


def resample_indices(n: int, replicates: int, seed: int, stream: str) -> np.ndarray:
    """(replicates x n) indices drawn uniformly with replacement from 0 .. n-1.

    Draw k of replicate r is floor(n u_k), u_k the k-th counter-based uniform of
    the stream "<seed>\\x1f<stream>\\x1f<r>".

    Example:
        >>> resample_indices(5, 2, seed=0, stream="documents").shape
        (2, 5)
    """
    out = np.empty((replicates, n), dtype=np.int64)
    for r in range(replicates):
        out[r] = np.minimum((counter_uniforms(f"{seed}\x1f{stream}\x1f{r}", n) * n).astype(np.int64), n - 1)
    return out


def _replicate_values(replicate, replicates: int, level, methods, alpha, undefined, chunk: int = 64) -> dict:
    """The correlation at `level` of every replicate r, whose matrices are `replicate(r)`."""
    out = {m: np.empty(replicates) for m in methods}
    for start in range(0, replicates, chunk):
        pairs = [replicate(r) for r in range(start, min(start + chunk, replicates))]
        if level == "system":
            mx = np.stack([system_means(x) for x, _ in pairs], axis=1)
            mz = np.stack([system_means(z) for _, z in pairs], axis=1)
            values = column_correlations(mx, mz, methods)
            for m in methods:
                out[m][start : start + len(pairs)] = values[m]
            continue
        # Summary level: every replicate's documents side by side, one column each.
        sx = np.concatenate([x for x, _ in pairs], axis=1)
        sz = np.concatenate([z for _, z in pairs], axis=1)
        values = column_correlations(sx, sz, methods, p_values=alpha is not None)
        shape = (len(pairs), pairs[0][0].shape[1])
        for m in methods:
            v, p = values[m] if alpha is not None else (values[m], None)
            p = None if p is None else p.reshape(shape)
            out[m][start : start + len(pairs)] = _summarize_documents(v.reshape(shape), p, alpha, undefined)[
                0
            ]
    return out


class BootstrapInterval(NamedTuple):
    """A percentile interval and the replicates it came from (those with a defined value)."""

    low: float
    high: float
    replicates: int


def bootstrap_samples(
    metric,
    human,
    level: str,
    methods: Sequence[str] = METHODS,
    *,
    resample: str = "both",
    replicates: int = 1000,
    seed: int = 0,
    alpha: float | None = None,
    undefined: str = "exclude",
) -> dict:
    """The level's correlation on each bootstrap replicate (NaN where undefined).

    Replicate r draws, with replacement, the systems (rows) and/or the
    documents (columns) of the (systems x documents) matrices, with
    `resample_indices(..., stream="systems" / "documents")`, and recomputes the
    correlation on the resampled matrices: Deutsch et al.'s BOOT-SYSTEMS,
    BOOT-INPUTS and BOOT-BOTH.  A system drawn twice is two systems.

    Returns:
        {method: values (replicates,)}.
    """
    _check(level, undefined, alpha)
    if resample not in RESAMPLING:
        raise ValueError(f"resample must be one of {RESAMPLING}; got {resample!r}")
    x, z = _paired(metric, human)
    n, d = x.shape
    rows = (
        resample_indices(n, replicates, seed, "systems")
        if resample in ("systems", "both")
        else np.broadcast_to(np.arange(n), (replicates, n))
    )
    cols = (
        resample_indices(d, replicates, seed, "documents")
        if resample in ("documents", "both")
        else np.broadcast_to(np.arange(d), (replicates, d))
    )

    def replicate(r):
        return x[rows[r]][:, cols[r]], z[rows[r]][:, cols[r]]

    return _replicate_values(replicate, replicates, level, methods, alpha, undefined)


def bootstrap_intervals(
    metric,
    human,
    level: str,
    methods: Sequence[str] = METHODS,
    *,
    confidence: float = 95.0,
    **options,
) -> dict:
    """Percentile bootstrap intervals: {method: BootstrapInterval}.

    The interval is `resampling.percentile_interval` of the replicates whose
    correlation is defined (`replicates` counts them); options as in
    `bootstrap_samples`.
    """
    result = {}
    for m, values in bootstrap_samples(metric, human, level, methods, **options).items():
        defined = values[~np.isnan(values)]
        low, high = percentile_interval(defined, confidence) if len(defined) else (math.nan, math.nan)
        result[m] = BootstrapInterval(low, high, len(defined))
    return result


# --------------------------------------------------------------------------
# Is metric X better than metric Y?  Permutation test (Deutsch et al. 2021)
# --------------------------------------------------------------------------


class PermutationResult(NamedTuple):
    """delta = r(X, Z) - r(Y, Z) observed; p = share of permutations with delta* >= delta."""

    delta: float
    p_value: float
    replicates: int


def _standardize(a: np.ndarray) -> np.ndarray:
    return (a - np.nanmean(a)) / np.nanstd(a)


def permutation_coins(shape: tuple[int, int], replicate: int, seed: int, unit: str) -> np.ndarray:
    """The (systems x documents) swap mask of one permutation: a fair coin per unit.

    unit "both": one coin per cell (row-major order), "systems": one per row,
    "documents": one per column; coin k is u_k < 1/2 for the stream
    "<seed>\\x1fpermute-<unit>\\x1f<replicate>".
    """
    n, d = shape
    count = {"both": n * d, "systems": n, "documents": d}[unit]
    coins = counter_uniforms(f"{seed}\x1fpermute-{unit}\x1f{replicate}", count) < 0.5
    if unit == "both":
        return coins.reshape(n, d)
    return np.broadcast_to(coins[:, None] if unit == "systems" else coins[None, :], (n, d))


def permutation_test(
    metric_x,
    metric_y,
    human,
    level: str,
    methods: Sequence[str] = METHODS,
    *,
    unit: str = "both",
    replicates: int = 1000,
    seed: int = 0,
    alpha: float | None = None,
    undefined: str = "exclude",
) -> dict:
    """One-sided test of H0: r(X, Z) <= r(Y, Z) against H1: X correlates better.

    X and Y are first standardized ((a - mean) / std over all their cells), which
    changes none of the correlations but puts the two on one scale; then each
    permutation swaps X's and Y's score in every cell whose coin
    (`permutation_coins`) comes up, per cell (PERM-BOTH), per system or per
    document, and recomputes delta* = r(X*, Z) - r(Y*, Z).
    p = #{delta* >= delta} / #{defined delta*}.

    Returns:
        {method: PermutationResult}.
    """
    _check(level, undefined, alpha)
    if unit not in PERMUTATION_UNITS:
        raise ValueError(f"unit must be one of {PERMUTATION_UNITS}; got {unit!r}")
    x, z = _paired(metric_x, human)
    y, _ = _paired(metric_y, human)
    missing = np.isnan(x) | np.isnan(y)
    x, y, z = (np.where(missing, np.nan, a) for a in (x, y, z))
    x, y = _standardize(x), _standardize(y)

    def level_values(a):
        return {
            m: c.value for m, c in correlate(a, z, level, methods, alpha=alpha, undefined=undefined).items()
        }

    observed_x, observed_y = level_values(x), level_values(y)

    def swapped(keep_x: bool):
        def replicate(r):
            coins = permutation_coins(x.shape, r, seed, unit)
            return (np.where(coins, y, x) if keep_x else np.where(coins, x, y)), z

        return _replicate_values(replicate, replicates, level, methods, alpha, undefined)

    permuted_x, permuted_y = swapped(True), swapped(False)
    result = {}
    for m in methods:
        delta = observed_x[m] - observed_y[m]
        samples = permuted_x[m] - permuted_y[m]
        defined = samples[~np.isnan(samples)]
        p = float((defined >= delta).sum() / len(defined)) if len(defined) else math.nan
        result[m] = PermutationResult(float(delta), p, len(defined))
    return result
