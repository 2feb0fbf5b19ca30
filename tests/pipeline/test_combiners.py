"""Every CombineFn of the pipeline, under the CombineFnTester contract, and its
output checked against numbers computed independently here."""

import random
import statistics

import numpy as np
import pytest

from pipeline.combiners import (
    GatherDocumentsCombineFn,
    JackknifeCombineFn,
    MeanCombineFn,
    MicroCombineFn,
    PoissonBootstrapCombineFn,
)
from rouge_core.scoring import MetricStats
from tests.pipeline.combinefn_contract import check_combine_fn


def documents(n, seed=1, weighted=False):
    rng = random.Random(seed)
    items = []
    for i in range(n):
        ref, cand = rng.randint(1, 40), rng.randint(0, 40)
        hits = rng.randint(0, min(ref, cand))
        if weighted:  # ROUGE-W counts are f-weighted floats
            ref, cand, hits = ref**1.2, cand**1.2, hits * 1.37
        r, p = round(hits / ref, 5), round(hits / cand, 5) if cand else 0.0
        f = round(2 * r * p / (r + p), 5) if r + p else 0.0
        items.append((f"doc-{i:04d}", MetricStats(ref, cand, hits, r, p, f)))
    return items


@pytest.mark.parametrize("n", [1, 2, 7, 60])
def test_mean(n):
    items = documents(n)
    out = check_combine_fn(MeanCombineFn(), items)
    assert out["documents"] == n
    assert out["f_measure"] == pytest.approx(statistics.fmean(s.f_measure for _, s in items), abs=1e-12)


def test_mean_of_nothing():
    assert MeanCombineFn().extract_output(MeanCombineFn().create_accumulator())["recall"] is None


@pytest.mark.parametrize("weighted", [False, True])
def test_micro_pools_counts(weighted):
    items = documents(40, weighted=weighted)
    out = check_combine_fn(MicroCombineFn(0.5), items)
    hits = sum(s.hits for _, s in items)
    assert out["recall"] == pytest.approx(hits / sum(s.reference_total for _, s in items), rel=1e-12)
    assert out["precision"] == pytest.approx(hits / sum(s.candidate_total for _, s in items), rel=1e-12)


def test_poisson_bootstrap_interval_brackets_the_mean():
    items = documents(80)
    out = check_combine_fn(PoissonBootstrapCombineFn(200, seed=3, confidence=95.0), items)
    mean = statistics.fmean(s.f_measure for _, s in items)
    low, high = out["f_measure"]
    assert low < mean < high
    # The interval has roughly the width of a normal 95% interval of the mean.
    se = statistics.stdev(s.f_measure for _, s in items) / len(items) ** 0.5
    assert 0.6 < (high - low) / (2 * 1.96 * se) < 1.4


def test_jackknife_with_one_document_per_bucket_is_the_classical_standard_error():
    # 5 documents in 1000 buckets: almost surely one per bucket, so the
    # delete-a-group jackknife is the delete-one jackknife: SE = s / sqrt(n).
    items = documents(5, seed=7)
    out = check_combine_fn(JackknifeCombineFn(1000), items)
    values = [s.recall for _, s in items]
    assert out["recall"] == pytest.approx(statistics.stdev(values) / np.sqrt(5), rel=1e-9)


def test_gather_returns_documents_sorted_by_doc_id():
    items = documents(30)
    shuffled = items[:]
    random.Random(2).shuffle(shuffled)
    assert check_combine_fn(GatherDocumentsCombineFn(), shuffled) == items
