import numpy as np
import pytest

from rouge_core.kernel import perl_draws_adder
from rouge_core.resampling import _resample_sums, perl_bootstrap, perl_draws


def test_draws_are_perls_srand_and_rand():
    # perl -e 'for $s (0..2){srand($s); print join(",", map {int(rand(10))} 1..4),"\n"}'
    # printed 1,7,0,8 / 0,4,8,3 / 9,1,5,8 with perl 5.36 (drand48).
    assert perl_draws(10, 3)[:4].T.tolist() == [[1, 7, 0, 8], [0, 4, 8, 3], [9, 1, 5, 8]]


def test_constant_scores_give_that_value_and_a_zero_width_interval():
    r, p, f = perl_bootstrap([(0.5, 0.25, 0.1)] * 7, resamples=50, confidence="95", counting=0, alpha=0.5)
    assert r == ("0.50000", "0.50000", "0.50000")
    assert f == ("0.10000", "0.10000", "0.10000")


def test_interval_indices_for_1000_resamples_at_95_percent_are_25_and_974():
    # delta = 1000 * 2.5 / 100 = 25: low = a[25] (+ 0 * (a[26] - a[25])),
    # high = a[974] (ratio 0): with one document the resample means are exact.
    scores = [(float(i % 2), 0.0, 0.0) for i in range(2)]
    r, _, _ = perl_bootstrap(scores, resamples=1000, confidence="95", counting=0, alpha=0.5)
    means = np.sort([np.mean([scores[k][0] for k in draw]) for draw in perl_draws(2, 1000).T])
    assert r.low == "%7.5f" % means[25] and r.high == "%7.5f" % means[974]


@pytest.mark.parametrize(
    "n, resamples, columns",
    # every count of two-lane vectors the compiled sums hold (1-12), odd counts (a zero
    # column added), more than 24 columns (two passes), resamples not a multiple of 4
    [(1, 7, 3), (37, 1000, 21), (600, 53, 6), (20_000, 5, 3), (50, 30, 1), (40, 9, 2), (33, 6, 25),
     (70, 5, 24), (64, 13, 48), (65, 3, 49)] + [(30, 4, c) for c in range(4, 24, 2)],
)
def test_compiled_bootstrap_sums_are_the_numpy_loops_bit_for_bit(monkeypatch, n, resamples, columns):
    """The compiled kernel's sums (its own draws) against a plain loop here over the
    numpy draws: every (resample, column) summed left to right in draw order, so the
    same bits."""
    if perl_draws_adder() is None:
        pytest.skip("no compiled kernel in this install")
    rng = np.random.default_rng(n)
    values = np.round(rng.random((columns, n)) * rng.integers(1, 50, (columns, 1)), 5)
    expected = np.zeros((resamples, columns))
    for indices in perl_draws(n, resamples):
        expected += values.T[indices]
    assert np.array_equal(_resample_sums(np.ascontiguousarray(values.T), resamples).T.view(np.int64), expected.view(np.int64))
    monkeypatch.setenv("ROUGE_CORE_KERNEL", "python")
    assert perl_draws_adder() is None
    assert np.array_equal(_resample_sums(np.ascontiguousarray(values.T), resamples).T.view(np.int64), expected.view(np.int64))


@pytest.mark.parametrize(
    "n, resamples, columns",
    # every vector count and masked tail of the AVX-512 pass (8 columns a vector, 24 a
    # pass), resamples past a multiple of 4 (the last ones in two-lane vectors), rows
    # past 8 MiB (asked for ahead)
    [(97, 10, c) for c in (1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 49, 50)]
    + [(3, 8, 24), (1, 5, 8), (44_000, 5, 24), (20_000, 4, 57)],
)
def test_compiled_bootstrap_sums_are_the_same_bits_with_and_without_wide_vectors(n, resamples, columns):
    """The AVX-512 pass (where this CPU has it) and the two-lane one both equal the
    plain loop over the numpy draws, bit for bit."""
    add = perl_draws_adder()
    if add is None:
        pytest.skip("no compiled kernel in this install")
    rng = np.random.default_rng(columns)
    values = np.round(rng.random((n, columns)) * rng.integers(1, 50, (1, columns)), 5) / 7.0
    expected = np.zeros((resamples, columns))
    for indices in perl_draws(n, resamples):
        expected += values[indices]
    for wide in (True, False):
        sums = np.zeros((resamples, columns))
        add(values, sums, columns, resamples, wide)
        assert np.array_equal(sums.view(np.int64), expected.view(np.int64)), wide


