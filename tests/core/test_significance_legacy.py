"""The replicate-based tests of rouge_core.significance (PairedSums: bootstrap and
Monte Carlo sign flips) against an independent computation.  They go with those
functions, once the pipeline uses PairSums (tests/core/test_significance.py).

The reference below redraws every weight and sign from the documented formula
(blake2b of "seed\\x1fkey", splitmix64 of a counter, in plain Python integers)
and computes the statistics with plain loops over replicates in floating point;
the code under test uses numpy arrays of exact integer sums.
"""

import hashlib
import math
import random

import numpy as np
import pytest
from scipy import stats

from rouge_core import RougeConfigError, significance
from rouge_core.significance import (
    MAX_REPLICATES,
    PairedSums,
    paired_sums,
    paired_test,
)

MASK = (1 << 64) - 1


def paired_significance(doc_ids, scores_a, scores_b, *, replicates=1000, seed=0, confidence=95.0):
    """The legacy one-call form: paired_test of paired_sums."""
    (sums,) = paired_sums(
        list(doc_ids),
        [([round(x * 1e5) for x in scores_a], [round(x * 1e5) for x in scores_b])],
        replicates,
        seed,
    )
    return paired_test(sums, confidence)


GAMMA = 0x9E3779B97F4A7C15


def reference_bits(key: str, replicate: int, seed: int) -> int:
    h = int.from_bytes(hashlib.blake2b(f"{seed}\x1f{key}".encode(), digest_size=8).digest(), "little")
    x = (h + replicate * GAMMA + GAMMA) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_poisson(u: float) -> int:
    """Inverse CDF of Poisson(1): the smallest k with u < P(X <= k)."""
    k, term, cdf = 0, math.exp(-1), math.exp(-1)
    while u >= cdf:
        k += 1
        term /= k
        cdf += term
    return k


def reference_draws(doc_id: str, replicates: int, seed: int):
    weights = [
        reference_poisson((reference_bits(doc_id, r, seed) >> 11) * 2.0**-53) for r in range(replicates)
    ]
    signs = [-1 if reference_bits(f"sign\x1f{doc_id}", r, seed) >> 63 else 1 for r in range(replicates)]
    return weights, signs


def reference_paired_test(doc_ids, a, b, replicates, seed, confidence):
    """The documented statistics, with loops, in floating point."""
    d = [x - y for x, y in zip(a, b)]
    delta = sum(d) / len(d)
    draws = [reference_draws(i, replicates, seed) for i in doc_ids]
    boot, flips = [], []
    for r in range(replicates):
        w = [draws[i][0][r] for i in range(len(d))]
        s = [draws[i][1][r] for i in range(len(d))]
        if sum(w) > 0:
            boot.append(sum(wi * di for wi, di in zip(w, d)) / sum(w))
        flips.append(sum(si * di for si, di in zip(s, d)))
    tail = (100 - confidence) / 200
    tol = 1e-12  # the float sums may differ from the exact ones in the last bits
    return {
        "mean_a": float(np.mean(a)),
        "mean_b": float(np.mean(b)),
        "difference": delta,
        "ci_low": float(np.quantile(boot, tail, method="lower")),
        "ci_high": float(np.quantile(boot, 1 - tail, method="higher")),
        "p_bootstrap": (1 + sum(abs(x - delta) >= abs(delta) - tol for x in boot)) / (1 + len(boot)),
        "p_permutation": (1 + sum(abs(t) >= abs(sum(d)) - tol for t in flips)) / (1 + replicates),
    }


def scores(n, seed, shift=0.0):
    rng = random.Random(seed)
    a = [round(min(1.0, max(0.0, rng.gauss(0.4, 0.15))), 5) for _ in range(n)]
    b = [round(min(1.0, max(0.0, x - shift + rng.gauss(0, 0.1))), 5) for x in a]
    return [f"doc-{i:03d}" for i in range(n)], a, b


@pytest.mark.parametrize("n, shift, seed", [(12, 0.0, 1), (40, 0.03, 2), (25, 0.08, 3)])
def test_paired_test_equals_the_documented_formulas(n, shift, seed):
    doc_ids, a, b = scores(n, seed, shift)
    got = paired_significance(doc_ids, a, b, replicates=400, seed=seed, confidence=90)
    expected = reference_paired_test(doc_ids, a, b, 400, seed, 90)
    assert got.documents == n
    for name, value in expected.items():
        assert getattr(got, name) == pytest.approx(value, abs=1e-9), name


