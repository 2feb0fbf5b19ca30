"""The bootstrap behind ROUGE-1.5.5's printed averages and confidence intervals.

ROUGE-1.5.5 does not print the mean of the per-document scores (l.935): it prints
the mean of `-r` bootstrap means, and the `-c` interval from their order
statistics.  Resample s (s = 0 .. R-1) calls `srand(s)` and draws n indices with
`int(rand(n))`; since Perl 5.20 `rand` is drand48, seeded as `(s << 16) + 0x330E`.
The draws are the same for every metric and system with the same n, so they are
made for all resamples at a time, with numpy's wrapping 64-bit integers (2**48
divides 2**64, so the modular arithmetic is exact), and kept for the next
metric unless there are too many to hold.

Every floating-point sum here runs left to right, in the script's order, because
the printed digits depend on it.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np

from rouge_core.kernel import perl_draws_adder, poisson_weights_maker
from rouge_core.perl_numbers import sequential_sum

_DRAND48_MULTIPLIER = np.uint64(0x5DEECE66D)
_DRAND48_INCREMENT = np.uint64(0xB)
_DRAND48_MASK = np.uint64((1 << 48) - 1)


class Interval(NamedTuple):
    """A printed average with its confidence interval, as ROUGE-1.5.5 prints them."""

    average: str
    low: str
    high: str


def _generate_draws(n: int, resamples: int, rows: int = 1024):
    """Draws k (k = 0 .. n-1) of every resample, `rows` draws at a time: blocks of shape
    (rows, resamples).  Draw k of resample s comes from drand48's state after k + 1
    steps, a^(k+1) x_s + c (a^k + ... + 1) mod 2^48, so a block is one product of
    every step's (multiplier, increment), found by one loop over k in Python
    integers, with every resample's seed x_s: no loop over draws in numpy."""
    seeds = (np.arange(resamples, dtype=np.uint64) << np.uint64(16)) + np.uint64(0x330E)
    multiplier, increment, mask = int(_DRAND48_MULTIPLIER), int(_DRAND48_INCREMENT), (1 << 48) - 1
    a, c = 1, 0
    for start in range(0, n, rows):
        steps = []
        for _ in range(start, min(n, start + rows)):
            a, c = (a * multiplier) & mask, (c * multiplier + increment) & mask
            steps.append((a, c))
        scale, shift = (np.array(column, dtype=np.uint64)[:, None] for column in zip(*steps))
        state = (scale * seeds + shift) & _DRAND48_MASK
        yield (n * (state.astype(np.float64) * 2.0**-48)).astype(np.int64)


@lru_cache(maxsize=4)
def perl_draws(n: int, resamples: int) -> np.ndarray:
    """The script's bootstrap indices: row k holds draw k of every resample.

    Example:
        >>> perl_draws(10, 3)[:4].T.tolist()   # srand(0), srand(1), srand(2); 4 draws each
        [[1, 7, 0, 8], [0, 4, 8, 3], [9, 1, 5, 8]]
    """
    draws = np.concatenate(list(_generate_draws(n, resamples))) if n else np.zeros((0, resamples), dtype=np.int64)
    draws.flags.writeable = False
    return draws


# Up to this many indices (256 MB) the draws are kept for the next metric with the
# same n; beyond it (millions of documents) they are generated as they are used.
_CACHED_DRAWS = 32 << 20


def _resample_sums(by_document: np.ndarray, resamples: int) -> np.ndarray:
    """Per column and resample (columns, resamples), the sum of the drawn values in
    draw order, from `by_document` (n, columns), C-contiguous: a draw takes a whole
    row, each column still summed left to right.  With the compiled kernel the same
    draws and additions run in C (`rouge_core.kernel.perl_draws_adder`, the draws
    made as they are used, never stored), bit for bit the numpy loop's."""
    n, columns = by_document.shape
    sums = np.zeros((resamples, columns))
    add = perl_draws_adder()
    if add is not None:
        add(by_document, sums, columns, resamples)
        return sums.T
    draws = perl_draws(n, resamples) if n * resamples <= _CACHED_DRAWS else _generate_draws(n, resamples)
    drawn = np.empty_like(sums)
    for block in [draws] if isinstance(draws, np.ndarray) else draws:
        for indices in block:
            np.take(by_document, indices, axis=0, out=drawn)
            sums += drawn
    return sums.T


