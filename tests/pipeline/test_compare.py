"""`rouge-pipeline compare` on result folders written by the real pipeline (three
small runs, shared by the tests of this module)."""

import argparse
import random
import re

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

from pipeline.cli.compare import register
from pipeline.compare import settings_differences
from tests.pipeline.runs import run_pipeline, seal, write_jsonl

WORDS = [f"w{i}" for i in range(60)]


def corpus(degrade_good: bool):
    """30 documents; "good" keeps 80% of the reference's words, "weak" 50%; with
    `degrade_good`, good keeps only 40%, except on documents 0-4 (unchanged)."""
    rng = random.Random(0)
    rows = []
    for i in range(30):
        reference = [rng.choice(WORDS) for _ in range(20)]
        for system, keep in (("good", 0.8), ("weak", 0.5)):
            if system == "good" and degrade_good and i >= 5:
                keep = 0.4
            draw = random.Random(f"{system}-{i}-{keep}")
            candidate = [w if draw.random() < keep else draw.choice(WORDS) for w in reference]
            rows.append(
                {
                    "system": system,
                    "doc_id": f"doc-{i:02d}",
                    "candidate": " ".join(candidate),
                    "references": [" ".join(reference)],
                }
            )
    return rows


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    old_input = write_jsonl(base / "old.jsonl", corpus(degrade_good=False))
    # a third system appears in the new run; "weak" loses two documents
    new_rows = [
        r for r in corpus(degrade_good=True) if not (r["system"] == "weak" and r["doc_id"] < "doc-02")
    ]
    new_rows += [dict(r, system="extra") for r in corpus(False) if r["system"] == "weak"]
    new_input = write_jsonl(base / "new.jsonl", new_rows)
    run_pipeline(base / "old", [old_input], flags="-n 2")
    run_pipeline(base / "new", [new_input], flags="-n 2")
    run_pipeline(base / "stemmed", [old_input], flags="-n 2 -m")
    return base


def compare(*argv):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["compare", *map(str, argv)])
    return args.handler(args, [])


def per_document(folder):
    table = pq.read_table(folder / "per_document").to_pylist()
    return {(r["system"], r["metric"], r["doc_id"]): r["f_measure"] for r in table}


def test_a_run_against_itself_is_unchanged(runs, tmp_path, capsys):
    assert compare(runs / "old", runs / "old", "--output", tmp_path / "cmp") == 0
    out = capsys.readouterr().out
    assert "OK: no significant drop of more than 0 points; no significant change" in out
    rows = pq.read_table(tmp_path / "cmp" / "comparison.parquet").to_pylist()
    assert [(r["system"], r["metric"]) for r in rows] == [
        (s, m) for s in ("good", "weak") for m in ("ROUGE-1", "ROUGE-2", "ROUGE-L")
    ]
    table = {(r["system"], r["metric"]): r for r in pq.read_table(runs / "old" / "system_scores.parquet").to_pylist()}
    for r in rows:
        assert r["old"] == r["new"] and r["delta_points"] == 0 and r["documents"] == 30
        # old and new are the run's own table values (ROUGE-1.5.5's averages), named so; the means beside them
        own = table[r["system"], r["metric"]]
        assert (r["average"], r["old"], r["old_mean"]) == ("rouge155", own["rouge155_f_measure"], own["f_measure"])
        assert r["p_value"] == 1 and r["verdict"] == "no significant change" and not r["fails"]
    assert pq.read_table(tmp_path / "cmp" / "moved_documents.parquet").num_rows == 0
    assert sorted(p.name for p in (tmp_path / "cmp").iterdir()) == [
        "_SUCCESS",
        "comparison.csv",
        "comparison.md",
        "comparison.parquet",
        "moved_documents.csv",
        "moved_documents.md",
        "moved_documents.parquet",
        "report.html",
    ]


def test_other_rouge_flags_are_not_comparable(runs, capsys):
    assert compare(runs / "old", runs / "stemmed") == 3
    out = capsys.readouterr().out
    assert "not comparable" in out
    assert "  stem: no (old) -> porter155+wn2.0 (new)" in out.splitlines()


