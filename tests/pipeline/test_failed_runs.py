"""A failed or empty run explains itself, output paths are resolved as the system
resolves them, and systems are compared as people see them (issue 22)."""

import json
import os
import subprocess
import sys

from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import write_jsonl

ROWS = [c for c in read_jsonl(GOLDEN / "cases.jsonl") if c["system"] in ("11", "12")]
FLAGS = ["--rouge-args", "-n 1 -r 10", "--runner", "FnApiRunner", "--direct_running_mode", "in_memory"]


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "pipeline", "run", *map(str, args), *FLAGS],
        capture_output=True, text=True, cwd=cwd, timeout=300,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )


def test_a_run_that_scores_nothing_shows_its_reasons_and_keeps_its_errors(tmp_path):
    rows = [{k: v for k, v in r.items() if k != "candidate"} for r in ROWS[:3]]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    with open(data, "a") as fh:
        fh.write('{"not json\n')
    done = run("--input", data, "--output", tmp_path / "out")
    assert done.returncode == 1
    err = done.stderr
    assert "run failed, nothing published: nothing was scored (4 rows read)" in err
    assert "error rows by reason: missing_field 3, invalid_json 1" in err
    assert f"{data}:1 (and 2 more rows like it): missing_field: missing field 'candidate'" in err  # once
    assert not (tmp_path / "out").exists()
    [kept] = [p for p in tmp_path.iterdir() if p.name.startswith("out.failed-")]
    assert f"the errors table is kept in {kept}/errors/" in err
    kept_rows = [json.loads(line) for part in (kept / "errors").glob("*.jsonl") for line in part.read_text().splitlines()]
    assert sorted(r["reason"] for r in kept_rows) == ["invalid_json"] + ["missing_field"] * 3
    assert json.loads((kept / "counts.json").read_text())["errors"] == 4
    assert [p.name for p in tmp_path.iterdir() if ".staging-" in p.name] == []


def test_a_run_over_empty_inputs_says_so_and_keeps_no_empty_errors_table(tmp_path):
    """It kept an empty errors table in `out.failed-<id>/` and pointed at it."""
    (tmp_path / "a.jsonl").write_text("")
    (tmp_path / "b.jsonl").write_text("\n\n")  # blank lines are no rows
    done = run("--input", "a.jsonl", "b.jsonl", "--output", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert ("run failed, nothing published: nothing was scored (0 rows read: the input files hold no rows)\n"
            "no error rows were written") in done.stderr
    assert "kept" not in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]


def test_an_output_through_a_symlink_and_dot_dot_is_where_the_system_puts_it(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ROWS)
    (tmp_path / "real" / "sub").mkdir(parents=True)
    os.symlink(tmp_path / "real" / "sub", tmp_path / "dl")
    done = run("--input", data, "--output", "dl/../out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The system resolves dl/.. to real/, so that is where the folder is, and what is printed.
    assert (tmp_path / "real" / "out" / "_SUCCESS").exists()
    assert not (tmp_path / "out").exists()
    assert f"results: {tmp_path / 'real' / 'out'} " in done.stdout


def test_an_output_whose_dot_dot_names_nothing_is_refused_before_anything_is_written(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ROWS)
    before = sorted(os.listdir(tmp_path))
    done = run("--input", data, "--output", "nonexist/../out", cwd=tmp_path)
    assert done.returncode == 2
    assert "nonexist is not an existing folder, so nonexist/.. names nothing" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp_path)) == before


def test_systems_that_print_alike_fail_the_run_with_both_spellings(tmp_path):
    rows = [dict(r, system="M1" if r["system"] == "11" else "M1\u200b") for r in ROWS]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    done = run("--input", data, "--output", tmp_path / "out")
    assert done.returncode == 1
    assert "systems that print alike but differ" in done.stderr and "'M1' and 'M1\\u200b'" in done.stderr
    assert not (tmp_path / "out").exists()
    scored = subprocess.run(
        [sys.executable, "-m", "pipeline", "score", str(data), "--rouge-args", "-n 1 -r 10"],
        capture_output=True, text=True, timeout=120,
    )
    assert scored.returncode == 2 and "'M1' and 'M1\\u200b'" in scored.stderr


def test_a_system_named_like_the_human_pseudo_system_is_refused(tmp_path):
    rows = [dict(r, references=[r["references"][0], "another reference of the document"]) for r in ROWS]
    rows = [dict(r, system="human") if r["system"] == "12" else r for r in rows]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    config = tmp_path / "run.toml"
    config.write_text('[human]\nenabled = true\n[rouge]\nmulti_reference = "jackknife"\n')
    done = run("--config", config, "--input", data, "--output", tmp_path / "out")
    assert done.returncode == 1
    assert "a submitted system is named 'human', like the human pseudo-system 'human'" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_graph_that_fails_to_build_leaves_no_temporary_folder(tmp_path, monkeypatch):
    # Beam makes a folder (beam-pipeline-temp*) with each Pipeline and removes it only
    # when the graph runs; a graph whose construction failed left it behind.
    import tempfile

    import pytest

    import pipeline.beam.run as beam_run
    from tests.pipeline.runs import run_pipeline

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    def fail(*args, **kwargs):
        raise RuntimeError("the graph could not be built")

    monkeypatch.setattr(beam_run, "build_pipeline", fail)
    source = write_jsonl(tmp_path / "in.jsonl", ROWS)
    with pytest.raises(RuntimeError, match="could not be built"):
        run_pipeline(tmp_path / "out", [source])
    assert [p.name for p in temp.iterdir() if p.name.startswith("beam-pipeline-temp")] == []
    assert not (tmp_path / "out").exists()