def test_permutation_p_value_estimates_the_exact_sign_flip_test():
    # 12 documents: scipy enumerates all 4096 sign patterns exactly.
    doc_ids, a, b = scores(12, seed=5, shift=0.05)
    exact = stats.permutation_test(
        (a, b),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        vectorized=False,
        n_resamples=10_000,
        alternative="two-sided",
    ).pvalue
    got = paired_significance(doc_ids, a, b, replicates=20_000, seed=0).p_permutation
    assert 0.002 < exact < 0.5
    assert abs(got - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1 / 20_000


def test_bootstrap_interval_is_close_to_the_t_interval_on_many_documents():
    doc_ids, a, b = scores(400, seed=7, shift=0.015)
    got = paired_significance(doc_ids, a, b, replicates=4000, seed=1, confidence=95)
    d = np.subtract(a, b)
    low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    assert got.ci_low == pytest.approx(low, abs=0.15 * (high - low))
    assert got.ci_high == pytest.approx(high, abs=0.15 * (high - low))
    # Both tests agree with the paired t-test (p = 0.077 here) to within their
    # Monte-Carlo error (0.004) and the bootstrap's known small-sample bias.
    p_t = stats.ttest_rel(a, b).pvalue
    assert 0.05 < p_t < 0.1
    assert got.p_bootstrap == pytest.approx(p_t, abs=0.02)
    assert got.p_permutation == pytest.approx(p_t, abs=0.01)


def test_a_system_against_itself_is_never_significant():
    doc_ids, a, _ = scores(30, seed=9)
    got = paired_significance(doc_ids, a, a, replicates=200, seed=0)
    assert (got.difference, got.ci_low, got.ci_high, got.p_bootstrap, got.p_permutation) == (0, 0, 0, 1, 1)


def test_swapping_the_systems_negates_the_difference_and_keeps_the_p_values():
    doc_ids, a, b = scores(30, seed=4, shift=0.04)
    ab = paired_significance(doc_ids, a, b, replicates=500, seed=3)
    ba = paired_significance(doc_ids, b, a, replicates=500, seed=3)
    assert ba.difference == pytest.approx(-ab.difference, abs=1e-15)
    assert (ba.ci_low, ba.ci_high) == pytest.approx((-ab.ci_high, -ab.ci_low), abs=1e-15)
    assert (ba.p_bootstrap, ba.p_permutation) == (ab.p_bootstrap, ab.p_permutation)


def test_sums_are_the_same_one_by_one_batched_and_merged_in_any_order(monkeypatch):
    doc_ids, a, b = scores(50, seed=6, shift=0.02)
    units = [(i, round(x * 1e5), round(y * 1e5)) for i, x, y in zip(doc_ids, a, b)]
    one_by_one = PairedSums(300)
    for i, x, y in units:
        one_by_one.add(i, x, y, seed=2)
    monkeypatch.setattr(significance, "_DRAWS_PER_CHUNK", 7 * 300)  # chunks of 7 documents
    (batched, swapped) = paired_sums(
        doc_ids,
        [([u[1] for u in units], [u[2] for u in units]), ([u[2] for u in units], [u[1] for u in units])],
        300,
        2,
    )
    parts = [
        paired_sums(doc_ids[k::3], [([u[1] for u in units[k::3]], [u[2] for u in units[k::3]])], 300, 2)[0]
        for k in range(3)
    ]
    merged = parts[2].merge(parts[0]).merge(parts[1])
    expected = paired_test(one_by_one)
    assert paired_test(batched) == expected == paired_test(merged)
    assert paired_test(swapped).difference == -expected.difference


def test_no_documents_and_bad_settings():
    assert paired_test(PairedSums(10)).mean_a is None
    for bad in (0, MAX_REPLICATES + 1, 2.5):
        with pytest.raises(RougeConfigError):
            PairedSums(bad)
    with pytest.raises(RougeConfigError):
        paired_test(PairedSums(10), confidence=100)


def test_sums_beyond_exact_doubles_fall_back_to_integer_products():
    # Differences of 2**50 units: BLAS doubles would round, int64 products do not.
    doc_ids = [f"d{i}" for i in range(5)]
    a = [2**50 + i for i in range(5)]
    b = [0, 3, 0, 1, 2]
    one_by_one = PairedSums(40)
    for i, x, y in zip(doc_ids, a, b):
        one_by_one.add(i, x, y, seed=1)
    (batched,) = paired_sums(doc_ids, [(a, b)], 40, 1)
    assert batched.weighted.tolist() == one_by_one.weighted.tolist()
    assert batched.signed.tolist() == one_by_one.signed.tolist()