def test_compiled_bootstrap_sums_refuse_buffers_that_do_not_match():
    add = perl_draws_adder()
    if add is None:
        pytest.skip("no compiled kernel in this install")
    with pytest.raises(ValueError, match="do not match"):
        add(np.zeros((3, 2)), np.zeros((3, 2)), 2, 2)  # sums for 3 resamples, 2 asked
    with pytest.raises(ValueError, match="do not match"):
        add(np.zeros((3, 2)), np.zeros((2, 2)), 3, 2)  # rows not of 3 columns


def test_compiled_poisson_weights_are_numpys_and_poisson_1(monkeypatch):
    """The pipeline's bootstrap weights in C equal numpy's splitmix64 + searchsorted,
    weight for weight (including the rare weights of 6 and more, past the C code's
    vector compares), as int64 and as float64, and follow Poisson(1) (scipy's pmf)."""
    from scipy.stats import poisson

    from rouge_core.kernel import poisson_weights_maker
    from rouge_core.resampling import poisson_weight_block, poisson_weight_matrix

    def plain_matrix(keys, replicates, seed):  # numpy's, with the compiled kernel off
        monkeypatch.setenv("ROUGE_CORE_KERNEL", "python")
        try:
            return poisson_weight_matrix(keys, replicates, seed)
        finally:
            monkeypatch.delenv("ROUGE_CORE_KERNEL")

    if poisson_weights_maker() is None:
        pytest.skip("no compiled kernel in this install")
    keys = [f"doc-{i}" for i in range(400)] + ["", "é\U0001f600", "x" * 5000]
    compiled = np.concatenate([poisson_weight_matrix(keys, 2500, seed) for seed in (0, 1, 2**40)])
    monkeypatch.setenv("ROUGE_CORE_KERNEL", "python")
    assert poisson_weights_maker() is None
    plain = np.concatenate([poisson_weight_matrix(keys, 2500, seed) for seed in (0, 1, 2**40)])
    assert compiled.dtype == plain.dtype == np.int64 and np.array_equal(compiled, plain)
    counts = np.bincount(compiled.ravel(), minlength=8)
    assert counts[4:].sum() > 50_000 and counts[6:].sum() > 1_000  # past the vectors' levels too, and agreed
    # as float64 (the bootstrap's matrix product), every replicate count (the last
    # ones past a multiple of 8 one by one), the same whole numbers
    for replicates in (1, 7, 8, 1001):
        block = poisson_weight_block(tuple(keys), replicates, 5)
        assert block.dtype == np.float64 and np.array_equal(block, poisson_weight_matrix(keys, replicates, 5))
    monkeypatch.delenv("ROUGE_CORE_KERNEL")
    for replicates in (1, 7, 8, 1001):
        block = poisson_weight_block(tuple(keys), replicates, 6)
        assert block.dtype == np.float64 and np.array_equal(block, plain_matrix(keys, replicates, 6))
    share = counts[:6] / compiled.size
    assert np.allclose(share, poisson.pmf(np.arange(6), 1.0), atol=1e-3)


def test_block_buckets_are_each_keys_bucket():
    """The per-block jackknife buckets (their hashes remembered per block) are each
    key's `jackknife_bucket`, for any bucket count, twice in a row (the second from
    the remembered hashes)."""
    from rouge_core.resampling import jackknife_bucket, jackknife_bucket_block

    keys = tuple([f"doc-{i}" for i in range(600)] + ["", "é\U0001f600", "x" * 5000])
    for buckets in (2, 7, 20, 10_000):
        for _ in range(2):
            block = jackknife_bucket_block(keys, buckets)
            assert block.dtype == np.int64 and block.tolist() == [jackknife_bucket(k, buckets) for k in keys]
