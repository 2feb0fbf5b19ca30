"""The paired-significance CombineFn under the CombineFnTester contract, and the
PairedSignificance transform in a real Beam pipeline, both checked against scipy
(ttest_rel; permutation_test enumerating every sign pattern) on the documents
each pair of systems shared, and Holm / Benjamini-Hochberg by hand."""

import csv
import random

import apache_beam as beam
import numpy as np
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from scipy import stats

from pipeline.beam.documents import ScoredDocument, batches_of
from pipeline.beam.significance import (
    Block,
    PairedSignificance,
    SignificanceCombineFn,
    block_rows,
    significance_block,
    write_significance_tables,
)
from pipeline.config import SignificanceConfig
from pipeline.io.tables import SIGNIFICANCE_COLUMNS, names
from rouge_core import significance
from rouge_core.aggregate import stats_bytes
from rouge_core.scoring import MetricStats
from tests.conftest import markdown_cells
from tests.pipeline.beam.combinefn_contract import check_combine_fn
from tests.pipeline.runs import IN_MEMORY, TWO_PROCESSES


def expected_p(a, b):
    """The paired test's p by scipy: every sign pattern up to 20 documents, else ttest_rel."""
    a, b = np.asarray(a), np.asarray(b)
    if len(a) <= 20:
        return stats.permutation_test(
            (a - b,), np.mean, permutation_type="samples", vectorized=True, n_resamples=np.inf
        ).pvalue
    return max(stats.ttest_rel(a, b).pvalue, 2.0 ** (1 - len(a)))


class BlockFn(SignificanceCombineFn):
    """The CombineFn with the tests of its output, so outputs compare as table rows."""

    def extract_output(self, acc):
        key = ("default", "ROUGE-1")
        _, block = significance_block((key, super().extract_output(acc)), "all", 90.0, "holm")
        return block_rows(block, 0, len(block["documents"]))


