"""rouge_core.significance (PairSums and the paired tests) and rouge_core.student_t
against independent computations: scipy.stats.t, scipy.stats.ttest_rel,
scipy.stats.permutation_test (exact enumeration of sign flips), hand-computed
Holm and Benjamini-Hochberg adjustments, and plain numpy sums per pair."""

import itertools
import pickle
import random

import numpy as np
import pytest
from scipy import stats

from rouge_core import RougeConfigError, student_t
from rouge_core.significance import (
    EXACT,
    EXACT_MAX_DOCUMENTS,
    STUDENT_T,
    PairSums,
    benjamini_hochberg,
    exact_sign_flip_p,
    holm,
    holm_array,
    paired_result,
    paired_significance,
    paired_tests,
    result_rows,
    smallest_p,
)

# ------------------------------------------------------------ Student's t


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 19, 20, 21, 50, 100, 999, 11_489, 100_000])
def test_two_sided_p_equals_scipy(df):
    t = np.concatenate([np.linspace(0, 6, 61), np.logspace(-4, 3, 141), [np.inf]])
    expected = np.minimum(1.0, 2 * stats.t.sf(t, df))
    got = student_t.two_sided_p(t, df)
    normal = expected > 1e-300
    # scipy's own log B(a, 1/2) errs by ~1e-11 relative at a ~ 5e4 (its betaln); below, 1e-13
    tolerance = 1e-12 if df <= 1000 else 1e-9
    assert got[normal] == pytest.approx(expected[normal], rel=tolerance, abs=0)
    assert (got[~normal] < 1e-290).all()
    assert got[-1] == 0.0 and got[0] == 1.0


def test_two_sided_p_in_the_far_tail():
    # p down to 1e-300 keeps its relative accuracy (a +15-point gap on 11,490 documents lives here)
    for df, t in [(10, 1e20), (30, 1e9), (1000, 37.0), (11_489, 37.0), (11_489, 20.0)]:
        expected = 2 * stats.t.sf(t, df)
        assert 1e-300 < expected < 1e-50
        assert float(student_t.two_sided_p(t, df)) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("df", [1, 4, 19, 20, 100, 11_489])
@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99, 0.999])
def test_quantile_inverts_the_tail_and_equals_scipy(df, confidence):
    q = student_t.quantile(1 - (1 - confidence) / 2, df)
    assert float(student_t.two_sided_p(q, df)) == pytest.approx(1 - confidence, rel=1e-12)
    assert q == pytest.approx(stats.t.ppf(1 - (1 - confidence) / 2, df), rel=1e-10)


def test_quantiles_of_many_degrees_of_freedom_at_once():
    dfs = np.array([1, 2, 7, 19, 20, 100, 11_489])
    together = student_t.quantile(0.975, dfs)
    assert together.tolist() == [student_t.quantile(0.975, int(df)) for df in dfs]
    assert together == pytest.approx(stats.t.ppf(0.975, dfs), rel=1e-10)


def test_student_t_refuses_nonsense():
    with pytest.raises(ValueError):
        student_t.two_sided_p(1.0, 0)
    with pytest.raises(ValueError):
        student_t.two_sided_p(np.nan, 3)
    with pytest.raises(ValueError):
        student_t.quantile(1.0, 3)


# ------------------------------------------------------------ the paired tests


def scores(n, seed, shift=0.0, spread=0.1):
    """ROUGE-like paired scores on five decimals, b = a - shift + noise."""
    rng = random.Random(seed)
    a = [round(min(1.0, max(0.0, rng.gauss(0.4, 0.15))), 5) for _ in range(n)]
    b = [round(min(1.0, max(0.0, x - shift + rng.gauss(0, spread))), 5) for x in a]
    return [f"doc-{i:05d}" for i in range(n)], a, b


