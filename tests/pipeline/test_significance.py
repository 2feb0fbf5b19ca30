"""The paired-significance CombineFn under the CombineFnTester contract, and the
PairedSignificance transform in a real Beam pipeline, both checked against the
independent reference computation of tests/core/test_significance.py."""

import csv
import random

import apache_beam as beam
import numpy as np
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from rouge_core.aggregate import stats_bytes
from pipeline.beam.documents import ScoredDocument
from pipeline.io.tables import SIGNIFICANCE_COLUMNS, names
from pipeline.beam.significance import (
    PairedSignificance,
    PairedSignificanceCombineFn,
    write_significance_tables,
)
from rouge_core.scoring import MetricStats
from tests.core.test_significance import reference_paired_test
from tests.pipeline.combinefn_contract import check_combine_fn
from tests.pipeline.runs import IN_MEMORY, TWO_PROCESSES


def paired_items(n, seed):
    """(doc_id, a's R/P/F, b's R/P/F) of one metric; F is R, so one column repeats."""
    rng = random.Random(seed)
    return [
        (f"d{i:03d}", (a, round(rng.random(), 5), a), (b, round(rng.random(), 5), b))
        for i in range(n)
        for a, b in [(round(rng.random(), 5), round(rng.random() * 0.8, 5))]
    ]


def as_values(rpf) -> bytes:
    """One metric's ScoredDocument values, R/P/F given (the counts are unused here)."""
    return np.array([[1.0, 1.0, 1.0, *rpf]]).tobytes()


@pytest.mark.parametrize("n", [1, 3, 40, 1100])
def test_combine_fn_contract_and_values(n):
    items = paired_items(n, seed=n)
    fn = PairedSignificanceCombineFn(150, seed=4, confidence=90.0)
    out = check_combine_fn(fn, [(d, as_values(a), as_values(b)) for d, a, b in items], trials=1 if n > 100 else 3)
    assert len(out) == 3  # recall, precision, f_measure of the one metric
    for k in range(3):
        expected = reference_paired_test([d for d, _, _ in items], [a[k] for _, a, _ in items], [b[k] for _, _, b in items], 150, 4, 90.0)
        assert out[k].documents == n
        for name, value in expected.items():
            assert getattr(out[k], name) == pytest.approx(value, abs=1e-9), (k, name)
    assert out[0] == out[2]


def test_combine_fn_of_nothing():
    fn = PairedSignificanceCombineFn(10, seed=0, confidence=95.0)
    assert fn.extract_output(fn.create_accumulator()) == []


TAGS = ["ROUGE-1", "ROUGE-L"]
SYSTEMS = {"alpha": 0.0, "beta": 0.06, "gamma": 0.015}  # how much worse than alpha, on average


def scored_documents():
    rng = random.Random(11)
    documents = []
    for i in range(24):
        base = rng.uniform(0.2, 0.6)
        for system, drop in SYSTEMS.items():
            if system == "gamma" and i % 6 == 0:
                continue  # gamma misses 4 documents: pairs with it use 20
            scores = {}
            for tag in ("ROUGE-1", "ROUGE-L"):
                r, p = (round(min(1, max(0, base - drop + rng.gauss(0, 0.05))), 5) for _ in "rp")
                f = round(2 * r * p / (r + p), 5) if r + p else 0.0
                scores[tag] = MetricStats(10, 10, 5, r, p, f)
            documents.append(ScoredDocument("default", system, f"doc-{i:02d}", stats_bytes(scores, TAGS)))
    return documents


def run_significance(folder, beam_args=IN_MEMORY, **options):
    with beam.Pipeline(options=PipelineOptions(beam_args)) as p:
        transform = PairedSignificance({"default": TAGS}, **options)
        (
            p
            | beam.Create(scored_documents())
            | transform
            | beam.combiners.ToList()
            | beam.Map(write_significance_tables, str(folder), {"default": TAGS}, transform.describe())
        )
    return pq.read_table(folder / "significance.parquet").to_pylist()


def by_pair(documents, tag, measure, a, b):
    values = {(d.system, d.doc_id): getattr(d.scores(TAGS)[tag], measure) for d in documents}
    shared = sorted(doc for (s, doc) in values if s == a and (b, doc) in values)
    return shared, [values[a, d] for d in shared], [values[b, d] for d in shared]


def test_all_pairs_in_a_pipeline(tmp_path):
    rows = run_significance(tmp_path, replicates=120, seed=5, confidence=95.0)
    documents = scored_documents()
    assert pq.read_schema(tmp_path / "significance.parquet").names == names(SIGNIFICANCE_COLUMNS)
    keys = [(r["metric"], r["measure"], r["system_a"], r["system_b"]) for r in rows]
    pairs = [("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")]
    assert keys == [
        (t, m, a, b)
        for t in ("ROUGE-1", "ROUGE-L")
        for m in ("recall", "precision", "f_measure")
        for a, b in pairs
    ]
    for row in rows:
        shared, a, b = by_pair(documents, row["metric"], row["measure"], row["system_a"], row["system_b"])
        assert row["documents"] == len(shared) == (24 if row["system_b"] == "beta" else 20)
        expected = reference_paired_test(shared, a, b, 120, 5, 95.0)
        for name, value in expected.items():
            assert row[name] == pytest.approx(value, abs=1e-9), name
    # Holm within each (metric, measure), by hand: m = 3
    for i in range(0, len(rows), 3):
        family = rows[i : i + 3]
        ranked = sorted(family, key=lambda r: r["p_permutation"])
        running = 0
        for j, r in enumerate(ranked):
            running = max(running, min(1, (3 - j) * r["p_permutation"]))
            assert r["p_adjusted"] == pytest.approx(running)
    # beta is 6 points worse than alpha on 24 documents: a significant F difference.
    assert [
        r["p_adjusted"] < 0.05 and r["difference"] > 0.03
        for r in rows
        if (r["measure"], r["system_a"], r["system_b"]) == ("f_measure", "alpha", "beta")
    ] == [True, True]
    with open(tmp_path / "significance.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [float(r["p_adjusted"]) for r in table] == [r["p_adjusted"] for r in rows]
    markdown = (tmp_path / "significance.md").read_text()
    assert "120 Poisson replicates" in markdown and "| ROUGE-L | f_measure | beta | gamma | 20 |" in markdown


def test_against_a_baseline_with_benjamini_hochberg(tmp_path):
    rows = run_significance(tmp_path, pairs_mode="beta", replicates=60, seed=1, adjust="bh")
    assert {(r["system_a"], r["system_b"]) for r in rows} == {("alpha", "beta"), ("gamma", "beta")}
    for i in range(0, len(rows), 2):
        p1, p2 = sorted(r["p_permutation"] for r in rows[i : i + 2])
        expected = {p1: min(2 * p1, p2), p2: p2}  # BH with m = 2, by hand
        for r in rows[i : i + 2]:
            assert r["p_adjusted"] == pytest.approx(expected[r["p_permutation"]])


def test_the_table_is_byte_identical_in_worker_processes(tmp_path):
    run_significance(tmp_path / "one", replicates=50, seed=2)
    run_significance(tmp_path / "two", beam_args=TWO_PROCESSES, replicates=50, seed=2)
    for name in ("significance.parquet", "significance.csv", "significance.md"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
