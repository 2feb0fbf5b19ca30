"""Output safety: --overwrite replaces only this tool's result folders, publishing is
exclusive, a kill at any publish step leaves the old or the new folder complete,
SIGTERM cleans up, and output problems fail early in one line."""

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import write_jsonl

ROWS = [c for c in read_jsonl(GOLDEN / "cases.jsonl") if c["system"] in ("11", "12")]
COMMON = ["--rouge-args", "-n 1 -r 10", "--runner", "FnApiRunner"]


def command(data, output, *extra):
    return [sys.executable, "-m", "pipeline", "run", "--input", str(data), "--output", str(output), *COMMON, *extra]


def cli(data, output, *extra, cwd=None, env=None):
    return subprocess.run(
        command(data, output, *extra), capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_id(folder: Path) -> str:
    return json.loads((folder / "run.json").read_text())["run_id"]


def complete(folder: Path) -> bool:
    names = {"_ROUGE_PIPELINE", "_SUCCESS", "run.json", "rouge155.txt", "system_scores.parquet"}
    return names <= set(os.listdir(folder)) and json.loads((folder / "run.json").read_text())["counts"]["balanced"]


def leftovers(output: Path) -> list[str]:
    return sorted(p.name for p in output.parent.iterdir() if p.name.startswith(output.name + "."))


@pytest.fixture
def data(tmp_path):
    return write_jsonl(tmp_path / "data" / "in.jsonl", ROWS)


@pytest.fixture
def previous(tmp_path, data):
    """A finished result folder, to be replaced."""
    out = tmp_path / "out"
    done = cli(data, out)
    assert done.returncode == 0, done.stderr
    return out


def test_overwrite_refuses_the_current_folder_and_leaves_it_intact(tmp_path, data):
    (tmp_path / "notes.txt").write_text("mine")
    before = snapshot(tmp_path)
    for output in (".", str(tmp_path), str(tmp_path.parent)):
        result = cli(data, output, "--overwrite", cwd=tmp_path)
        assert result.returncode == 2
        assert "it is the current folder or contains it" in result.stderr, result.stderr
    assert snapshot(tmp_path) == before


def test_overwrite_refuses_a_folder_that_holds_an_input(tmp_path, data):
    before = snapshot(tmp_path / "data")
    result = cli(data, tmp_path / "data", "--overwrite")
    assert result.returncode == 2 and f"it contains the input file {data}" in result.stderr
    assert snapshot(tmp_path / "data") == before


def test_overwrite_refuses_folders_and_files_this_tool_did_not_write(tmp_path, data, previous):
    foreign = tmp_path / "work"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("years of work")
    result = cli(data, foreign, "--overwrite")
    assert result.returncode == 2
    assert "is not a result folder of rouge-pipeline (it holds thesis.tex)" in result.stderr
    assert (foreign / "thesis.tex").read_text() == "years of work"

    plain = tmp_path / "file.txt"
    plain.write_text("x")
    result = cli(data, plain, "--overwrite")
    assert result.returncode == 2 and "it exists and is not a folder" in result.stderr
    assert plain.read_text() == "x"

    (previous / "my-notes.md").write_text("added by a person")
    before = snapshot(previous)
    result = cli(data, previous, "--overwrite")
    assert result.returncode == 2 and "(it holds my-notes.md)" in result.stderr
    assert snapshot(previous) == before


def test_overwrite_replaces_a_previous_result_folder(tmp_path, data, previous):
    old = run_id(previous)
    result = cli(data, previous, "--overwrite")
    assert result.returncode == 0, result.stderr
    assert run_id(previous) != old and complete(previous)
    assert leftovers(previous) == []


def test_output_problems_fail_before_beam_starts_in_one_line(tmp_path, data):
    too_long = cli(data, tmp_path / ("x" * 250))
    assert too_long.returncode == 2
    assert "cannot create the result folder" in too_long.stderr and "File name too long" in too_long.stderr
    (tmp_path / "plain").write_text("")
    under_file = cli(data, tmp_path / "plain" / "out")
    assert under_file.returncode == 2 and f"{tmp_path / 'plain'} is not a folder" in under_file.stderr
    for result in (too_long, under_file):
        assert "Traceback" not in result.stderr and result.stderr.count("rouge-pipeline: error:") == 1
        assert "rouge-pipeline: starting Beam" not in result.stderr  # refused before Beam ran


def mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


def test_disk_full_ends_in_one_error_line_and_leaves_nothing(tmp_path, data):
    small = tmp_path / "small"
    if not mount_tmpfs(small, "16k"):
        if os.environ.get("CI"):
            pytest.fail("CI runs as root and must be able to mount a small tmpfs")
        pytest.skip("mounting a tmpfs needs root")
    try:
        result = cli(data, small / "out")
        assert result.returncode == 1, result.stderr
        assert "No space left on device" in result.stderr
        assert "Traceback" not in result.stderr
        assert [line for line in result.stderr.splitlines() if "error:" in line] == [
            line for line in result.stderr.splitlines() if line.startswith("rouge-pipeline: error:")
        ]
        assert os.listdir(small) == []
    finally:
        subprocess.run(["umount", str(small)])


def start_paused(data, output, step, resume=None, *extra):
    env = dict(os.environ, ROUGE_PIPELINE_TEST_PAUSE=step + (f":{resume}" if resume else ""))
    process = subprocess.Popen(
        command(data, output, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    for line in process.stderr:
        if f"test pause at {step}" in line:
            return process
    process.wait()
    raise AssertionError(f"the run never reached {step}: exit {process.returncode}")


def kill(process):
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.mark.parametrize(
    "step, replacing, expect",
    [
        ("before_publish", False, "absent"),
        ("after_publish", False, "new"),
        ("before_publish", True, "old"),
        ("after_exchange", True, "new"),
    ],
)
def test_a_kill_inside_each_publish_step_leaves_the_old_or_the_new_folder(tmp_path, data, step, replacing, expect):
    out = tmp_path / "out"
    old = None
    if replacing:
        assert cli(data, out).returncode == 0
        old = run_id(out)
    process = start_paused(data, out, step, None, "--overwrite")
    kill(process)
    if expect == "absent":
        assert not out.exists()
    else:
        assert complete(out)
        assert (run_id(out) == old) == (expect == "old")
    # The next run cleans up what the killed one left (its staging folder, or the
    # old folder it had swapped out) and publishes.
    assert leftovers(out) != [] or step == "after_publish"
    again = cli(data, out, "--overwrite")
    assert again.returncode == 0, again.stderr
    assert complete(out) and leftovers(out) == []


def test_sigterm_is_handled_like_ctrl_c(tmp_path, data):
    out = tmp_path / "out"
    process = start_paused(data, out, "before_publish")
    os.killpg(process.pid, signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143
    assert "terminated (SIGTERM); nothing was published" in stderr
    assert not out.exists() and leftovers(out) == []


def test_of_two_runs_into_one_output_exactly_one_publishes(tmp_path, data):
    out = tmp_path / "out"
    resume = tmp_path / "resume"
    first = start_paused(data, out, "before_publish", resume)
    second = cli(data, out)
    assert second.returncode == 0, second.stderr
    published = snapshot(out)
    resume.touch()
    _, stderr = first.communicate(timeout=120)
    assert first.returncode == 2
    assert "appeared while this run was working (another run?); it was not touched" in stderr
    assert snapshot(out) == published and leftovers(out) == []


def test_of_two_overwriting_runs_exactly_one_replaces_the_old_folder(tmp_path, data, previous):
    resume = tmp_path / "resume"
    runs = [start_paused(data, previous, "before_publish", resume, "--overwrite") for _ in range(2)]
    resume.touch()
    results = [(p.wait(timeout=120), p.stderr.read()) for p in runs]
    assert sorted(code for code, _ in results) == [0, 2], results
    # (the loser finds the folder replaced before its exchange or, resumed in the same
    # microseconds, undoes its exchange: publish.py's two messages for it)
    assert any("was replaced or removed while this run was working" in err
               or "was replaced while this run published; it was not touched" in err for _, err in results), results
    assert complete(previous) and leftovers(previous) == []


def test_two_runs_started_together_publish_once(tmp_path, data):
    out = tmp_path / "out"
    runs = [subprocess.Popen(command(data, out), stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = sorted((p.wait(timeout=300), p.stderr.read()) for p in runs)
    assert [code for code, _ in results] == [0, 2], results
    assert "appeared while this run was working" in results[1][1]
    assert complete(out) and leftovers(out) == []


def test_a_staging_folder_is_removed_only_when_its_run_is_dead(tmp_path, data):
    out = tmp_path / "out"
    dead = tmp_path / "out.staging-0123456789ab"
    dead.mkdir()
    (dead / "_ROUGE_PIPELINE").write_text("{}")
    (tmp_path / "out.staging-0123456789ab.lock").write_text("")
    live = tmp_path / "out.staging-ba9876543210"
    live.mkdir()
    with open(tmp_path / "out.staging-ba9876543210.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a run that is still working holds its lock
        not_ours = tmp_path / "out.staging-aaaaaaaaaaaa"
        not_ours.mkdir()  # no marker, no lock: not made by this tool
        assert cli(data, out).returncode == 0
        assert leftovers(out) == ["out.staging-aaaaaaaaaaaa", "out.staging-ba9876543210", "out.staging-ba9876543210.lock"]


@pytest.mark.parametrize("kind", ["run.json a pipe", "_SUCCESS a pipe", "run.json nested too deeply", "run.json of 70 MB"])
def test_overwrite_reads_what_a_folder_claims_without_waiting_failing_or_reading_it_whole(tmp_path, data, previous, kind):
    # Records of the folder to replace: a pipe would be waited on for ever, JSON nested
    # 200,000 deep made the run fail with a RecursionError, and a huge file was read whole.
    name = kind.split()[0]
    (previous / name).unlink()
    if "pipe" in kind:
        os.mkfifo(previous / name)
    elif "deeply" in kind:
        (previous / name).write_text("[" * 200_000 + "]" * 200_000)
    else:
        (previous / name).write_text('{"signature": "' + "x" * (70 << 20) + '"}')
    before = sorted(p.name for p in previous.iterdir())
    result = cli(data, previous, "--overwrite")  # (cli's timeout: a wait would fail the test)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "is not a result folder of rouge-pipeline" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in previous.iterdir()) == before  # nothing of it removed


def test_a_pipe_named_like_a_staging_lock_is_not_waited_on(tmp_path, data):
    os.mkfifo(tmp_path / "out.staging-0123456789ab.lock")  # (opened for reading, a pipe waits for a writer)
    result = cli(data, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert leftovers(tmp_path / "out") == ["out.staging-0123456789ab.lock"]  # not ours: left as it was


def test_an_output_name_that_fits_but_not_with_its_staging_suffix_is_refused_saying_so(tmp_path, data):
    out = tmp_path / ("n" * 240)  # (a file name may have 255 bytes; the staging lock beside it adds 30)
    result = cli(data, out)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "File name too long with the 30 characters the staging folder beside it adds" in result.stderr
    assert "choose a shorter --output" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # nothing left