def _interval(means: np.ndarray, confidence: str) -> Interval:
    """Average of the sorted resample means and the interpolated interval (l.906-931)."""
    ranked = np.sort(means)
    r = len(ranked)
    average = sequential_sum(ranked.tolist()) / r
    delta = r * ((100 - float(confidence)) / 2.0) / 100.0
    upper = int(r - delta - 1)
    lower = int(delta)
    ratio = r - delta - 1 - upper

    def at(i: int) -> float:  # Perl reads past the end of the array as 0
        return float(ranked[i]) if i < r else 0.0

    low = at(lower) + (at(lower + 1) - at(lower)) * ratio
    high = at(upper) + (at(upper + 1) - at(upper)) * ratio
    return Interval("%7.5f" % average, "%7.5f" % low, "%7.5f" % high)


def perl_bootstrap(
    rows: Sequence[Sequence[float]], *, resamples: int, confidence: str, counting: int, alpha: float
) -> tuple[Interval, Interval, Interval]:
    """ROUGE-1.5.5's printed Average_R/P/F and intervals for one system and metric.

    Args:
        rows: one row per document, in the script's instance order (string-sorted
            `"<eval id>.<system>"`): (R, P, F) under `-t 0`, or the raw
            (reference total, candidate total, hits) under `-t 1`.
        resamples: `-r`.
        confidence: `-c` as typed.
        counting: `-t` (0 or 1).
        alpha: `-p`.

    Returns:
        (recall, precision, f_measure) intervals.
    """
    (intervals,) = perl_bootstraps(
        np.asarray(rows, dtype=np.float64).reshape(len(rows), 1, 3),
        resamples=resamples,
        confidence=confidence,
        counting=counting,
        alpha=alpha,
    )
    return intervals


def perl_bootstraps(
    values: np.ndarray, *, resamples: int, confidence: str, counting: int, alpha: float
) -> list[tuple[Interval, Interval, Interval]]:
    """`perl_bootstrap` of several metrics of one system at once: `values` has shape
    (documents, metrics, 3), documents in the script's instance order; the draws
    are the same for every metric, so they are walked once for all of them."""
    n, metrics = values.shape[0], values.shape[1]
    if n == 0:
        zero = Interval("%7.5f" % 0, "%7.5f" % 0, "%7.5f" % 0)
        return [(zero, zero, zero)] * metrics
    sums = _resample_sums(np.ascontiguousarray(values.reshape(n, 3 * metrics)), resamples)  # (no copy when contiguous)
    out = []
    for m in range(metrics):
        sum3 = sums[3 * m : 3 * m + 3]
        if counting == 0:
            means = [s / n for s in sum3]
        else:
            # -t 1 (l.739): every resample pools the counts, then forms R, P, F.
            reference, candidate, hits = sum3
            recall = np.divide(hits, reference, out=np.zeros_like(hits), where=reference > 0)
            precision = np.divide(hits, candidate, out=np.zeros_like(hits), where=candidate > 0)
            denominator = (1 - alpha) * precision + alpha * recall
            f = np.divide(recall * precision, denominator, out=np.zeros_like(hits), where=denominator > 0)
            means = [recall, precision, f]
        out.append(tuple(_interval(mean, confidence) for mean in means))
    return out


# --------------------------------------------------------------------------
# Order-free estimators for the pipeline.  Scores enter as integers (units of
# 1e-5, the precision ROUGE-1.5.5 keeps per document), so every sum is exact and
# the result does not depend on how documents were split across workers.
# --------------------------------------------------------------------------

