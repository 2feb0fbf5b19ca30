"""Inputs are what the user named, read once (issue 22): every value after --input,
globs relative to the folder the user meant, pipes and devices read once or
refused, run.json's fingerprint of the bytes that were scored."""

import hashlib
import json
import os
import subprocess
import sys
import threading


from pipeline.beam import run as run_module
from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import run_pipeline, write_jsonl

ROWS = [c for c in read_jsonl(GOLDEN / "cases.jsonl") if c["system"] in ("11", "12")]
FLAGS = ["--rouge-args", "-n 1 -r 10", "--runner", "FnApiRunner", "--direct_running_mode", "in_memory"]


def cli(*args, cwd=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )


def test_every_value_after_input_is_read(tmp_path):
    """`--input dir/*.jsonl` expanded by the shell: every file is an input."""
    a = write_jsonl(tmp_path / "a.jsonl", [r for r in ROWS if r["system"] == "11"])
    b = write_jsonl(tmp_path / "b.jsonl", [r for r in ROWS if r["system"] == "12"])
    done = cli("run", "--input", str(a), str(b), "--output", str(tmp_path / "out"), *FLAGS)
    assert done.returncode == 0, done.stderr
    assert "rows read 50, scored 50" in done.stdout
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert [f["path"] for f in record["inputs"]["candidates"]] == [str(a), str(b)]