def test_a_significant_drop_fails(runs, tmp_path, capsys):
    assert (
        compare(
            runs / "old",
            runs / "new",
            "--fail-on-drop",
            1,
            "--output",
            tmp_path / "cmp",
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "FAIL: significant drop of more than 1 points: good ROUGE-1" in out
    rows = {
        (r["system"], r["metric"]): r
        for r in pq.read_table(tmp_path / "cmp" / "comparison.parquet").to_pylist()
    }
    old, new = per_document(runs / "old"), per_document(runs / "new")
    system_scores = {
        (r["system"], r["metric"]): r for r in pq.read_table(runs / "new" / "system_scores.parquet").to_pylist()
    }
    for metric in ("ROUGE-1", "ROUGE-2", "ROUGE-L"):
        good = rows["good", metric]
        shared = [d for (s, m, d) in old if (s, m) == ("good", metric)]
        expected = 100 * np.mean([new["good", metric, d] - old["good", metric, d] for d in shared])
        assert good["delta_points"] == pytest.approx(expected, abs=1e-9)
        assert good["delta_points"] < -5 and good["verdict"] == "worse" and good["fails"]
        assert good["ci_low_points"] < good["delta_points"] < good["ci_high_points"] < 0
        # the paired test of new against old on the shared documents, by scipy
        after, before = ([run["good", metric, d] for d in shared] for run in (new, old))
        expected = max(stats.ttest_rel(after, before).pvalue, 2.0 ** (1 - len(shared)))  # clipped at the floor
        assert good["method"] == "t" and good["p_value"] == pytest.approx(expected, rel=1e-9)
        assert good["new"] == system_scores["good", metric]["rouge155_f_measure"]  # the run's table value
        assert good["new_mean"] == pytest.approx(system_scores["good", metric]["f_measure"], abs=1e-12)
        # "weak" did not change on its 28 remaining documents; "extra" is new
        weak = rows["weak", metric]
        assert (weak["documents"], weak["old_documents"], weak["new_documents"]) == (28, 30, 28)
        assert weak["delta_points"] == 0 and weak["verdict"] == "no significant change"
        assert rows["extra", metric]["verdict"] == "added" and rows["extra", metric]["old"] is None
    moved = pq.read_table(tmp_path / "cmp" / "moved_documents.parquet").to_pylist()
    r1 = [m for m in moved if (m["system"], m["metric"]) == ("good", "ROUGE-1")]
    changes = sorted(
        (abs(new["good", "ROUGE-1", d] - old["good", "ROUGE-1", d]) for d in shared), reverse=True
    )
    assert len(r1) == 10 and [abs(m["delta_points"]) / 100 for m in r1] == pytest.approx(changes[:10])
    assert all(m["doc_id"] >= "doc-05" for m in r1)  # documents 0-4 did not change
    assert "Systems added: extra" in (tmp_path / "cmp" / "comparison.md").read_text()
    # 30 shared documents at most: p >= 2^-29; Holm over the 6 comparisons of good and weak.
    floor = f"(the smallest p these documents allow is {2**-29:.2g}, {6 * 2**-29:.2g} adjusted)"
    assert f"Holm across the 6 comparisons {floor}" in out


def test_a_drop_smaller_than_the_threshold_passes(runs, capsys):
    assert compare(runs / "old", runs / "new", "--fail-on-drop", 50) == 0
    assert (
        "OK: no significant drop of more than 50 points (3 significant change(s))" in capsys.readouterr().out
    )


def test_usage_errors(runs, tmp_path, capsys):
    assert compare(tmp_path / "missing", runs / "old") == 2
    (tmp_path / "empty").mkdir()
    assert compare(runs / "old", tmp_path / "empty") == 2
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    assert compare(runs / "old", runs / "old", "--output", tmp_path / "taken") == 2
    assert compare(runs / "old", runs / "old", "--confidence", 100) == 2
    (tmp_path / "broken" / "per_document").mkdir(parents=True)
    (tmp_path / "broken" / "run.json").write_text('{"signature": "rouge155|n:2"}')
    (tmp_path / "broken" / "per_document" / "part-0.parquet").write_text("not parquet")
    seal(tmp_path / "broken")
    assert compare(runs / "old", tmp_path / "broken") == 2
    err = capsys.readouterr().err
    assert "no such result folder" in err and "not a complete result folder (no _SUCCESS" in err
    assert "exists and is not empty" in err and "--confidence must be" in err
    assert "part-0.parquet: not a per-document table" in err


def test_signature_fields_are_diffed_by_key():
    old = "rouge155|n:2|L:yes|stem:no|ci:95%@1000|v:0.1.0"
    new = "rouge_score|n:2|L:yes|stem:porter|ci:95%@1000|v:0.2.0|extra:1"
    assert settings_differences(old, new) == [
        ("preset", "rouge155", "rouge_score"),
        ("stem", "no", "porter"),
        ("v", "0.1.0", "0.2.0"),
        ("extra", None, "1"),
    ]
    assert settings_differences(old, old) == []


def test_signatures_with_profiles_are_diffed_per_profile_and_setting():
    old = "case: rouge155|n:2|v:0.1.0 + rouge155|n:4|S:4|v:0.1.0 | stem: rouge155|n:2|stem:porter155+wn2.0|v:0.1.0"
    assert settings_differences(old, old) == []
    new = old.replace("S:4", "S:9").replace("stem: rouge155|n:2", "stem: rouge155|n:3")
    assert settings_differences(old, new) == [("case #2 S", "4", "9"), ("stem n", "2", "3")]
    assert settings_differences(old, "rouge155|n:2|v:0.1.0") == [("profiles", "case, stem", "(one)")]


def test_progress_shows_each_stage_with_its_total_and_quiet_shows_none(runs, tmp_path, capsys, monkeypatch):
    from pipeline import progress

    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # a log line at every step (stderr is not a terminal here)
    assert compare(runs / "old", runs / "new", "--fail-on-drop", 1, "--output", tmp_path / "cmp") == 1
    err = capsys.readouterr().err
    # good, weak and extra x ROUGE-1, ROUGE-2, ROUGE-L: 9 (system, metric) pairs, each tested once
    assert re.search(r"rouge-pipeline: paired tests: 1 of 9 \(system, metric\) pairs \(11%\), [\d.,]+/s", err), err
    assert "rouge-pipeline: paired tests: 9 (system, metric) pairs in " in err
    assert "rouge-pipeline: reading runs: 2 runs in " in err
    assert "rouge-pipeline: texts: 2 files in " in err  # each run's input file, read back for the report
    assert re.search(r"rouge-pipeline: report: (done|1 pages) in ", err), err
    assert compare(runs / "old", runs / "new", "--fail-on-drop", 1, "--output", tmp_path / "quiet", "--quiet") == 1
    assert "rouge-pipeline:" not in capsys.readouterr().err