@pytest.mark.parametrize("n, shift, seed", [(21, 0.0, 1), (40, 0.03, 2), (400, 0.015, 7), (5000, 0.004, 3)])
def test_t_branch_equals_scipy_ttest_rel(n, shift, seed):
    doc_ids, a, b = scores(n, seed, shift)
    got = paired_significance(doc_ids, a, b, confidence=90)
    expected = stats.ttest_rel(a, b)
    d = np.subtract(a, b)
    interval = expected.confidence_interval(0.90)
    assert got.method == STUDENT_T and got.documents == n
    assert got.statistic == pytest.approx(expected.statistic, rel=1e-10)
    assert got.p_value == pytest.approx(expected.pvalue, rel=1e-10)
    assert got.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-10)
    assert (got.ci_low, got.ci_high) == pytest.approx((interval.low, interval.high), abs=1e-12)
    assert (got.mean_a, got.mean_b, got.difference) == pytest.approx(
        (np.mean(a), np.mean(b), d.mean()), abs=1e-15
    )
    assert got.p_floor == 2.0 ** (1 - n) or got.p_floor == 2.2250738585072014e-308


@pytest.mark.parametrize(
    "n, seed",
    [
        (2, 0),
        (3, 1),
        (7, 0),
        (7, 1),
        (12, 0),
        (12, 1),
        (16, 0),
        (16, 1),
        pytest.param(20, 0, marks=pytest.mark.slow),
    ],
)
def test_exact_branch_equals_scipy_permutation_test(n, seed):
    doc_ids, a, b = scores(n, 10 * n + seed, shift=0.04 * seed, spread=0.08)
    b[0] = a[0]  # a zero difference
    if n > 3:
        b[1], a[1] = a[2], b[2]  # two differences of equal size
        a[2], b[2] = a[1], b[1]
    got = paired_significance(doc_ids, a, b)
    exact = stats.permutation_test(
        (np.array(a) * 1e5, np.array(b) * 1e5),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,  # every one of the 2^n sign patterns
        alternative="two-sided",
    ).pvalue
    assert got.method == EXACT
    assert got.p_value == pytest.approx(exact, rel=1e-12)
    assert got.p_value >= got.p_floor == smallest_p(n)


def test_exact_p_of_hand_computed_cases():
    # d = (1, 2, 3): |sum| = 6 only for +++ and ---; d = (1, -1): every pattern has |sum| >= 0
    assert exact_sign_flip_p([[1, 2, 3]]).tolist() == [2 / 8]
    assert exact_sign_flip_p([[1, -1]]).tolist() == [1.0]
    assert exact_sign_flip_p([[4, 0]]).tolist() == [1.0]  # every pattern's |sum| is 4
    assert exact_sign_flip_p([[3, 1, 1]]).tolist() == [2 / 8]  # 5, 3, 3, 1 and mirrors: only +++, ---
    # versus brute force over all patterns, many rows at once
    rng = np.random.default_rng(4)
    for n in (1, 5, 9, 12):
        d = rng.integers(-9, 10, (20, n))
        brute = [
            np.mean(
                [
                    abs(sum(s * x for s, x in zip(signs, row))) >= abs(row.sum())
                    for signs in itertools.product((1, -1), repeat=n)
                ]
            )
            for row in d
        ]
        assert exact_sign_flip_p(d).tolist() == brute


def test_smallest_p_is_reached_and_clipped():
    for n in (1, 2, 5, 20):
        doc_ids, a, _ = scores(n, seed=n)
        better = [min(1.0, x + 0.01 * (k + 1)) for k, x in enumerate(a)]  # distinct positive differences
        got = paired_significance(doc_ids, better, a)
        assert got.p_value == got.p_floor == smallest_p(n) == 2.0 ** (1 - n)
    assert smallest_p(100) == 2.0**-99
    assert smallest_p(11_490) == 2.2250738585072014e-308
    # t branch: a constant difference has t = inf; p is the floor, not 0
    doc_ids, a, _ = scores(30, seed=3)
    got = paired_significance(doc_ids, [x + 0.1 for x in a], a)
    assert got.method == STUDENT_T and got.statistic == np.inf and got.p_value == 2.0**-29
    assert got.ci_low == got.ci_high == pytest.approx(0.1)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            smallest_p(bad)


