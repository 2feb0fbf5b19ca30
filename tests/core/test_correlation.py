"""rouge_core.correlation against scipy.stats and against resampling written out here.

The reference for every coefficient and p-value is scipy.stats; the reference for
the bootstrap and the permutation test is a direct loop below, with its own
counter-based draws (blake2b + splitmix64 in Python integers), so that neither
the draws nor the statistics come from the code under test.
"""

import hashlib
import math

import numpy as np
import pytest
from scipy import stats

from rouge_core import correlation as corr

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def scipy_value(x, y, method):
    if method == "pearson":
        return stats.pearsonr(x, y)
    if method == "spearman":
        return stats.spearmanr(x, y)
    return stats.kendalltau(x, y, variant=method[-1])


def scipy_or_nan(x, y, method):
    """scipy's (value, p), NaN for constant input (scipy warns and returns NaN or raises)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan, math.nan
    with np.errstate(all="ignore"):
        result = scipy_value(x, y, method)
    return float(result[0]), float(result[1])


def random_pairs(rng, count=300):
    """Vectors of many sizes, some with many ties, some continuous."""
    for _ in range(count):
        n = int(rng.integers(2, 60))
        if rng.random() < 0.5:
            levels = int(rng.integers(2, 6))
            x, y = rng.integers(0, levels, n).astype(float), rng.integers(0, levels, n).astype(float)
        else:
            x = rng.normal(size=n)
            y = x * rng.random() + rng.normal(size=n)
        yield x, y


@pytest.mark.parametrize("method", corr.METHODS)
def test_coefficients_and_p_values_equal_scipy_with_and_without_ties(method):
    rng = np.random.default_rng(7)
    checked = 0
    for x, y in random_pairs(rng):
        expected, expected_p = scipy_or_nan(x, y, method)
        value, p = corr.column_correlations(x, y, (method,), p_values=True)[method]
        if math.isnan(expected):
            assert math.isnan(value[0]) and math.isnan(p[0])
            continue
        assert value[0] == pytest.approx(expected, abs=1e-12)
        assert p[0] == pytest.approx(expected_p, abs=1e-9, nan_ok=True)
        checked += 1
    assert checked > 250


def test_kendall_exact_p_value_path_equals_scipy():
    # No ties and n <= 33: scipy's "auto" takes the exact distribution.
    rng = np.random.default_rng(3)
    for n in (3, 4, 7, 12, 25, 33):
        x, y = rng.permutation(n).astype(float), rng.permutation(n).astype(float)
        result = stats.kendalltau(x, y)
        value, p = corr.column_correlations(x, y, ("kendall_b",), p_values=True)["kendall_b"]
        assert value[0] == pytest.approx(result.statistic, abs=1e-12)
        assert p[0] == pytest.approx(result.pvalue, abs=1e-12)


def test_pearson_p_values_equal_closed_forms_and_a_published_table():
    """Numbers that do not come from scipy: Student's t with 1 and 2 degrees of freedom
    has a closed form, and in r it is p = 1 - 2 asin|r| / pi (n = 3: P(|T_1| >= t) =
    1 - 2 atan(t) / pi with t = r / sqrt(1 - r^2)) and p = 1 - |r| (n = 4: P(|T_2| >= t)
    = 1 - t / sqrt(t^2 + 2) with t^2 = 2 r^2 / (1 - r^2)).  And the t table's
    two-sided 5% point for 8 degrees of freedom, 2.306 (e.g. Fisher and Yates), is
    r = t / sqrt(t^2 + 8) for n = 10 pairs."""
    r = np.array([0.0, 0.1, 0.5, -0.73, 0.99, 1.0])
    assert corr.t_test_p_value(r, np.full(r.shape, 3)) == pytest.approx(1 - 2 * np.arcsin(abs(r)) / math.pi, abs=1e-12)
    assert corr.t_test_p_value(r, np.full(r.shape, 4)) == pytest.approx(1 - abs(r), abs=1e-12)
    t = 2.306
    assert float(corr.t_test_p_value(t / math.sqrt(t * t + 8), 10)) == pytest.approx(0.05, abs=1e-4)
    assert float(corr.t_test_p_value(0.5, 2)) == 1.0
    assert math.isnan(corr.t_test_p_value(0.5, 1)) and math.isnan(corr.t_test_p_value(math.nan, 10))


def test_scalar_helpers():
    x, y = [0.1, 0.4, 0.2, 0.9, 0.4], [1, 3, 2, 5, 2]
    assert corr.pearson(x, y) == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert corr.spearman(x, y) == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert corr.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)
    assert corr.kendall_tau(x, y, "c") == pytest.approx(stats.kendalltau(x, y, variant="c")[0], abs=1e-12)
    with pytest.raises(ValueError):
        corr.kendall_tau(x, y, "a")


def test_constant_or_too_short_input_is_undefined():
    for method in corr.METHODS:
        assert math.isnan(corr.correlation([1, 1, 1], [1, 2, 3], method))
        assert math.isnan(corr.correlation([1, 2, 3], [2, 2, 2], method))
        assert math.isnan(corr.correlation([1], [2], method))


def test_missing_cells_are_left_out_of_the_pair():
    x = [0.1, np.nan, 0.3, 0.5, 0.2]
    y = [1.0, 2.0, np.nan, 4.0, 3.0]
    for method in corr.METHODS:
        expected = scipy_or_nan([0.1, 0.5, 0.2], [1.0, 4.0, 3.0], method)[0]
        assert corr.correlation(x, y, method) == pytest.approx(expected, abs=1e-12)


def judged_matrices(rng, systems=8, documents=12, constant_documents=(2, 7)):
    """A metric and a judgment matrix with ties and some constant documents."""
    human = rng.integers(1, 5, size=(systems, documents)).astype(float)
    metric = np.round(human * 0.1 + rng.normal(scale=0.15, size=(systems, documents)), 2)
    for j in constant_documents:
        metric[:, j] = 0.25
    return metric, human


def direct_summary_level(metric, human, method, alpha=None, zero=False):
    kept, undefined, filtered = [], 0, 0
    for j in range(metric.shape[1]):
        value, p = scipy_or_nan(metric[:, j], human[:, j], method)
        if math.isnan(value):
            undefined += 1
            if zero and alpha is None:
                kept.append(0.0)
        elif alpha is not None and not p <= alpha:
            filtered += 1
        else:
            kept.append(value)
    return (np.mean(kept) if kept else math.nan), len(kept), undefined, filtered


@pytest.mark.parametrize("method", corr.METHODS)
def test_levels_equal_a_direct_scipy_loop(method):
    metric, human = judged_matrices(np.random.default_rng(11))
    system = corr.correlate(metric, human, "system", (method,))[method]
    expected = scipy_or_nan(exact_means(metric), exact_means(human), method)[0]
    assert system.value == pytest.approx(expected, abs=1e-12) and system.n == 8
    for alpha in (None, 0.05, 0.5):
        for zero in (False, True):
            got = corr.correlate(
                metric, human, "summary", (method,), alpha=alpha, undefined="zero" if zero else "exclude"
            )[method]
            value, n, undefined, filtered = direct_summary_level(metric, human, method, alpha, zero)
            assert got.value == pytest.approx(value, abs=1e-12)
            assert (got.n, got.undefined, got.filtered) == (n, undefined, filtered)
            assert undefined == 2


def test_system_means_use_only_cells_present_in_both():
    metric = np.array([[0.1, 0.2, np.nan], [0.3, 0.1, 0.5], [0.2, 0.2, 0.2]])
    human = np.array([[1.0, 2.0, 5.0], [np.nan, 1.0, 4.0], [2.0, 3.0, 1.0]])
    got = corr.correlate(metric, human, "system", ("pearson",))["pearson"].value
    expected = stats.pearsonr([0.15, 0.3, 0.2], [1.5, 2.5, 2.0])[0]
    assert got == pytest.approx(expected, abs=1e-12)


# ----------------------------------------------------------------- resampling


def uniforms(key: str, count: int) -> list[float]:
    """Counter-based uniforms written out: splitmix64(blake2b_64(key) + k * gamma)."""
    base = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    out = []
    for k in range(count):
        z = (base + (k + 1) * GAMMA) & MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        out.append((z >> 11) * 2.0**-53)
    return out


def draws(n, replicate, seed, stream):
    return [int(u * n) for u in uniforms(f"{seed}\x1f{stream}\x1f{replicate}", n)]


def exact_means(matrix):
    return [math.fsum(row) / len(row) for row in matrix.tolist()]


def direct_level(metric, human, level, method, alpha=None):
    if level == "system":  # exact sums: equal score multisets give tied means
        return scipy_or_nan(exact_means(metric), exact_means(human), method)[0]
    return direct_summary_level(metric, human, method, alpha)[0]


@pytest.mark.parametrize("resample", corr.RESAMPLING)
@pytest.mark.parametrize("level", corr.LEVELS)
def test_bootstrap_equals_a_direct_loop_with_the_same_draws(level, resample):
    metric, human = judged_matrices(np.random.default_rng(5), systems=7, documents=9)
    replicates, seed = 40, 17
    methods = ("pearson", "kendall_b") if resample != "both" else corr.METHODS
    alpha = 0.3 if level == "summary" and resample == "systems" else None
    got = corr.bootstrap_samples(
        metric, human, level, methods, resample=resample, replicates=replicates, seed=seed, alpha=alpha
    )
    for r in range(replicates):
        rows = draws(7, r, seed, "systems") if resample != "documents" else list(range(7))
        cols = draws(9, r, seed, "documents") if resample != "systems" else list(range(9))
        m, h = metric[np.ix_(rows, cols)], human[np.ix_(rows, cols)]
        for method in methods:
            expected = direct_level(m, h, level, method, alpha)
            if math.isnan(expected):
                assert math.isnan(got[method][r])
            else:
                assert got[method][r] == pytest.approx(expected, abs=1e-12)
    intervals = corr.bootstrap_intervals(
        metric,
        human,
        level,
        methods,
        resample=resample,
        replicates=replicates,
        seed=seed,
        alpha=alpha,
        confidence=90,
    )
    for method in methods:
        values = np.sort(got[method][~np.isnan(got[method])])
        # 90%: the 5th and 95th percentiles, by the floor/ceil rule of percentile_interval.
        low = values[math.floor(0.05 * (len(values) - 1))]
        high = values[math.ceil(0.95 * (len(values) - 1))]
        assert intervals[method] == (low, high, len(values))


@pytest.mark.parametrize("unit", corr.PERMUTATION_UNITS)
@pytest.mark.parametrize("level", corr.LEVELS)
def test_permutation_test_equals_a_direct_loop_with_the_same_coins(level, unit):
    rng = np.random.default_rng(9)
    metric_x, human = judged_matrices(rng, systems=6, documents=8, constant_documents=())
    metric_y = np.round(human * 0.05 + rng.normal(scale=0.3, size=human.shape), 2)
    replicates, seed = 60, 3
    got = corr.permutation_test(
        metric_x,
        metric_y,
        human,
        level,
        ("pearson", "kendall_b"),
        unit=unit,
        replicates=replicates,
        seed=seed,
    )
    zx = (metric_x - metric_x.mean()) / metric_x.std()
    zy = (metric_y - metric_y.mean()) / metric_y.std()
    for method in ("pearson", "kendall_b"):
        delta = direct_level(zx, human, level, method) - direct_level(zy, human, level, method)
        assert got[method].delta == pytest.approx(
            direct_level(metric_x, human, level, method) - direct_level(metric_y, human, level, method),
            abs=1e-12,
        )
        at_least = 0
        for r in range(replicates):
            count = {"both": 48, "systems": 6, "documents": 8}[unit]
            coins = np.array([u < 0.5 for u in uniforms(f"{seed}\x1fpermute-{unit}\x1f{r}", count)])
            if unit == "both":
                coins = coins.reshape(6, 8)
            coins = np.broadcast_to(coins[:, None] if unit == "systems" else coins, (6, 8))
            px, py = np.where(coins, zy, zx), np.where(coins, zx, zy)
            sample = direct_level(px, human, level, method) - direct_level(py, human, level, method)
            at_least += sample >= delta - 1e-12
        assert got[method].p_value == at_least / replicates
        assert got[method].replicates == replicates


def test_permutation_test_finds_a_better_metric_and_not_a_worse_one():
    rng = np.random.default_rng(1)
    human = rng.normal(size=(10, 30))
    good = human + rng.normal(scale=0.3, size=human.shape)
    bad = human + rng.normal(scale=3.0, size=human.shape)
    better = corr.permutation_test(good, bad, human, "summary", ("pearson",), replicates=200)["pearson"]
    worse = corr.permutation_test(bad, good, human, "summary", ("pearson",), replicates=200)["pearson"]
    assert better.delta > 0 and better.p_value < 0.01
    assert worse.delta < 0 and worse.p_value > 0.99


def test_arguments_are_checked():
    m = np.zeros((3, 3))
    with pytest.raises(ValueError, match="level"):
        corr.correlate(m, m, "corpus")
    with pytest.raises(ValueError, match="unknown correlation"):
        corr.column_correlations([1, 2], [1, 2], ("tau",))
    with pytest.raises(ValueError, match="resample"):
        corr.bootstrap_samples(m, m, "system", resample="cells")
    with pytest.raises(ValueError, match="shape"):
        corr.correlate(np.zeros((3, 2)), m, "system")
