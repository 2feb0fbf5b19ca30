"""Worker faults end the run promptly (issue 22): a Beam worker process SIGKILLed at
any stage, or stopped (SIGSTOP) for longer than run.worker_stall_seconds, makes the
run fail within a bounded time, in one error line, with nothing published and no
process left behind.  (It used to hang: the runner waited for ever for the dead,
or stopped, worker's answer.)"""

import gzip
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from pipeline.beam.runners.faults import WORKING_SHARE, StallWatch

BOUND_SECONDS = 60  # from the kill to the run's exit


def corpus(folder):
    rng = random.Random(0)
    words = [f"w{i}" for i in range(300)]
    for f in range(4):
        with open(folder / f"in{f}.jsonl", "w") as fh:
            for d in range(1500):
                reference = " ".join(rng.choice(words) for _ in range(60))
                for system in ("a", "b"):
                    candidate = " ".join(rng.choice(words) for _ in range(60))
                    fh.write(json.dumps({"system": system, "doc_id": f"f{f}d{d}", "candidate": candidate,
                                         "references": [reference]}) + "\n")


def group_processes(pgid):
    """Processes of the run's process group still on the system (zombies included)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:
                found.append((int(entry), fields[0]))
    return found


def workers(pgid):
    out = []
    for pid, _ in group_processes(pgid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                command = fh.read()
        except OSError:
            continue
        if b"sdk_worker_main" in command and not command.startswith(b"/bin/sh"):
            out.append(pid)
    return sorted(out)


@pytest.mark.parametrize("stage", ["startup", "scoring", "writing"])
def test_a_killed_worker_fails_the_run_promptly_and_leaves_nothing(tmp_path, stage):
    corpus(tmp_path)
    (tmp_path / "run.toml").write_text(
        '[input]\ncandidates = ["in*.jsonl"]\n[rouge]\nargs = "-n 2 -r 10"\n'
        "[output]\nper_document_shards = 64\n[run]\nprogress_seconds = 0.1\n"
    )
    command = [sys.executable, "-m", "pipeline", "run", "--config", "run.toml", "--output", "out",
               "--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True, env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    lines, killed = [], []

    def kill(pid):
        if not killed:
            os.kill(pid, signal.SIGKILL)
            killed.append(time.monotonic())

    def read_stderr():
        for line in process.stderr:
            lines.append(line)
            # The driver's progress view names the stage the workers are in.
            # (or, for stages that end within one look, the end of Beam's start: the workers read and score next)
            match = re.match(r"rouge-pipeline: (\w+): ", line)
            if match and (match.group(1) == stage or (stage in ("reading", "scoring") and "starting Beam: done" in line)):
                if stage == "scoring":
                    time.sleep(0.3)
                running = workers(process.pid)
                if running:
                    kill(running[0])

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    deadline = time.monotonic() + 240
    while not killed and process.poll() is None and time.monotonic() < deadline:
        running = workers(process.pid)
        if stage == "startup" and len(running) == 2:
            kill(running[0])
        if stage == "writing" and running and any((tmp_path).glob("out.staging-*/per_document/part-*")):
            kill(running[0])
        time.sleep(0.02)
    assert killed, f"the run ended before a worker was killed at {stage}: {''.join(lines)[-2000:]}"
    try:
        process.wait(timeout=BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        pytest.fail(f"the run hung after a worker was killed at {stage}")
    reader.join(10)
    seconds = time.monotonic() - killed[0]
    print(f"{stage}: the run ended {seconds:.1f} s after the kill")
    err = "".join(line for line in lines if not line.startswith("rouge-pipeline: worker "))
    assert process.returncode == 1, err
    assert err.count("rouge-pipeline: error: WorkerLost: a Beam worker process ended abnormally") == 1, err
    assert "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == []
    assert group_processes(process.pid) == []


def start(tmp_path, run_extra=""):
    (tmp_path / "run.toml").write_text(
        '[input]\ncandidates = ["in*.jsonl*"]\n[rouge]\nargs = "-n 2 -r 10"\n'
        "[output]\nper_document_shards = 64\n[run]\nprogress_seconds = 0.1\n" + run_extra
    )
    (tmp_path / "tmp").mkdir()
    command = [sys.executable, "-m", "pipeline", "run", "--config", "run.toml", "--output", "out",
               "--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    # TMPDIR: the driver's progress folder (the workers' counter files) is made there
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "TMPDIR": str(tmp_path / "tmp")}
    return subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)


def finish(process, tmp_path, what):
    """The run's exit status and stderr, within the bound; fails on a hang."""
    try:
        _, err = process.communicate(timeout=BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"the run hung after {what}")
    assert "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == []
    assert group_processes(process.pid) == []
    return process.returncode, err


def read_rows(counter):
    try:
        return json.loads(counter.read_text())["reading_candidates"].get("rows", 0)
    except (OSError, ValueError, KeyError):
        return 0


