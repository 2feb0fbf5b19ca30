"""Student's t distribution in numpy alone: two-sided tail probabilities and quantiles.

The paired t-test of `rouge_core.significance` needs, for many pairs of systems at
once, P(|T| >= t) for T ~ Student's t with `df` degrees of freedom, down to the
smallest p-value a double can hold, and the quantile of the confidence interval.
scipy has both, but it is only a test dependency of this project; the tests
compare these functions with scipy.stats.t.

The tail is a regularized incomplete beta function (Abramowitz and Stegun 26.7.1):

    P(|T| >= t) = I_x(df/2, 1/2),   x = df / (df + t^2),

and I_x(a, b) is evaluated by its continued fraction (Abramowitz and Stegun
26.5.8; Press et al., Numerical Recipes, 3rd ed., section 6.4) with the modified
Lentz method, vectorised over all arguments at once.  The fraction converges
quickly for x < (a + 1) / (a + b + 2); above that, I_x(a, b) = 1 - I_{1-x}(b, a).
Both x and 1 - x are formed from t directly, so neither is a difference of
nearly equal numbers, and the small tail is computed in the branch that has no
cancellation: its relative accuracy is ~1e-13 down to 1e-300 (tested).
"""

from __future__ import annotations

import math

import numpy as np

_TINY = 1e-300  # keeps Lentz's denominators away from zero
_EPS = 1e-16  # relative change of the fraction at which it has converged
_MAX_TERMS = 100_000  # the fraction needs about sqrt(max(a, b)) terms; df = 1e9 needs ~3e4


def _stirling_remainder(z: float) -> float:
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2), for z >= 15 (series to 1/z^9,
    truncation error below 1e-16)."""
    w = 1.0 / (z * z)
    return (1 / 12 - w * (1 / 360 - w * (1 / 1260 - w * (1 / 1680 - w / 1188)))) / z


def log_beta(a: float, b: float) -> float:
    """log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b).

    For a large argument (df = 11,489 gives lgamma ~ 4e4) the plain difference of
    lgammas loses ~1e-11 to cancellation, which would become a relative error of
    every p-value; there the difference lgamma(big) - lgamma(big + small) is
    taken from Stirling's series, where the large terms cancel algebraically.

    Example (B(3, 4) = 2! 3! / 6! = 1/60):
        >>> abs(log_beta(3, 4) + math.log(60)) < 1e-14
        True
    """
    small, big = min(a, b), max(a, b)
    if big < 15:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    difference = (
        -small * math.log(big)
        - (big + small - 0.5) * math.log1p(small / big)
        + small
        + _stirling_remainder(big)
        - _stirling_remainder(big + small)
    )
    return math.lgamma(small) + difference


def _lbeta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`log_beta` of every element, computed once per distinct (a, b)."""
    pairs, inverse = np.unique(np.stack([a, b]), axis=1, return_inverse=True)
    values = np.array([log_beta(p, q) for p, q in pairs.T])
    return values[inverse.reshape(-1)]