SCORE_UNITS = 100_000
# Poisson(1) cumulative probabilities e^-1 * sum_{j<=k} 1/j!, written out so that
# no platform's exp() enters the weights.
_POISSON1_CDF = np.cumsum(
    [0.36787944117144233 / f for f in (1, 1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800, 39916800)]
)
_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)


def to_units(score: float) -> int:
    """A five-decimal score as an exact integer number of 1e-5 units."""
    return round(score * SCORE_UNITS)


def units_of(scores) -> np.ndarray:
    """`to_units` of each score, as int64: the same integers (the same product in
    doubles, rounded half to even as Python's round is), at array speed.

    Example:
        >>> units_of([0.123455, 0.5, 2.5e-5]).tolist() == [to_units(x) for x in (0.123455, 0.5, 2.5e-5)]
        True
    """
    return np.rint(np.asarray(scores, dtype=np.float64) * SCORE_UNITS).astype(np.int64)


def stable_hash(text: str) -> int:
    """A 64-bit hash that is the same in every process, on every machine."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + _GOLDEN_GAMMA
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def counter_bits(key: str, replicates: int, seed: int) -> np.ndarray:
    """64 random bits for each replicate r = 0 .. replicates-1 of one key:
    splitmix64(h + r * gamma) with h = stable_hash(f"{seed}\\x1f{key}"), so the
    bits of replicate r depend only on (seed, key, r) (a counter-based generator).
    """
    return counter_bit_matrix([key], replicates, seed)[0]


def counter_bit_matrix(keys: Sequence[str], replicates: int, seed: int) -> np.ndarray:
    """`counter_bits` of several keys, one row each: shape (len(keys), replicates)."""
    return _stream_bits(stream_bases(keys, seed), replicates)


def stream_bit_matrix(names: Sequence[str], count: int) -> np.ndarray:
    """Draws 0 .. count-1 of the streams `names`, one row each: draw k of a stream is
    splitmix64(stable_hash(name) + k * golden gamma)."""
    return _stream_bits(_hashes(names), count)


def _hashes(names) -> np.ndarray:
    """stable_hash of each name, uint64."""
    return np.array([stable_hash(name) for name in names], dtype=np.uint64)


def _stream_bits(bases: np.ndarray, count: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return _splitmix64(bases.reshape(-1, 1) + np.arange(count, dtype=np.uint64) * _GOLDEN_GAMMA)


def _uniforms(bits: np.ndarray) -> np.ndarray:
    """64 random bits -> uniform on [0, 1), 53 bits each."""
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53


def poisson_weights(key: str, replicates: int, seed: int) -> np.ndarray:
    """Poisson(1) bootstrap weights of one document in each replicate.

    The weights depend only on (seed, key, replicate), never on workers or
    order, so replicate sums can be accumulated anywhere and merged.

    Example:
        >>> w = poisson_weights("doc-1", 10_000, seed=0)
        >>> round(float(w.mean()), 1), int(w.min())
        (1.0, 0)
    """
    return poisson_weight_matrix([key], replicates, seed)[0]


def poisson_weight_matrix(keys: Sequence[str], replicates: int, seed: int) -> np.ndarray:
    """`poisson_weights` of many documents at once, one row per key (the same numbers,
    made in one vectorised pass).

    Example:
        >>> m = poisson_weight_matrix(["a", "b"], 5, seed=1)
        >>> bool((m[1] == poisson_weights("b", 5, seed=1)).all())
        True
    """
    return _weight_matrix(keys, replicates, seed, np.int64)


def _weight_matrix(keys: Sequence[str], replicates: int, seed: int, dtype, bases=None) -> np.ndarray:
    make = poisson_weights_maker()
    if make is not None:  # the same arithmetic in C (16 -> 1 us per document of 1,000 replicates)
        if bases is None:
            bases = stream_bases(keys, seed)
        weights = np.empty((len(bases), replicates), dtype=dtype)
        make(bases, _POISSON1_CDF, weights, replicates, dtype == np.float64)
        return weights
    uniform = _uniforms(counter_bit_matrix(keys, replicates, seed))
    return np.searchsorted(_POISSON1_CDF, uniform, side="right").astype(dtype)


def stream_bases(keys: Sequence[str], seed: int) -> np.ndarray:
    """Each key's counter stream base, stable_hash(f"{seed}\\x1f{key}"), uint64 (the
    Poisson weights' in numpy and in C)."""
    return _hashes(f"{seed}\x1f{key}" for key in keys)