def test_a_worker_killed_while_reading_fails_the_run(tmp_path):
    """The trigger is the reading worker's own counter file, and the proof that it
    was still reading is that file's count, read while the worker is stopped: the
    input (one gzip, which one worker reads alone) has 600,000 rows, far more than a
    worker reads before the test sees its first count, on a quiet or a loaded machine."""
    rows = 600_000
    with gzip.open(tmp_path / "in.jsonl.gz", "wt", compresslevel=1) as fh:
        line = '{"system": "s%d", "doc_id": "d%d", "candidate": "a b c", "references": ["a b d"]}\n'
        fh.writelines(line % (i % 2, i // 2) for i in range(rows))
    process = start(tmp_path)
    deadline = time.monotonic() + 240
    reader = None
    while reader is None and process.poll() is None and time.monotonic() < deadline:
        for counter in (tmp_path / "tmp").glob("rouge-progress-*/reading_candidates-*.json"):
            if read_rows(counter):  # (a worker that got no file writes an empty count)
                reader = int(counter.name.split("-")[1])
        time.sleep(0.01)
    assert reader, f"the run ended before it read: {process.communicate()[1][-2000:]}"
    os.kill(reader, signal.SIGSTOP)
    read = max(read_rows(c) for c in (tmp_path / "tmp").glob(f"rouge-progress-*/reading_candidates-{reader}-*.json"))
    os.kill(reader, signal.SIGKILL)
    print(f"killed the reading worker after {read:,} of {rows:,} rows")
    assert 0 < read < rows  # it was still reading
    status, err = finish(process, tmp_path, "a worker was killed while reading")
    assert status == 1, err
    assert err.count("rouge-pipeline: error: WorkerLost: a Beam worker process ended abnormally") == 1, err


def test_a_stopped_worker_fails_the_run_after_the_stall_limit(tmp_path):
    """SIGSTOP: the worker is alive but never answers.  With run.worker_stall_seconds
    = 3 the run stops a few seconds after, in one line naming the worker and the
    limit.  (Without the watch it waited for ever.)"""
    corpus(tmp_path)
    process = start(tmp_path, "worker_stall_seconds = 3\n")
    deadline = time.monotonic() + 240
    stopped = None
    while stopped is None and process.poll() is None and time.monotonic() < deadline:
        running = workers(process.pid)
        if len(running) == 2:  # both started: each stage needs both
            stopped = running[0]
            os.kill(stopped, signal.SIGSTOP)
        time.sleep(0.02)
    assert stopped, f"the run ended before a worker was stopped: {process.communicate()[1][-2000:]}"
    at = time.monotonic()
    status, err = finish(process, tmp_path, "a worker was stopped")
    print(f"the run ended {time.monotonic() - at:.1f} s after the stop")
    assert status == 1, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert lines == [
        f"rouge-pipeline: error: WorkerStalled: a Beam worker process ({stopped}) has been stopped (state T: "
        "SIGSTOP or a debugger) for 3 s (run.worker_stall_seconds = 3); the run was stopped"
    ], err
    assert time.monotonic() - at >= 3


TICKS = os.sysconf("SC_CLK_TCK")


def test_stall_rules_tell_a_wedged_run_from_a_slow_one():
    """The no-progress rule, look by look (limit 10 s; two workers and the driver,
    idle at 0.5% of a core each: gRPC's wake-ups, as measured on a wedged run)."""
    idle = 0.005 * TICKS

    def looks(watch, seconds, busy=0.0, counters=lambda t: 0, state="S", workers=True):
        for t in range(seconds + 1):
            ticks = {pid: int(t * (idle + (busy * TICKS if pid == 2 else 0))) for pid in (1, 2, 3)}
            reason = watch.look(float(t), {pid: (state if pid == 3 else "S", n) for pid, n in ticks.items()},
                                counters(t), workers)
            if reason:
                return t, reason
        return None

    idle_waits = lambda pid: 0.0  # noqa: E731 (no thread waits for a CPU)
    assert looks(StallWatch(10, idle_waits), 60) == (
        10, "no progress for 10 s: no counter moved, and no process of the run used 2% of a core or waited "
        "for one (the run waits for something that does not come: a wedged worker)")
    # one worker working slowly (a tenth of a core: a loaded machine), no counter: not wedged
    assert looks(StallWatch(10, idle_waits), 60, busy=0.1) is None
    # just under the share for the whole window: wedged
    assert looks(StallWatch(10, idle_waits), 60, busy=WORKING_SHARE - 0.01)[0] == 10
    # counters moving every 5 s with no CPU: not wedged
    assert looks(StallWatch(10, idle_waits), 60, counters=lambda t: t // 5) is None
    # counters stop moving at 30 s: wedged 10 s later
    assert looks(StallWatch(10, idle_waits), 60, counters=lambda t: min(t, 30) // 5)[0] == 40
    # no worker processes (the in-process runner): the no-progress rule does not apply
    assert looks(StallWatch(10, idle_waits), 60, workers=False) is None
    # a stopped worker: after the limit, though the others (and counters) move
    t, reason = looks(StallWatch(10), 60, busy=1.0, counters=lambda t: t, state="T")
    assert (t, reason) == (10, "a Beam worker process (3) has been stopped (state T: SIGSTOP or a debugger) for 10 s")


@pytest.mark.parametrize("value", [0.5, -1, 86_401, float("nan")])
def test_the_stall_limit_is_range_checked(value):
    from pipeline.config import InputConfig, RunConfig, RunOptions
    from rouge_core import RougeConfigError

    config = RunConfig(input=InputConfig(candidates=("x",)), run=RunOptions(worker_stall_seconds=value))
    with pytest.raises(RougeConfigError, match=r"run.worker_stall_seconds must be 0 \(never\) or between 1 and 86,400; got "):
        config.validate()
    for fine in (0.0, 1.0, 300.0, 86_400.0):
        RunConfig(input=InputConfig(candidates=("x",)), run=RunOptions(worker_stall_seconds=fine)).validate()