def brute_force_sign_flip_p(d):
    """The exact sign-flip p-value by listing all 2^n patterns (in chunks), in integers."""
    n, total, count = len(d), abs(int(np.sum(d))), 0
    for start in range(0, 2**n, 1 << 16):
        patterns = (np.arange(start, min(2**n, start + (1 << 16)))[:, None] >> np.arange(n)) & 1
        count += int((np.abs((1 - 2 * patterns) @ d) >= total).sum())
    return count / 2**n


def test_t_approximates_the_exact_sign_flip_test_within_the_stated_error():
    # docs/significance.md states it: at n = 21 .. 30, |p_t - p_exact| < 0.06, and for
    # p_exact in [0.001, 0.1] p_t / p_exact within [0.6, 4].  Checked here against the
    # exact test by brute force (2^21 patterns) on skewed, ROUGE-like differences.
    rng = np.random.default_rng(21)
    for trial in range(4):
        d = np.round(rng.gamma(1.5, 0.08, 21) - 0.08 - 0.03 * trial, 5)
        doc_ids = [f"d{i}" for i in range(21)]
        got = paired_significance(doc_ids, (d + 0.5).tolist(), [0.5] * 21)
        exact = brute_force_sign_flip_p(np.round(d * 1e5).astype(np.int64))
        assert got.method == STUDENT_T
        assert abs(got.p_value - exact) < 0.06
        if 0.001 <= exact <= 0.1:
            assert 0.6 < got.p_value / exact < 4


def test_identical_swapped_empty_and_single():
    doc_ids, a, b = scores(30, seed=9)
    same = paired_significance(doc_ids, a, a)
    assert (same.difference, same.ci_low, same.ci_high, same.p_value, same.statistic) == (0, 0, 0, 1, None)
    ab, ba = paired_significance(doc_ids, a, b), paired_significance(doc_ids, b, a)
    assert ba.difference == -ab.difference and ba.statistic == -ab.statistic and ba.p_value == ab.p_value
    assert (ba.ci_low, ba.ci_high) == pytest.approx((-ab.ci_high, -ab.ci_low), abs=1e-15)
    one = paired_significance(["d"], [0.7], [0.2])
    assert (one.documents, one.difference, one.p_value, one.ci_low, one.statistic) == (
        1,
        0.5,
        1.0,
        None,
        None,
    )
    empty = paired_result(PairSums(["a", "b"]), "a", "b")
    assert empty.documents == 0 and empty.p_value is None and empty.mean_a is None
    with pytest.raises(RougeConfigError):
        paired_significance(doc_ids, a, b, confidence=100)
    with pytest.raises(ValueError):
        paired_significance(["d", "d"], [0.1, 0.2], [0.1, 0.2])


# ------------------------------------------------------------ the sums


def direct_pair_tests(units, present, names, confidence=95.0):
    """Every pair's test straight from the documents both scored, with scipy."""
    out = {}
    for i, j in itertools.combinations(range(len(names)), 2):
        both = present[:, i] & present[:, j]
        a, b = units[both, i] / 1e5, units[both, j] / 1e5
        out[names[i], names[j]] = (int(both.sum()), a, b)
    return out


def check_against_direct(sums, units, present, names, raw_kept):
    a, b = np.triu_indices(len(names), 1)
    order = [sums.index(s) for s in names]
    rows = result_rows(paired_tests(sums, [order[i] for i in a], [order[j] for j in b]))
    direct = direct_pair_tests(units, present, names)
    for (i, j), got in zip(zip(a, b), rows):
        n, x, y = direct[names[i], names[j]]
        assert got.documents == n
        if n == 0:
            assert got.p_value is None
            continue
        assert got.difference == pytest.approx(x.mean() - y.mean(), abs=1e-12)
        if raw_kept and n >= 2:
            expected = stats.permutation_test(
                (x - y,), np.mean, permutation_type="samples", vectorized=True, n_resamples=np.inf
            ).pvalue
            assert got.method == EXACT and got.p_value == pytest.approx(expected, rel=1e-9)
        elif n > 1 and np.ptp(x - y) > 0:
            expected = stats.ttest_rel(x, y)
            assert got.method == STUDENT_T
            assert got.statistic == pytest.approx(expected.statistic, rel=1e-9)
            assert got.p_value == pytest.approx(max(expected.pvalue, smallest_p(n)), rel=1e-9)
    return rows


