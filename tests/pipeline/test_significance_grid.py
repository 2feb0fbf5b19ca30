"""The whole run's significance table on a small grid of systems x documents, some
documents missing for some systems, equals a direct computation from the run's own
per-document scores (issue 18): every pair of systems on the documents both scored,
the paired sign-flip test of docs/significance.md computed here independently (all
2^n sign patterns enumerated for a run of at most 20 documents; scipy's ttest_rel,
clipped at 2^(1-n), beyond), the t interval with scipy's t quantile, and Holm by
hand.  The other check of issue 22 (significance memory bounded in the number of
systems) runs 100 systems x 5 documents in a child process and bounds its peak."""

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

from tests.pipeline.runs import run_pipeline, write_jsonl

WORDS = "the a of to in cat dog sat mat ran fast slow red blue big small house tree river stone".split()
MEASURES = ("recall", "precision", "f_measure")


def grid_rows(systems: int, documents: int, missing: dict[int, set[int]], seed: int) -> list[dict]:
    """Joined-form rows: a random reference per document; system s keeps each reference
    word with its own probability and replaces the rest, so systems differ, and skips
    the documents in missing[s]."""
    rng = random.Random(seed)
    rows = []
    for d in range(documents):
        reference = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(12, 30)))
        for s in range(systems):
            if d in missing.get(s, ()):
                continue
            keep = 0.35 + 0.12 * s
            words = [w if rng.random() < keep else rng.choice(WORDS) for w in reference.split()]
            rows.append(
                {"system": f"sys{s}", "doc_id": f"doc-{d:03d}", "candidate": " ".join(words), "references": [reference]}
            )
    return rows


def exact_sign_flip_p(d: list[int]) -> float:
    """Share of the 2^n sign patterns whose |sum| reaches the observed |sum| (integers)."""
    observed = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= observed for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


def holm(p: list[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - j) * p[i]))
        out[i] = running
    return out


def check_table(output: Path, documents_in_run: int) -> int:
    """Compare every significance row with the direct computation; returns the rows checked."""
    per_doc = pq.read_table(output / "per_document").to_pylist()
    units: dict = {}  # (metric, measure, system) -> {doc_id: score in units of 1e-5}
    for r in per_doc:
        for m in MEASURES:
            units.setdefault((r["metric"], m, r["system"]), {})[r["doc_id"]] = round(r[m] * 100_000)
    table = pq.read_table(output / "significance.parquet").to_pylist()
    systems = sorted({r["system"] for r in per_doc})
    metrics = sorted({r["metric"] for r in per_doc})
    expected_keys = [(t, m, a, b) for t in metrics for m in MEASURES for a, b in itertools.combinations(systems, 2)]
    assert sorted((r["metric"], r["measure"], r["system_a"], r["system_b"]) for r in table) == sorted(expected_keys)
    families: dict = {}
    for row in table:
        a = units[row["metric"], row["measure"], row["system_a"]]
        b = units[row["metric"], row["measure"], row["system_b"]]
        shared = sorted(a.keys() & b.keys())
        n = len(shared)
        x = np.array([a[i] for i in shared], dtype=np.int64)
        y = np.array([b[i] for i in shared], dtype=np.int64)
        d = x - y
        assert row["documents"] == n
        assert row["mean_a"] == pytest.approx(x.mean() / 1e5, abs=1e-12)
        assert row["mean_b"] == pytest.approx(y.mean() / 1e5, abs=1e-12)
        assert row["difference"] == pytest.approx(d.mean() / 1e5, abs=1e-12)
        sd = d.std(ddof=1)
        assert row["effect_size"] == pytest.approx(d.mean() / sd, rel=1e-9)
        ttest = stats.ttest_rel(x, y)
        assert row["statistic"] == pytest.approx(ttest.statistic, rel=1e-9)
        half = stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n) / 1e5
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((d.mean() / 1e5 - half, d.mean() / 1e5 + half), abs=1e-12)
        assert row["p_floor"] == 2.0 ** (1 - n)
        if documents_in_run <= 20:  # the exact test: every sign pattern
            assert row["method"] == "exact sign-flip"
            assert row["p_value"] == exact_sign_flip_p(d.tolist())
        else:
            assert row["method"] == "t"
            assert row["p_value"] == pytest.approx(max(ttest.pvalue, 2.0 ** (1 - n)), rel=1e-9)
        families.setdefault((row["metric"], row["measure"]), []).append(row)
    for rows in families.values():
        assert [r["p_adjusted"] for r in rows] == pytest.approx(holm([r["p_value"] for r in rows]), rel=1e-12)
    return len(table)


@pytest.mark.parametrize(
    "documents, missing",
    [
        # 6 documents: the exact test; pairs share 6, 5, 4 or 3 documents
        (6, {1: {2}, 3: {0, 5}}),
        # 30 documents: Student's t; pairs share 24 to 30 documents
        (30, {0: {3, 17}, 2: {1, 2, 29}, 3: {10}}),
    ],
)
def test_the_significance_table_equals_a_direct_computation(tmp_path, documents, missing):
    rows = grid_rows(4, documents, missing, seed=documents)
    assert len(rows) == 4 * documents - sum(map(len, missing.values()))
    run_pipeline(tmp_path / "out", [write_jsonl(tmp_path / "in.jsonl", rows)], flags="-n 2 -m")
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["counts"]["scored"] == len(rows)
    # ROUGE-1, ROUGE-2 and ROUGE-L, 3 measures, 6 pairs
    assert check_table(tmp_path / "out", documents) == 3 * 3 * 6
    assert not list((tmp_path / "out").glob("_significance-part-*"))  # the writer's part files are gone


# Significance memory bounded in the number of systems (issue 22: 100 systems x 5
# documents once peaked at 6.3 GB).  Measured here: 480 MiB in process, 500 MiB for the
# largest process with two worker processes (docs/many_systems.md).
PEAK_BOUND_MIB = 1536


# Runs `command` as its only child and prints that child's exit status and the peak
# RSS of its process tree (ru_maxrss of RUSAGE_CHILDREN: the largest of the child and
# the descendants it waited for, Beam's worker processes included), in KiB.
MEASURE = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"exit": done.returncode, "stderr": done.stderr[-3000:],
                  "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def test_100_systems_x_5_documents_stay_under_the_recorded_memory(tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", grid_rows(100, 5, {}, seed=5))
    command = [sys.executable, "-m", "pipeline", "run", "--input", str(source), "--output", str(tmp_path / "out")]
    command += ["--rouge-args", "-n 2 -m", "--quiet"]
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, timeout=600)
    result = json.loads(done.stdout)
    assert result["exit"] == 0, result["stderr"]
    assert result["peak_kib"] / 1024 < PEAK_BOUND_MIB, f"peak RSS {result['peak_kib'] / 1024:.0f} MiB"
    table = pq.read_table(tmp_path / "out" / "significance.parquet")
    assert table.num_rows == 100 * 99 // 2 * 3 * 3