def metric_items(n, seed):
    """(doc_id, systems, their R/P/F units) of one metric: three systems, "c" misses
    every fifth document; b is 3 points below a on average."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        base = rng.uniform(20_000, 60_000)
        systems = ("a", "b") if i % 5 == 4 else ("a", "b", "c")
        rpf = []
        for system in systems:
            r = round(base - (3000 if system == "b" else 0) + rng.gauss(0, 8000))
            rpf += [max(0, r), rng.randrange(100_001), max(0, r)]
        items.append((f"d{i:04d}", systems, tuple(rpf)))
    return items


def block_of(items):
    """Items (doc_id, systems, R/P/F units of each) as one Block, cell by cell."""
    systems = sorted({system for _, names_, _ in items for system in names_})
    x = np.zeros((len(items), len(systems), 3), dtype=np.int64)
    present = np.zeros((len(items), len(systems)), dtype=bool)
    for i, (_, names_, rpf) in enumerate(items):
        for j, system in enumerate(names_):
            x[i, systems.index(system)] = rpf[3 * j : 3 * j + 3]
            present[i, systems.index(system)] = True
    return Block([doc_id for doc_id, _, _ in items], systems, x, present)


@pytest.mark.parametrize("n", [1, 3, 15, 40, 600])
def test_combine_fn_contract_and_values(n):
    items = metric_items(n, seed=n)
    cuts = [0, *range(1, len(items), 2), len(items)]  # blocks of 1 or 2 documents, as batches give them
    chunks = [items[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]
    assert [item for chunk in chunks for item in chunk] == items
    rows = check_combine_fn(BlockFn(), [block_of(chunk) for chunk in chunks], trials=1 if n > 100 else 3)
    assert [(r["measure"], r["system_a"], r["system_b"]) for r in rows] == [
        (m, a, b)
        for m in ("recall", "precision", "f_measure")
        for a, b in (("a", "b"), ("a", "c"), ("b", "c"))
    ] or n == 1
    for r in rows:
        k = ("recall", "precision", "f_measure").index(r["measure"])
        pairs = [
            (rpf[3 * s.index(r["system_a"]) + k] / 1e5, rpf[3 * s.index(r["system_b"]) + k] / 1e5)
            for _, s, rpf in items
            if r["system_a"] in s and r["system_b"] in s
        ]
        a, b = np.array(pairs).T
        assert r["documents"] == len(pairs)
        assert r["difference"] == pytest.approx(a.mean() - b.mean(), abs=1e-12)
        assert r["method"] == ("exact sign-flip" if n <= 20 else "t")
        if len(pairs) > 1:
            assert r["p_value"] == pytest.approx(expected_p(a, b), rel=1e-9)
    f_ab = next(r for r in rows if (r["measure"], r["system_a"], r["system_b"]) == ("f_measure", "a", "b"))
    if n == 600:
        assert f_ab["p_adjusted"] < 1e-6 and f_ab["ci_low"] > 0


def test_combine_fn_of_nothing():
    assert BlockFn().extract_output(BlockFn().create_accumulator()) == []


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


def run_significance(folder, beam_args=IN_MEMORY, documents=None, **options):
    with beam.Pipeline(options=PipelineOptions(beam_args)) as p:
        transform = PairedSignificance({"default": TAGS}, **options)
        (
            p
            | beam.Create(batches_of(documents or scored_documents()))
            | transform
            | beam.combiners.ToList()
            | beam.Map(write_significance_tables, str(folder), {"default": TAGS}, transform.describe())
        )
    return pq.read_table(folder / "significance.parquet").to_pylist()


def by_pair(documents, tag, measure, a, b):
    values = {(d.system, d.doc_id): getattr(d.scores(TAGS)[tag], measure) for d in documents}
    shared = sorted(doc for (s, doc) in values if s == a and (b, doc) in values)
    return shared, [values[a, d] for d in shared], [values[b, d] for d in shared]


def holm_by_hand(p):
    ranked = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [None] * len(p), 0
    for j, i in enumerate(ranked):
        running = max(running, min(1, (len(p) - j) * p[i]))
        out[i] = running
    return out


def test_all_pairs_in_a_pipeline(tmp_path):
    rows = run_significance(tmp_path, confidence=95.0)
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
        # 24 documents in the run: every pair by Student's t (the exact test needs the
        # documents at hand, kept up to 20 per run), pairs with gamma on their 20 shared ones
        expected = stats.ttest_rel(a, b)
        interval = expected.confidence_interval(0.95)
        assert row["method"] == "t"
        # clipped at the floor 2^(1-n): alpha vs beta on 24 documents reaches it
        assert row["p_value"] == pytest.approx(max(expected.pvalue, 2.0 ** (1 - len(shared))), rel=1e-9)
        assert row["statistic"] == pytest.approx(expected.statistic, rel=1e-9)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((interval.low, interval.high), abs=1e-12)
        assert row["mean_a"] - row["mean_b"] == pytest.approx(np.mean(a) - np.mean(b), abs=1e-12)
        assert row["p_floor"] == 2.0 ** (1 - len(shared))
    # Holm within each (metric, measure), by hand: m = 3
    for i in range(0, len(rows), 3):
        family = rows[i : i + 3]
        assert [r["p_adjusted"] for r in family] == pytest.approx(
            holm_by_hand([r["p_value"] for r in family])
        )
    # beta is 6 points worse than alpha on 24 documents: a significant F difference.
    assert [
        r["p_adjusted"] < 0.001 and r["difference"] > 0.03
        for r in rows
        if (r["measure"], r["system_a"], r["system_b"]) == ("f_measure", "alpha", "beta")
    ] == [True, True]
    with open(tmp_path / "significance.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0]) == names(SIGNIFICANCE_COLUMNS)
    assert [float(r["p_adjusted"]) for r in table] == [r["p_adjusted"] for r in rows]
    markdown = (tmp_path / "significance.md").read_text()
    assert "Student's t with n - 1 degrees of freedom" in markdown
    assert ["ROUGE-L", r"f\_measure", "beta", "gamma", "20"] in [row[:5] for row in markdown_cells(markdown)]


def test_few_documents_get_the_exact_test(tmp_path):
    documents = [d for d in scored_documents() if int(d.doc_id[-2:]) < 9]  # 9 documents
    rows = run_significance(tmp_path, documents=documents)
    for row in rows:
        shared, a, b = by_pair(documents, row["metric"], row["measure"], row["system_a"], row["system_b"])
        assert row["method"] == "exact sign-flip" and row["documents"] == len(shared)
        assert row["p_value"] == pytest.approx(expected_p(a, b), rel=1e-12)
        assert row["p_floor"] == 2.0 ** (1 - len(shared))
    # gamma shares 7 documents with the others (it misses doc-00 and doc-06): p >= 2^-6
    assert min(r["p_value"] for r in rows if r["system_b"] == "gamma") >= 2.0**-6


def test_against_a_baseline_with_benjamini_hochberg(tmp_path):
    rows = run_significance(tmp_path, pairs_mode="beta", adjust="bh")
    assert {(r["system_a"], r["system_b"]) for r in rows} == {("alpha", "beta"), ("gamma", "beta")}
    for i in range(0, len(rows), 2):
        p1, p2 = sorted(r["p_value"] for r in rows[i : i + 2])
        expected = {p1: min(2 * p1, p2), p2: p2}  # BH with m = 2, by hand
        for r in rows[i : i + 2]:
            assert r["p_adjusted"] == pytest.approx(expected[r["p_value"]])


def test_one_system_gives_an_empty_table(tmp_path):
    documents = [d for d in scored_documents() if d.system == "alpha"]
    assert run_significance(tmp_path, documents=documents) == []
    assert (tmp_path / "significance.csv").read_text().startswith("profile,metric,measure,")


def test_the_run_signature_names_the_method():
    assert SignificanceConfig().signature() == f"{significance.SIGNIFICANCE_METHOD}|pairs:all|adjust:holm"
    assert SignificanceConfig(baseline="b", adjust="bh").signature().endswith("|pairs:baseline=b|adjust:bh")


def test_the_table_is_byte_identical_in_worker_processes(tmp_path):
    run_significance(tmp_path / "one")
    run_significance(tmp_path / "two", beam_args=TWO_PROCESSES)
    for name in ("significance.parquet", "significance.csv", "significance.md"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_a_batch_becomes_one_block_per_metric_and_a_document_scored_twice_is_refused():
    from pipeline.beam.significance import metric_documents  # noqa: PLC0415

    one = stats_bytes({"R1": MetricStats(1, 1, 1, 0.5, 0.25, 0.33333)}, ["R1"])
    rows = [("b", "d1", one), ("a", "d1", one), ("a", "d2", one)]
    ((key, block),) = metric_documents(("p", rows), {"p": ["R1"]})
    assert key == ("p", "R1") and block.doc_ids == ["d1", "d2"] and block.systems == ["a", "b"]
    assert block.present.tolist() == [[True, True], [True, False]]
    assert block.units.tolist() == [[[50000, 25000, 33333]] * 2, [[50000, 25000, 33333], [0, 0, 0]]]
    with pytest.raises(ValueError, match="scored document 'd2' twice: 'a'"):
        list(metric_documents(("p", rows + [("a", "d2", one)]), {"p": ["R1"]}))
