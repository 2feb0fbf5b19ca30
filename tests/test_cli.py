"""The `rouge-pipeline` command as a user runs it."""

import json
import subprocess
import sys

from tests.conftest import GOLDEN, read_jsonl

PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True, cwd=cwd
    )


def test_score_prints_the_official_report():
    result = cli("score", GOLDEN / "cases.jsonl", "--rouge-args", PYROUGE)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout == (GOLDEN / "sample-output" / "ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m.out").read_text()
    )
    assert "signature: rouge155|n:4|L:yes|W:1.2" in result.stderr


def test_score_reports_bad_rows_like_run_and_continues_or_stops_with_strict(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(read_jsonl(GOLDEN / "cases.jsonl")[0]) + "\n" + '{"system": "x", "doc_id": 1}\n'
    )
    result = cli("score", bad, "--rouge-args", "-n 1 -r 10")
    assert result.returncode == 0, result.stderr
    assert "rows read 2, scored 1, errors 1\n  wrong_type: 1\n" in result.stderr
    assert f"{bad}:2: wrong_type: field 'doc_id' must be a non-empty string; got int" in result.stderr
    assert "ROUGE-1 Average_R" in result.stdout
    strict = cli("score", bad, "--strict")
    assert strict.returncode == 1 and not strict.stdout
    assert f"strict mode: {bad}:2: wrong_type: field 'doc_id'" in strict.stderr


def test_bad_flags_are_explained():
    result = cli("score", GOLDEN / "cases.jsonl", "--rouge-args", "-l 10 -b 75")
    assert result.returncode == 2
    assert "word_limit (-l) and byte_limit (-b) cannot both be set" in result.stderr


def test_dry_run_lists_inputs_and_prints_the_signature(tmp_path):
    result = cli(
        "run",
        "--config",
        "configs/demo.toml",
        "--dry-run",
        "--output",
        tmp_path / "out",
        cwd=GOLDEN.parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert "signature: rouge155|n:4" in result.stdout
    assert (
        "ROUGE-1.5.5 equivalent: ROUGE-1.5.5.pl -e DATA -c 95 -r 1000 -n 4 -m -w 1.2 -2 -1 -U"
        in result.stdout
    )
    assert result.stdout.count("candidate: ") == 4
    assert not (tmp_path / "out").exists()


def test_run_exit_codes(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text(
        "".join(json.dumps(c) + "\n" for c in read_jsonl(GOLDEN / "cases.jsonl")[:16]) + "{oops\n"
    )
    common = ["--rouge-args", "-n 1 -r 10", "--runner", "FnApiRunner"]
    ok = cli("run", "--input", data, "--output", tmp_path / "ok", *common)
    assert ok.returncode == 0, ok.stderr
    assert "rows read 17, scored 16, errors 1\n  invalid_json: 1" in ok.stdout
    strict = cli("run", "--input", data, "--output", tmp_path / "strict", "--strict", *common)
    assert strict.returncode == 1 and "strict mode: 1 error rows" in strict.stderr
    again = cli("run", "--input", data, "--output", tmp_path / "ok", *common)
    assert again.returncode == 2 and "already exists" in again.stderr
    missing = cli("run", "--config", tmp_path / "nope.toml")
    assert missing.returncode == 2 and "config file not found" in missing.stderr


def test_help_teaches():
    result = cli("run", "--help")
    assert result.returncode == 0
    for text in ("--dry-run", "--eval-ids", "split form", "DataflowRunner", "_SUCCESS"):
        assert text in result.stdout