def test_a_stray_name_after_another_option_is_refused(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", ROWS)
    done = cli("run", "--input", str(a), "--strict", str(a), "--output", str(tmp_path / "out"), *FLAGS, "--dry-run")
    assert done.returncode == 2
    assert f"unexpected argument {str(a)!r}" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_config_glob_matches_in_the_configs_folder_even_with_brackets_in_its_name(tmp_path):
    """`candidates = ["*.jsonl"]` in runs[1]/run.toml matched runs1/*.jsonl (the folder
    name was read as a pattern)."""
    meant, other = tmp_path / "runs[1]", tmp_path / "runs1"
    write_jsonl(meant / "mine.jsonl", ROWS)
    write_jsonl(other / "not-mine.jsonl", ROWS)
    (meant / "run.toml").write_text('[input]\ncandidates = ["*.jsonl"]\n')
    done = cli("run", "--config", str(meant / "run.toml"), "--output", str(tmp_path / "out"), *FLAGS, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert f"candidate: {meant / 'mine.jsonl'}" in done.stdout
    assert "not-mine" not in done.stdout


def test_a_bare_glob_and_a_literal_name_with_glob_characters_in_the_current_folder(tmp_path):
    write_jsonl(tmp_path / "out[1].jsonl", ROWS)  # a literal name that is also a pattern
    write_jsonl(tmp_path / "out1.jsonl", [dict(r, system="other") for r in ROWS if r["system"] == "11"][:2])
    named = cli("run", "--input", "out[1].jsonl", "--output", "res", *FLAGS, "--dry-run", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert "candidate: out[1].jsonl" in named.stdout and "candidate: out1.jsonl" not in named.stdout
    bare = cli("run", "--input", "*.jsonl", "--output", "res", *FLAGS, cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    assert f"rows read {len(ROWS) + 2}, scored {len(ROWS) + 2}" in bare.stdout


def feed_fifo(path, data: bytes, times: list):
    """Open the FIFO for writing (blocks until a reader opens it), write, close; count opens."""
    with open(path, "wb") as fh:
        times.append(1)
        fh.write(data)


def test_a_pipe_is_refused_by_run_and_read_exactly_once_by_score(tmp_path):
    data = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    refused = cli("run", "--input", str(fifo), "--output", str(tmp_path / "out"), *FLAGS, timeout=60)
    assert refused.returncode == 2
    assert "is a pipe" in refused.stderr and "rouge-pipeline score" in refused.stderr
    assert not (tmp_path / "out").exists()

    opened = []
    writer = threading.Thread(target=feed_fifo, args=(fifo, data, opened), daemon=True)
    writer.start()
    scored = cli("score", str(fifo), "--rouge-args", "-n 1 -r 10", "--format", "csv", timeout=60)
    writer.join(5)
    assert scored.returncode == 0, scored.stderr
    assert opened == [1]
    assert scored.stdout.count("\n11,ROUGE-1,") == 1 or "11,ROUGE-1,25," in scored.stdout


def test_run_json_fingerprints_the_bytes_that_were_read(tmp_path, monkeypatch):
    """The input is rewritten after the readers finished and before the run record is
    made: the record keeps the digest of the bytes scored, not of the file after."""
    data = tmp_path / "in.jsonl"
    write_jsonl(data, ROWS)
    scored_bytes = data.read_bytes()
    real_check = run_module.check_counts

    def check_then_change_input(counts, strict):
        data.write_text(data.read_text() + json.dumps(ROWS[0]) + "\n")
        return real_check(counts, strict)

    monkeypatch.setattr(run_module, "check_counts", check_then_change_input)
    record = run_pipeline(tmp_path / "out", [data], flags="-n 1 -r 10")
    [fingerprint] = record["inputs"]["candidates"]
    assert fingerprint["sha256"] == hashlib.sha256(scored_bytes).hexdigest()
    assert fingerprint["bytes"] == len(scored_bytes)
    assert record["counts"]["rows_read"] == len(ROWS)


def test_one_file_named_twice_through_a_link_is_read_once(tmp_path):
    """`--input a.jsonl link.jsonl` with link.jsonl -> a.jsonl (or a hard link, or two
    globs that meet): read twice, each of its 50 rows was a duplicate_key error."""
    write_jsonl(tmp_path / "a.jsonl", ROWS)
    os.symlink("a.jsonl", tmp_path / "link.jsonl")
    os.link(tmp_path / "a.jsonl", tmp_path / "hard.jsonl")
    alone = cli("score", "a.jsonl", "--rouge-args", "-n 1 -r 10", cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    for how in (["a.jsonl", "link.jsonl"], ["a.jsonl", "hard.jsonl"], ["*.jsonl", "a.jsonl"]):
        done = cli("score", *how, "--rouge-args", "-n 1 -r 10", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == alone.stdout and "duplicate_key" not in done.stderr, (how, done.stderr)
        assert "is the same file as" in done.stderr and ": read once" in done.stderr
    done = cli("run", "--input", "a.jsonl", "link.jsonl", "hard.jsonl", "--output", "out", *FLAGS, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "rows read 50, scored 50" in done.stdout
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert [f["path"] for f in record["inputs"]["candidates"]] == ["a.jsonl"]


def test_a_dangling_link_is_named_with_its_target(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", ROWS)
    os.symlink("gone.jsonl", tmp_path / "b.jsonl")
    for command in (["score", "*.jsonl"], ["run", "--input", "*.jsonl", "--output", "out", "--dry-run"]):
        done = cli(*command, "--rouge-args", "-n 1", cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "b.jsonl is a symbolic link to 'gone.jsonl', which does not exist" in done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_device_is_refused_by_score_with_the_reason(tmp_path):
    """score read a link to /dev/zero for ever (one endless line, skipped as too long):
    a device is no input; a pipe still is (read once)."""
    os.symlink("/dev/zero", tmp_path / "zero.jsonl")
    os.symlink("/dev/zero", tmp_path / "zero.txt")
    (tmp_path / "ref.txt").write_text("a b\n")
    done = cli("score", "zero.jsonl", "--rouge-args", "-n 1", cwd=tmp_path, timeout=60)
    assert done.returncode == 1, done.stderr
    assert ("zero.jsonl: unreadable_file: cannot read zero.jsonl after 0 rows: zero.jsonl is a character device, "
            "not a regular file or a pipe") in done.stderr
    done = cli("score", "zero.txt", "ref.txt", "--rouge-args", "-n 1", cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "zero.txt is a character device, not a regular file or a pipe" in done.stderr


def test_a_folder_names_its_files_and_an_empty_one_says_so(tmp_path):
    """`score folder` said it was "a text file (one summary per line)"."""
    (tmp_path / "runs").mkdir()
    write_jsonl(tmp_path / "runs" / "a.jsonl", ROWS)
    (tmp_path / "empty").mkdir()
    alone = cli("score", "runs/a.jsonl", "--rouge-args", "-n 1 -r 10", cwd=tmp_path)
    done = cli("score", "runs", "--rouge-args", "-n 1 -r 10", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == alone.stdout, done.stderr
    for command in (["score", "empty"], ["run", "--input", "empty", "--output", "out", "--dry-run"]):
        done = cli(*command, "--rouge-args", "-n 1", cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "error: the folder 'empty' holds no file" in done.stderr