# A block's hashes are the same for every system: remembered for this many blocks
# (131,072 documents of BLOCK = 512; about 11 MB: the blocks' ids and two arrays),
# so that the systems after the first find them (a system's documents are merged
# one system after another, in the same blocks; 1 us a document's hash).
_REMEMBERED_BLOCKS = 256


@lru_cache(maxsize=_REMEMBERED_BLOCKS)
def _block_bases(keys: tuple[str, ...], seed: int) -> np.ndarray:
    return stream_bases(keys, seed)


@lru_cache(maxsize=_REMEMBERED_BLOCKS)
def _block_key_hashes(keys: tuple[str, ...]) -> np.ndarray:
    return _hashes(keys)


@lru_cache(maxsize=4)
def poisson_weight_block(keys: tuple[str, ...], replicates: int, seed: int) -> np.ndarray:
    """`poisson_weight_matrix` as float64 (for a matrix product), remembered
    (read-only), the keys' hashes remembered longer: the same block of documents
    reaches the bootstrap of every system."""
    weights = _weight_matrix(keys, replicates, seed, np.float64, _block_bases(keys, seed))
    weights.flags.writeable = False
    return weights


def jackknife_bucket_block(keys: tuple[str, ...], buckets: int) -> np.ndarray:
    """`jackknife_bucket` of each key (read-only), the keys' hashes remembered as
    `poisson_weight_block`'s."""
    out = (_block_key_hashes(keys) % np.uint64(buckets)).astype(np.int64)
    out.flags.writeable = False
    return out


def counter_uniforms(key: str, count: int) -> np.ndarray:
    """Draws 0 .. count-1 of the stream named `key`: uniform on [0, 1), 53 bits each.

    Draw k is splitmix64(stable_hash(key) + k * golden gamma): a pure function of
    (key, k), so any draw can be made anywhere, in any order, on any machine.
    """
    return _uniforms(stream_bit_matrix([key], count)[0])


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The (lower, upper) empirical percentiles enclosing `confidence` percent."""
    ranked = np.sort(values)
    tail = (100 - confidence) / 200
    lower = ranked[int(np.floor(tail * (len(ranked) - 1)))]
    upper = ranked[int(np.ceil((1 - tail) * (len(ranked) - 1)))]
    return float(lower), float(upper)


def jackknife_bucket(key: str, buckets: int) -> int:
    """The delete-a-group jackknife bucket of a document."""
    return stable_hash(key) % buckets


def jackknife_standard_error(bucket_sums: np.ndarray, bucket_counts: np.ndarray) -> float:
    """Delete-a-group jackknife standard error of a mean.

    Args:
        bucket_sums: per bucket, the sum of the values in it.
        bucket_counts: per bucket, the number of values in it.

    Example (every bucket holds one value, so this is the classical jackknife,
    whose standard error of a mean is the sample standard deviation over sqrt(n)):
        >>> round(jackknife_standard_error(np.array([1, 2, 3, 4]), np.array([1, 1, 1, 1])), 6)
        0.645497
    """
    used = bucket_counts > 0
    sums, counts = bucket_sums[used], bucket_counts[used]
    groups = len(counts)
    total, n = sums.sum(), counts.sum()
    if groups < 2 or n - counts.max() <= 0:
        return float("nan")
    leave_out = (total - sums) / (n - counts)
    return float(np.sqrt((groups - 1) / groups * np.sum((leave_out - leave_out.mean()) ** 2)))