def _beta_fraction(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The continued fraction of I_x(a, b) (Numerical Recipes' betacf), for every element."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d.copy()
    active = np.ones(x.shape, dtype=bool)
    for m in range(1, _MAX_TERMS + 1):
        if not active.any():
            return h
        idx = np.flatnonzero(active)
        xa, aa, ba = x[idx], a[idx], b[idx]
        ca, da, ha = c[idx], d[idx], h[idx]
        m2 = 2 * m
        for coefficient in (
            m * (ba - m) * xa / ((qam[idx] + m2) * (aa + m2)),
            -(aa + m) * (qab[idx] + m) * xa / ((aa + m2) * (qap[idx] + m2)),
        ):
            da = 1.0 + coefficient * da
            da = 1.0 / np.where(np.abs(da) < _TINY, _TINY, da)
            ca = 1.0 + coefficient / ca
            ca = np.where(np.abs(ca) < _TINY, _TINY, ca)
            delta = da * ca
            ha = ha * delta
        c[idx], d[idx], h[idx] = ca, da, ha
        active[idx] = np.abs(delta - 1.0) > _EPS
    raise ArithmeticError(f"the incomplete beta fraction did not converge in {_MAX_TERMS} terms")


def _incomplete_beta(x, one_minus_x, log_x, log_one_minus_x, a, b) -> np.ndarray:
    """I_x(a, b) for 0 <= x <= 1, given x, 1 - x and their logarithms (each computed
    without cancellation: log x near x = 1 is not log of a rounded x)."""
    out = np.empty_like(x)
    zero, one = x <= 0, one_minus_x <= 0
    out[zero], out[one] = 0.0, 1.0
    inner = ~(zero | one)
    direct = inner & (x < (a + 1.0) / (a + b + 2.0))
    mirrored = inner & ~direct
    for mask, p, q, u, log_u, log_v in (
        (direct, a, b, x, log_x, log_one_minus_x),
        (mirrored, b, a, one_minus_x, log_one_minus_x, log_x),
    ):
        if mask.any():
            pm, qm, um = p[mask], q[mask], u[mask]
            log_front = pm * log_u[mask] + qm * log_v[mask] - _lbeta(pm, qm)
            value = np.exp(log_front) * _beta_fraction(um, pm, qm) / pm
            out[mask] = value if mask is direct else 1.0 - value
    return out


def two_sided_p(t, df) -> np.ndarray:
    """P(|T| >= |t|) for T ~ Student's t with `df` (> 0) degrees of freedom.

    `t` may be infinite (p = 0); arrays broadcast.

    Example (scipy.stats.t.sf(2.0, 10) * 2 = 0.07338803477074...):
        >>> round(float(two_sided_p(2.0, 10)), 14)
        0.07338803477074
    """
    t, df = np.broadcast_arrays(np.abs(np.asarray(t, dtype=np.float64)), np.asarray(df, dtype=np.float64))
    shape = t.shape
    t, df = t.ravel(), df.ravel()
    if np.any(~(df > 0)) or np.any(np.isnan(t)):
        raise ValueError("two_sided_p needs df > 0 and t not NaN")
    # x = df / (df + t^2) and 1 - x = t^2 / (df + t^2), each without cancellation;
    # for |t| beyond 1e150, t^2 overflows and the tail is 0 in doubles anyway.
    # log x = -log1p(t^2 / df) and log(1 - x) = -log1p(df / t^2) keep their relative
    # accuracy where x or 1 - x is near 1.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        square = t * t
        x = np.where(np.isinf(square), 0.0, df / (df + square))
        one_minus_x = np.where(np.isinf(square), 1.0, square / (df + square))
        log_x = -np.log1p(square / df)
        log_one_minus_x = -np.log1p(df / square)
    p = _incomplete_beta(x, one_minus_x, log_x, log_one_minus_x, df / 2.0, np.full_like(df, 0.5))
    return np.clip(p, 0.0, 1.0).reshape(shape)


def quantile(probability: float, df) -> float | np.ndarray:
    """The t with P(T <= t) = probability, for 1/2 <= probability < 1 (the upper
    quantile of a two-sided interval), by bisection on `two_sided_p` to the last bit;
    `df` may be an array (all bisected at once).

    Example (the t table's 2.228; scipy.stats.t.ppf gives 2.2281388519649, whose
    own tail scipy.stats.t.sf puts at 0.0250000000009, 1.8e-12 too high):
        >>> q = quantile(0.975, 10)
        >>> round(q, 9), abs(float(two_sided_p(q, 10)) / 0.05 - 1) < 1e-14
        (2.228138852, True)
    """
    dfs = np.atleast_1d(np.asarray(df, dtype=np.float64))
    if not 0.5 <= probability < 1 or not np.all(dfs > 0):
        raise ValueError(f"quantile needs 1/2 <= probability < 1 and df > 0, got {probability!r}, {df!r}")
    missing = sorted({d for d in dfs.tolist() if (probability, d) not in _QUANTILES})
    if missing:
        if len(_QUANTILES) + len(missing) > _QUANTILES_KEPT:
            _QUANTILES.clear()
        _QUANTILES.update(((probability, d), q) for d, q in zip(missing, _bisect(probability, np.array(missing)).tolist()))
    high = np.array([_QUANTILES[probability, d] for d in dfs.tolist()])
    return float(high[0]) if np.ndim(df) == 0 else high


# A run asks for the same quantile once per metric and measure (every pair of systems
# has the same documents): each is bisected once per process.  A quantile costs
# 0.06-0.1 CPU-s (df from 2,000 to 100,000; 24 per run with 8 metrics).
_QUANTILES: dict = {}
_QUANTILES_KEPT = 4096


def _bisect(probability: float, dfs: np.ndarray) -> np.ndarray:
    target = 2.0 * (1.0 - probability)  # the two-sided tail at the quantile
    low, high = np.zeros_like(dfs), np.ones_like(dfs)
    while (short := two_sided_p(high, dfs) > target).any():
        low, high = np.where(short, high, low), np.where(short, 2.0 * high, high)
    while True:
        middle = (low + high) / 2
        open_ = (middle != low) & (middle != high)
        if not open_.any():
            break
        above = two_sided_p(np.where(open_, middle, high), dfs) > target
        low = np.where(open_ & above, middle, low)
        high = np.where(open_ & ~above, middle, high)
    return high
