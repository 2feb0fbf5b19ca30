"""--overwrite removes only the files this tool wrote, recorded in its marker with
their SHA-256, and refuses a folder holding anything else, at any depth (issue 22)."""

import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import write_jsonl

ROWS = [c for c in read_jsonl(GOLDEN / "cases.jsonl") if c["system"] in ("11", "12")]
FLAGS = ["--rouge-args", "-n 1 -r 10", "--runner", "FnApiRunner", "--direct_running_mode", "in_memory"]


def command(data, out, *extra):
    return [sys.executable, "-m", "pipeline", "run", "--input", str(data), "--output", str(out), *FLAGS, *extra]


def env():
    return {**os.environ, "PYTHONPATH": os.getcwd()}


def cli(data, out, *extra):
    return subprocess.run(command(data, out, *extra), capture_output=True, text=True, timeout=300, env=env())


def files_of(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def previous(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ROWS)
    done = cli(data, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    return data, tmp_path / "out"


def test_the_manifest_records_every_file_with_its_size_and_digest(previous):
    _, out = previous
    manifest = json.loads((out / "_SUCCESS").read_text())
    written = {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
               for name, data in files_of(out).items() if name != "_SUCCESS"}
    assert manifest["files"] == written and manifest["tool"] == "rouge-pipeline" and manifest["manifest"] == 1
    assert manifest["run_id"] == json.loads((out / "_ROUGE_PIPELINE").read_text())["run_id"]
    assert any(name.startswith("per_document/part-") for name in written) and "_ROUGE_PIPELINE" in written


@pytest.mark.parametrize("where", ["per_document/mine.parquet", "errors/notes.txt", "per_document/deeper/x.txt"])
def test_a_file_of_someone_else_inside_a_subfolder_is_never_removed(previous, where):
    data, out = previous
    (out / where).parent.mkdir(parents=True, exist_ok=True)
    (out / where).write_text("a person's file")
    before = files_of(out)
    done = cli(data, out, "--overwrite")
    assert done.returncode == 2
    assert "is not a result folder of rouge-pipeline" in done.stderr and where.split("/")[0] in done.stderr
    assert files_of(out) == before


def test_a_file_changed_since_this_tool_wrote_it_is_refused(previous):
    data, out = previous
    (out / "system_scores.md").write_text("my edited table")
    done = cli(data, out, "--overwrite")
    assert done.returncode == 2 and "system_scores.md (changed since this tool wrote it)" in done.stderr
    assert (out / "system_scores.md").read_text() == "my edited table"


def test_an_older_folder_without_a_file_list_is_checked_inside_its_subfolders(previous):
    data, out = previous
    (out / "_ROUGE_PIPELINE").write_text('{"tool": "rouge-pipeline", "run_id": "0123456789ab"}\n')
    (out / "_SUCCESS").write_bytes(b"")  # as the versions before the manifest wrote it
    (out / "errors" / "mine.txt").write_text("a person's file")
    done = cli(data, out, "--overwrite")
    assert done.returncode == 2 and "errors/mine.txt" in done.stderr
    (out / "errors" / "mine.txt").unlink()
    done = cli(data, out, "--overwrite")
    assert done.returncode == 0, done.stderr


def test_a_file_put_in_the_old_folder_during_the_run_survives_the_replacement(previous, tmp_path):
    data, out = previous
    resume = tmp_path / "resume"
    process = subprocess.Popen(
        command(data, out, "--overwrite"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**env(), "ROUGE_PIPELINE_TEST_PAUSE": f"before_publish:{resume}"},
    )
    deadline = time.monotonic() + 120
    while not any(p.name.endswith(".lock") for p in tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    staging = [p for p in tmp_path.iterdir() if ".staging-" in p.name and p.is_dir()]
    while staging and not (staging[0] / "_SUCCESS").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    (out / "per_document" / "late.txt").write_text("written while the run worked")
    resume.write_text("")
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "late.txt" not in os.listdir(out / "per_document")
    [kept] = [p for p in tmp_path.iterdir() if ".replaced-" in p.name]
    assert files_of(kept) == {"per_document/late.txt": b"written while the run worked"}
    assert f"they are kept in {kept}" in stderr
