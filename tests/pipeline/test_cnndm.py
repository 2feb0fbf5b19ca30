"""The real CNN/DailyMail test outputs in ../shared/data (read from there, never
copied): the pipeline's ROUGE-1.5.5 report against the official script's, and
See et al.'s published table reproduced with pyrouge's document numbering."""

import os
from decimal import ROUND_HALF_UP, Decimal

import pyarrow.parquet as pq
import pytest
from scipy import stats

from tests.conftest import GOLDEN, SHARED_DATA
from tests.pipeline.render.views import chart_labels, first_chart_rows, official, report_f_cells
from tests.pipeline.runs import TWO_PROCESSES, run_pipeline

CNNDM = SHARED_DATA / "cnndm_test_outputs"

pytestmark = pytest.mark.skipif(
    not CNNDM.is_dir() and not os.environ.get("CI"),  # in CI the corpus must be there: fail, not skip
    reason=f"{CNNDM} is absent (the corpus is not copied here)",
)


def as_paper(printed: float) -> Decimal:
    """ROUGE's printed F (5 decimals) as a paper prints it: x100, 2 decimals, half up."""
    return (Decimal("%.5f" % printed) * 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@pytest.mark.slow
def test_see_et_al_table_is_reproduced_with_pyrouge_numbering(tmp_path):
    # See, Liu and Manning (2017), table 1, ROUGE F1 x 100, R-L.
    paper = {
        "see2017_pointer_gen_cov": ("39.53", "17.28", "36.38"),
        "see2017_pointer_gen": ("36.44", "15.66", "33.42"),
        "see2017_baseline_50k": ("31.33", "11.81", "28.83"),
    }
    # and R-L do not depend on -w/-2/-U, so they are left out to save time.
    run_pipeline(
        tmp_path / "out",
        [CNNDM / "see2017_*.jsonl.gz"],
        flags="-c 95 -r 1000 -n 2 -m -a",
        eval_ids="index",
        beam_args=TWO_PROCESSES,
    )
    rows = pq.read_table(tmp_path / "out" / "system_scores.parquet").to_pylist()
    printed = {(r["system"], r["metric"]): r["rouge155_f_measure"] for r in rows}
    for system, expected in paper.items():
        got = tuple(str(as_paper(printed[system, tag])) for tag in ("ROUGE-1", "ROUGE-2", "ROUGE-L"))
        assert got == expected, system
    # With doc_ids as evaluation ids the same scores print differently (ROUGE-1.5.5
    # averages bootstrap means in evaluation-id order): 0.36433 for pointer-gen R-1.
    mean = {(r["system"], r["metric"]): r["f_measure"] for r in rows}
    assert abs(mean["see2017_pointer_gen", "ROUGE-1"] - printed["see2017_pointer_gen", "ROUGE-1"]) < 1e-3


@pytest.mark.slow
def test_rouge155_report_equals_the_official_scripts_on_all_45960_pairs(tmp_path):
    golden = GOLDEN.parent / "cnndm" / "rouge155-c95-2-1-U-r1000-n4-w1.2-a-m.txt"
    record = run_pipeline(
        tmp_path / "out",
        [CNNDM / "*.jsonl.gz"],
        flags="-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m",
        conflicting_references="keep",
        beam_args=TWO_PROCESSES,
    )
    assert record["counts"]["scored"] == 45_960 and record["counts"]["errors"] == 0
    assert (tmp_path / "out" / "rouge155.txt").read_text() == golden.read_text()
    # report.html: every chart label equals its table cell and the official digits, and
    # the first row of charts is on the first screen (1,400 x 900) under its one warning line.
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    digits = {key: paper for key, (_, paper) in official(golden.read_text()).items()}
    assert len(digits) == 4 * 8
    assert chart_labels(page) == report_f_cells(page, sorted({metric for metric, _ in digits})) == digits
    assert page.count('<div class="warning') == 1
    assert len([y for y in first_chart_rows(tmp_path / "out" / "report.html", tmp_path) if y < 900]) >= 8


# ------------------------------------------------------------------ statistics end to end
def _blake(text: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _stream(name: str, count: int):
    """splitmix64(h + k * gamma) for k = 0 .. count-1, h = blake2b-64(name): the
    counter-based draws as the README defines them, written again here."""
    import numpy as np

    gamma = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):  # arithmetic modulo 2**64
        x = np.uint64(_blake(name)) + (np.arange(count, dtype=np.uint64) + np.uint64(1)) * gamma
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _poisson(name: str, count: int):
    import math

    import numpy as np

    uniform = (_stream(name, count) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    cdf = np.cumsum([math.exp(-1) / math.factorial(k) for k in range(12)])
    return np.searchsorted(cdf, uniform, side="right")


@pytest.mark.slow
def test_every_statistic_of_a_real_run_equals_an_independent_computation(tmp_path):
    """Pointer-generator with and without coverage on all 11,490 CNN/DM documents: the
    per-system table and the significance table against numpy over the run's own
    per-document table, with the hashing rewritten here, so that a wiring mistake
    in the graph cannot pass."""
    import gzip
    import json

    import numpy as np

    from tests.pipeline.runs import write_jsonl

    rows = []
    for system in ("see2017_pointer_gen", "see2017_pointer_gen_cov"):
        with gzip.open(CNNDM / f"{system}.jsonl.gz", "rt", encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    record = run_pipeline(tmp_path / "out", [data], flags="-n 2 -m -r 100", beam_args=TWO_PROCESSES)
    assert record["counts"]["scored"] == 2 * 11_490
    docs = pq.read_table(tmp_path / "out" / "per_document").to_pylist()
    table = {(r["system"], r["metric"]): r for r in pq.read_table(tmp_path / "out" / "system_scores.parquet").to_pylist()}
    seed, buckets = 0, 20
    weights = {}
    for (system, metric), row in table.items():
        mine = sorted((d for d in docs if d["system"] == system and d["metric"] == metric), key=lambda d: d["doc_id"])
        n = len(mine)
        f = np.array([round(d["f_measure"] * 100_000) for d in mine], dtype=np.int64)
        assert row["documents"] == n == 11_490
        assert row["f_measure"] == f.sum() / (n * 100_000)
        hits = sum(d["hits"] for d in mine)
        assert row["micro_recall"] == pytest.approx(hits / sum(d["reference_total"] for d in mine), abs=1e-12)
        assert row["micro_precision"] == pytest.approx(hits / sum(d["candidate_total"] for d in mine), abs=1e-12)
        # Delete-a-group jackknife, groups by blake2b(doc_id) mod 20.
        group = np.array([_blake(d["doc_id"]) % buckets for d in mine])
        theta = np.array([(f.sum() - f[group == g].sum()) / (n - (group == g).sum()) / 100_000 for g in range(buckets)])
        se = np.sqrt((buckets - 1) / buckets * np.sum((theta - theta.mean()) ** 2))
        assert row["jackknife_se_f_measure"] == pytest.approx(se, rel=1e-9)
        # Poisson bootstrap of the mean F (1000 replicates), percentile interval.
        w = np.array([weights.setdefault(d["doc_id"], _poisson(f"{seed}\x1f{d['doc_id']}", 1000)) for d in mine])
        means = (w * f[:, None]).sum(axis=0) / (w.sum(axis=0) * 100_000)
        ranked = np.sort(means)
        low, high = ranked[int(np.floor(0.025 * 999))], ranked[int(np.ceil(0.975 * 999))]
        assert (row["bootstrap_f_measure_low"], row["bootstrap_f_measure_high"]) == pytest.approx((low, high), abs=1e-12)
    # Paired significance, ROUGE-1..L F: coverage is better; the paired t-test by scipy, p < 0.001.
    significance = pq.read_table(tmp_path / "out" / "significance.parquet").to_pylist()
    for metric in ("ROUGE-1", "ROUGE-2", "ROUGE-L"):
        [row] = [r for r in significance if r["metric"] == metric and r["measure"] == "f_measure"]
        a = {d["doc_id"]: round(d["f_measure"] * 100_000) for d in docs if d["system"] == row["system_a"] and d["metric"] == metric}
        b = {d["doc_id"]: round(d["f_measure"] * 100_000) for d in docs if d["system"] == row["system_b"] and d["metric"] == metric}
        ids = sorted(a)
        d = np.array([a[i] - b[i] for i in ids], dtype=np.int64)
        assert row["documents"] == len(ids) and row["difference"] == pytest.approx(d.sum() / (len(ids) * 100_000), abs=1e-15)
        expected = stats.ttest_rel([a[i] for i in ids], [b[i] for i in ids])
        assert row["method"] == "t" and row["statistic"] == pytest.approx(expected.statistic, rel=1e-9)
        assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
        assert row["system_a"] == "see2017_pointer_gen" and row["difference"] < 0
        assert row["p_adjusted"] < 0.001


@pytest.mark.slow
def test_compare_flags_the_drop_from_coverage_to_no_coverage(tmp_path):
    """Old run: pointer-generator with coverage as "model"; new run: without coverage
    as "model" (2,000 documents each): a significant drop of about 3 points, so
    `compare OLD NEW --fail-on-drop 1` exits 1, and the run against itself exits 0."""
    import gzip
    import json
    import subprocess
    import sys

    from tests.pipeline.runs import write_jsonl

    folders = {}
    for name, system in (("old", "see2017_pointer_gen_cov"), ("new", "see2017_pointer_gen")):
        with gzip.open(CNNDM / f"{system}.jsonl.gz", "rt", encoding="utf-8") as fh:
            rows = [dict(json.loads(line), system="model") for _, line in zip(range(2000), fh)]
        folders[name] = tmp_path / name
        run_pipeline(folders[name], [write_jsonl(tmp_path / f"{name}.jsonl", rows)], flags="-n 2 -m -r 100")

    def compare(*args):
        return subprocess.run([sys.executable, "-m", "pipeline", "compare", *map(str, args)], capture_output=True, text=True)

    drop = compare(folders["old"], folders["new"], "--fail-on-drop", "1")
    assert drop.returncode == 1, drop.stdout + drop.stderr
    assert compare(folders["old"], folders["old"], "--fail-on-drop", "1").returncode == 0
    assert compare(folders["new"], folders["old"], "--fail-on-drop", "1").returncode == 0  # a rise is no drop
