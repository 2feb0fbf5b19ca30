"""The per-system CombineFn under the CombineFnTester contract, every output checked
against numbers computed independently here (loops over documents, statistics,
fractions, and the per-document Poisson weights)."""

import random
import statistics
from fractions import Fraction

import numpy as np
import pytest

from pipeline.beam.combiners import SystemCombineFn
from rouge_core.resampling import poisson_weights, stable_hash
from rouge_core.scoring import MetricStats
from tests.pipeline.beam.combinefn_contract import check_combine_fn


def stats(rng, weighted=False):
    ref, cand = rng.randint(1, 40), rng.randint(0, 40)
    hits = rng.randint(0, min(ref, cand))
    if weighted:  # ROUGE-W counts are f-weighted floats
        ref, cand, hits = ref**1.2, cand**1.2, hits * 1.37
    r, p = round(hits / ref, 5), round(hits / cand, 5) if cand else 0.0
    f = round(2 * r * p / (r + p), 5) if r + p else 0.0
    return MetricStats(ref, cand, hits, r, p, f)


def documents(n, seed=1):
    """(doc_id, [plain metric, weighted metric]) for n documents."""
    rng = random.Random(seed)
    return [(f"doc-{i:04d}", [stats(rng), stats(rng, weighted=True)]) for i in range(n)]


def elements(docs):
    """The CombineFn's elements: lists of (doc_id, values), of 1 to 5 documents."""
    rows = [(doc_id, np.array(metrics, dtype=np.float64).tobytes()) for doc_id, metrics in docs]
    sizes = random.Random(len(rows)).choices(range(1, 6), k=len(rows))
    out, start = [], 0
    for size in sizes:
        if start < len(rows):
            out.append(rows[start : start + size])
            start += size
    return out


def combine(docs, replicates=200, buckets=1000, trials=2):
    fn = SystemCombineFn(replicates, seed=3, buckets=buckets)
    return check_combine_fn(fn, elements(docs), trials=trials)


@pytest.mark.parametrize("n", [1, 2, 7, 60, 1300])
def test_means_and_micro_against_direct_sums(n):
    docs = documents(n, seed=n)
    metrics = combine(docs, trials=1 if n > 100 else 2)
    for m, out in enumerate(metrics):
        column = [d[m] for _, d in docs]
        assert out.documents == n
        for k, name in enumerate(("recall", "precision", "f_measure")):
            assert out.means[k] == pytest.approx(statistics.fmean(getattr(s, name) for s in column), abs=1e-12)
        # Pooled counts, summed as exact fractions here.
        hits = sum(Fraction(s.hits) for s in column)
        reference = sum(Fraction(s.reference_total) for s in column)
        candidates = sum(Fraction(s.candidate_total) for s in column)
        assert out.counts == (reference, candidates, hits)
        recall, precision, f = out.micro(0.5)
        assert recall == float(hits / reference)
        assert precision == (float(hits / candidates) if candidates else 0.0)
        assert f == pytest.approx(2 * recall * precision / (recall + precision) if recall + precision else 0.0, rel=1e-15)


def test_bootstrap_interval_equals_a_loop_over_replicates():
    docs = documents(700, seed=5)  # more than one block of 512
    metrics = combine(docs, replicates=300, trials=1)
    for m, out in enumerate(metrics):
        weights = np.array([poisson_weights(doc_id, 300, 3) for doc_id, _ in docs])  # (docs, replicates)
        f = np.array([d[m].f_measure for _, d in docs])
        means = [
            float(np.dot(weights[:, r], f) / weights[:, r].sum()) for r in range(300) if weights[:, r].sum() > 0
        ]
        low, high = out.bootstrap_interval(95.0)
        assert low == pytest.approx(np.quantile(means, 0.025, method="lower"), abs=1e-12)
        assert high == pytest.approx(np.quantile(means, 0.975, method="higher"), abs=1e-12)
        assert low < statistics.fmean(f) < high


def test_jackknife_with_one_document_per_bucket_is_the_classical_standard_error():
    # 5 documents in 1000 buckets, checked to be one per bucket, so the
    # delete-a-group jackknife is the delete-one jackknife: SE = s / sqrt(n).
    docs = documents(5, seed=7)
    assert len({stable_hash(doc_id) % 1000 for doc_id, _ in docs}) == 5
    metrics = combine(docs)
    for m, out in enumerate(metrics):
        values = [d[m].recall for _, d in docs]
        assert out.jackknife_se[0] == pytest.approx(statistics.stdev(values) / np.sqrt(5), rel=1e-9)


def test_no_documents():
    fn = SystemCombineFn(10, seed=0, buckets=10)
    assert fn.extract_output(fn.create_accumulator()) == []


def test_accumulator_size_does_not_grow_with_documents():
    """A partial accumulator of one document is that document (a few hundred bytes,
    not dense replicate arrays); a whole system's is the same size at 2,000 documents
    as at 600 (no document is kept once it is in the sums)."""
    import pickle

    fn = SystemCombineFn(1000, seed=3, buckets=1000)
    one = fn.add_input(fn.create_accumulator(), elements(documents(1))[0])  # one document
    assert len(pickle.dumps(one)) < 1000

    def merged_size(n):
        acc = fn.create_accumulator()
        for element in elements(documents(n)):
            acc = fn.add_input(acc, element)
        return len(pickle.dumps(acc.flush(3)))

    assert abs(merged_size(2000) - merged_size(600)) < 16  # the count n takes a byte more