@pytest.mark.parametrize("documents", [12, 300])
def test_split_reordered_and_merged_sums_give_identical_tests(documents):
    rng = np.random.default_rng(documents)
    names = [f"sys{k}" for k in range(6)]
    units = rng.integers(0, 100_001, (documents, 6))
    units[:, 1] = np.clip(units[:, 0] - rng.integers(0, 9000, documents), 0, None)  # one clear gap
    present = rng.random((documents, 6)) > 0.15  # documents that only some systems scored
    present[:, 5] = False  # a system that scored nothing
    present[: documents // 3, 5] = True
    doc_ids = [f"d{i}" for i in range(documents)]
    whole = PairSums().add(doc_ids, names, units, present)
    rows = check_against_direct(whole, units, present, names, raw_kept=documents <= EXACT_MAX_DOCUMENTS)
    # three parts (thirds of the documents), each knowing only the systems that scored
    # something in it, in its own column order, added in blocks of 7; merged in two orders
    parts = []
    for k in range(3):
        rows_k = np.arange(k * documents // 3, (k + 1) * documents // 3)
        columns = [c for c in range(6) if present[rows_k, c].any()][::-1]
        part = PairSums()
        for start in range(0, len(rows_k), 7):
            block = rows_k[start : start + 7]
            part.add(
                [doc_ids[i] for i in block],
                [names[c] for c in columns],
                units[np.ix_(block, columns)],
                present[np.ix_(block, columns)],
            )
        parts.append(part)
    assert len({part.systems for part in parts}) > 1
    first = pickle.loads(pickle.dumps(parts[2])).merge(parts[0]).merge(parts[1])
    second = parts[1].copy().merge(parts[0].copy().merge(parts[2].copy()))
    a, b = np.triu_indices(6, 1)
    for merged in (first, second):
        assert merged.systems == tuple(names) and merged.documents == documents
        assert result_rows(paired_tests(merged, a, b)) == rows


def test_dense_sums_stay_small_and_match_sparse_ones():
    rng = np.random.default_rng(5)
    names = [f"s{k}" for k in range(40)]
    units = rng.integers(0, 100_001, (100, 40))
    dense = PairSums().add([f"d{i}" for i in range(100)], names, units)
    assert dense.shared is None and dense.raw is None
    assert dense.nbytes == 8 * 40 * 40 + 3 * 8 * 40  # one S x S matrix and three vectors
    # the same documents, one system announced late: the sums turn pairwise, same answers
    sparse = PairSums(names[:-1]).add([f"d{i}" for i in range(50)], names, units[:50])
    sparse.merge(PairSums().add([f"d{i}" for i in range(50, 100)], names[::-1], units[50:, ::-1]))
    a, b = np.triu_indices(40, 1)
    assert result_rows(paired_tests(sparse, a, b)) == result_rows(paired_tests(dense, a, b))
    check_against_direct(dense, units, np.ones(units.shape, dtype=bool), names, raw_kept=False)


@pytest.mark.parametrize("documents", [15, 400])
def test_the_sums_of_some_systems_pairs_alone_equal_plain_sums_per_pair(documents):
    """pairs_of (a run reusing the other pairs' results): every pair with one of the
    named systems has the sums a plain loop over its shared documents gives, in the
    dense and in the sparse case, and their tests are those of scipy."""
    rng = np.random.default_rng(documents)
    names = [f"s{k}" for k in range(7)]
    units = rng.integers(0, 100_001, (documents, 7))
    for present in (np.ones(units.shape, dtype=bool), rng.random(units.shape) < 0.8):
        some = ["s5", "s2"]
        sums = PairSums().add([f"d{i}" for i in range(documents)], names, units, present, pairs_of=some)
        for i, j in itertools.permutations(range(7), 2):
            if names[i] not in some and names[j] not in some:
                continue
            both = present[:, i] & present[:, j]
            x, y = units[both, i].astype(object), units[both, j].astype(object)
            assert sums.pair_sums(i, j) == (int(both.sum()), sum(x), sum(y), sum(x * x), sum(y * y), sum(x * y))
        kept = [k for k in range(7) if names[k] in some]
        check = check_against_direct(
            PairSums().add([f"d{i}" for i in range(documents)], [names[k] for k in kept], units[:, kept], present[:, kept],
                           pairs_of=some), units[:, kept], present[:, kept], [names[k] for k in kept],
            raw_kept=documents <= EXACT_MAX_DOCUMENTS)
        assert len(check) == 1


@pytest.mark.parametrize("documents", [15, 400])
@pytest.mark.parametrize("some", [None, ["s5", "s2"]])
def test_blocks_every_system_scored_in_the_sums_order_equal_blocks_through_presence(documents, some):
    """A block every system scored, its columns in the sums' (sorted) order, as
    run --reuse adds aligned per-document files (`add` skips the presence matrix
    then), gives the sums of the same documents added through a presence matrix in
    another column order; the tests are scipy's."""
    rng = np.random.default_rng(documents)
    names = [f"s{k}" for k in range(7)]
    units = rng.integers(0, 100_001, (documents, 7))
    doc_ids = [f"d{i}" for i in range(documents)]
    fast = PairSums()
    for start in range(0, documents, 6):
        fast.add(doc_ids[start : start + 6], names, units[start : start + 6], pairs_of=some)
    masked = PairSums().add(doc_ids, names[::-1], units[:, ::-1], np.ones(units.shape, dtype=bool), pairs_of=some)
    assert fast.shared is None and masked.shared is None
    assert (fast.systems, fast.documents, fast.largest) == (masked.systems, masked.documents, masked.largest)
    for name in ("count", "total", "squares", "products"):
        assert np.array_equal(getattr(fast, name), getattr(masked, name)), name
    if documents <= EXACT_MAX_DOCUMENTS:
        assert fast.raw[0] == masked.raw[0] == doc_ids
        assert np.array_equal(fast.raw[1], units) and fast.raw[2].all()
    else:
        assert fast.raw is None and masked.raw is None
    if some is None:
        check_against_direct(fast, units, np.ones(units.shape, dtype=bool), names,
                             raw_kept=documents <= EXACT_MAX_DOCUMENTS)


def test_many_pairs_are_tested_in_chunks_with_the_same_results(monkeypatch):
    from rouge_core import significance

    rng = np.random.default_rng(6)
    units = rng.integers(0, 100_001, (30, 12))
    sums = PairSums().add([f"d{i}" for i in range(30)], [f"s{k:02d}" for k in range(12)], units)
    a, b = np.triu_indices(12, 1)
    whole = result_rows(paired_tests(sums, a, b))
    monkeypatch.setattr(significance, "_PAIRS_PER_CHUNK", 5)
    assert result_rows(paired_tests(sums, a, b)) == whole


def test_memory_is_bounded_in_documents_and_square_in_systems():
    # issue 22: 100 systems x 5 documents took 6.3 GB with per-pair replicate sums.
    # Here one score column holds 8 S^2 + 24 S bytes (plus 9 bytes per system and
    # document while at most 20 documents are kept for the exact test), whatever D is.
    rng = np.random.default_rng(1)
    names = [f"s{k:03d}" for k in range(100)]
    sizes = {}
    for documents in (5, 25, 2000):
        sums = PairSums()
        for start in range(0, documents, 256):
            rows = min(256, documents - start)
            sums.add(
                [f"d{i}" for i in range(start, start + rows)], names, rng.integers(0, 100_001, (rows, 100))
            )
        sizes[documents] = sums.nbytes
    assert sizes[5] == 8 * 100**2 + 24 * 100 + 5 * 100 * 9
    assert sizes[25] == sizes[2000] == 8 * 100**2 + 24 * 100  # 82,400 bytes per column


def test_a_pair_that_shares_few_documents_in_a_large_run_uses_t_and_says_so():
    rng = np.random.default_rng(8)
    units = rng.integers(0, 100_001, (60, 3))
    present = np.ones((60, 3), dtype=bool)
    present[12:, 2] = False  # c scored 12 of 60 documents
    sums = PairSums().add([f"d{i}" for i in range(60)], ["a", "b", "c"], units, present)
    result = paired_result(sums, "a", "c")
    assert result.documents == 12 and result.method == STUDENT_T and sums.raw is None
    expected = stats.ttest_rel(units[:12, 0], units[:12, 2]).pvalue
    assert result.p_value == pytest.approx(max(expected, smallest_p(12)), rel=1e-10)


def test_sums_refuse_what_they_cannot_hold_exactly():
    with pytest.raises(OverflowError):
        PairSums().add(["d"], ["a", "b"], [[2**27, 0]])
    sums = PairSums().add(["d1"], ["a", "b"], [[2**26 - 1, 0]])
    with pytest.raises(OverflowError):
        sums.add([f"e{i}" for i in range(3000)], ["a", "b"], [[2**26 - 1, 0]] * 3000)
    with pytest.raises(ValueError):
        PairSums().add(["d"], ["a", "a"], [[1, 2]])
    with pytest.raises(KeyError):
        PairSums(["a"]).index("b")


def test_scores_above_blas_exactness_are_summed_in_exact_blocks():
    # scores of 2^24 units: products of 2^48, so at most 31 documents per exact block
    rng = np.random.default_rng(2)
    units = rng.integers(2**23, 2**24, (200, 3))
    sums = PairSums().add([f"d{i}" for i in range(200)], ["a", "b", "c"], units)
    big = units.astype(object)
    assert sums.products.tolist() == (big.T @ big).tolist()


# ------------------------------------------------------------ adjustments


def test_holm_by_hand():
    # m = 4: sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, max(0.06, 1*0.04)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([None, 0.2, None]) == [None, 0.2, None]
    assert holm([]) == []
    assert np.isnan(holm_array([np.nan, 0.1])[0])


def test_benjamini_hochberg_by_hand_and_against_scipy():
    # m = 4: sorted 0.005, 0.01, 0.03, 0.04 -> 4/1*0.005, 4/2*0.01, 4/3*0.03, 4/4*0.04, then running minima from the top
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    rng = np.random.default_rng(0)
    for m in (1, 3, 10, 50):
        p = rng.uniform(0, 0.2, m) ** 2
        p[rng.integers(0, m)] = p[0]  # a tie
        assert benjamini_hochberg(p.tolist()) == pytest.approx(stats.false_discovery_control(p).tolist())


def test_holm_rejects_what_the_step_down_procedure_rejects():
    # Holm (1979): reject H_(1..k-1), where k is the first i with p_(i) > alpha / (m - i + 1).
    rng = random.Random(3)
    for _ in range(200):
        p = [rng.random() ** 3 for _ in range(rng.randint(1, 8))]
        adjusted = holm(p)
        for alpha in (0.01, 0.05, 0.1):
            rejected = set()
            for i, (index, value) in enumerate(sorted(enumerate(p), key=lambda t: t[1])):
                if value > alpha / (len(p) - i):
                    break
                rejected.add(index)
            assert {i for i, q in enumerate(adjusted) if q <= alpha} == rejected


def test_adjusted_p_values_do_not_depend_on_the_order_of_the_tests():
    p = [0.02, 0.001, 0.2, 0.02, 0.04]
    for adjust in (holm, benjamini_hochberg):
        expected = dict(zip(range(5), adjust(p)))
        for order in itertools.permutations(range(5)):
            assert adjust([p[i] for i in order]) == [expected[i] for i in order]
