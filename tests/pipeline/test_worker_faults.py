"""Worker faults end the run promptly (issue 22): a Beam worker process SIGKILLed at
any stage makes the run fail within a bounded time, in one error line, with
nothing published and no process left behind.  (It used to hang: the runner
waited for ever for the dead worker's answer.)"""

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
