"""Library calls leave the caller's process as they found it (issue 32): BLAS
thread limits, the garbage collector's thresholds, the thread exception hook and
signal handlers are the caller's after `corpus_score`, `run()` and the command
line's `main()`, each called in a fresh process (what a first call changes is what
a notebook would see)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The process's state before and after CALL (a statement), printed as JSON.
# The calling program logs to a file of its own (host.log), which must stay open and
# keep receiving its lines.
PROBE = """
import gc, json, logging, signal, sys, threading
import numpy  # (BLAS loaded before the first look)
import threadpoolctl

logging.basicConfig(filename="host.log", level=logging.INFO)

def state():
    root = logging.getLogger()
    return {
        "blas": [(i["internal_api"], i["num_threads"]) for i in threadpoolctl.threadpool_info()],
        "gc": list(gc.get_threshold()),
        "excepthook": repr(threading.excepthook),
        "sigterm": repr(signal.getsignal(signal.SIGTERM)),
        "sigusr1": repr(signal.getsignal(signal.SIGUSR1)),
        "logging": [root.level, [(repr(h), getattr(h, "stream", None) is not None) for h in root.handlers]],
    }

before = state()
CALL
after = state()
logging.getLogger("host").info("the host's line after the call")
print(json.dumps({"before": before, "after": after}))
"""


def probe(call: str, tmp_path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE.replace("CALL", textwrap.dedent(call))], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_blas_can_use_more_than_one_thread_here():
    """The checks below mean something only where BLAS has a pool to limit."""
    import numpy  # noqa: F401  (loads BLAS)
    import threadpoolctl

    info = threadpoolctl.threadpool_info()
    if not any(i["user_api"] == "blas" and i["num_threads"] > 1 for i in info):
        pytest.skip(f"BLAS runs on one thread here ({info}): nothing a limit could change")


def test_corpus_score_leaves_blas_and_gc_as_they_were(tmp_path):
    seen = probe("""
        from rouge_core import corpus_score
        result = corpus_score(["the cat sat", "a dog ran"] * 300, [["the cat sat down"], ["a dog"]] * 300, settings="-n 2")
        assert result["ROUGE-1"].documents == 600
    """, tmp_path)
    assert seen["after"] == seen["before"]


def test_run_leaves_blas_gc_hooks_and_signals_as_they_were(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(
        json.dumps({"system": s, "doc_id": f"d{i}", "candidate": f"a b c {s} {i}", "references": [f"a b {i}"]}) + "\n"
        for s in ("x", "y") for i in range(30)
    ))
    seen = probe(f"""
        from pipeline.config import RunConfig, with_overrides
        from pipeline.beam.run import run
        config = with_overrides(RunConfig(), input_candidates=({str(data)!r},), output_folder={str(tmp_path / "out")!r},
                                rouge_args="-n 2 -r 10")
        record = run(config)
        assert record["counts"]["scored"] == 60
    """, tmp_path)
    assert seen["after"] == seen["before"]
    assert (tmp_path / "out" / "_SUCCESS").exists()


def test_the_command_line_restores_what_it_set_when_called_in_process(tmp_path):
    (tmp_path / "c.txt").write_text("the cat sat\n")
    (tmp_path / "r.txt").write_text("the cat sat down\n")
    seen = probe("""
        from pipeline.cli import main
        assert main(["score", "c.txt", "r.txt", "--rouge-args", "-n 1 -r 10", "--quiet", "-b"]) == 0
    """, tmp_path)
    assert seen["after"] == seen["before"]
    assert "the host's line after the call" in (tmp_path / "host.log").read_text()


def test_the_command_line_logs_to_the_callers_stderr_and_hands_logging_back(tmp_path):
    """While it runs, `main` logs its warnings to the sys.stderr it was called with
    (here a capture, closed after, as a test's is); after it, a warning goes to the
    caller's handlers only, never to a stream `main` once saw (which printed
    "--- Logging error ---" in CI when a Dask thread logged after a test)."""
    row = {"system": "s", "doc_id": "d1", "candidate": "the cat sat", "references": ["the cat sat down"]}
    (tmp_path / "in.jsonl").write_text(json.dumps(row) + "\n")
    seen = probe("""
        import io, pathlib
        from pipeline.cli import main

        inside = io.StringIO()
        sys.stderr = inside
        assert main(["run", "--input", "in.jsonl", "--output", "out", "--reuse", "nowhere", "--quiet"]) == 0
        sys.stderr = sys.__stderr__
        pathlib.Path("inside.txt").write_text(inside.getvalue())
        inside.close()  # a capture, closed once its test is done
        logging.getLogger("late.thread").warning("a warning after the command")
    """, tmp_path)
    assert seen["after"] == seen["before"]
    assert "rouge-pipeline: reusing nothing from nowhere" in (tmp_path / "inside.txt").read_text()
    host = (tmp_path / "host.log").read_text()
    assert "a warning after the command" in host and "reusing nothing" not in host


def test_a_worker_fault_leaves_the_thread_hook_and_signals_as_they_were(tmp_path):
    """A lost worker's exception, raised in a thread while watch_workers runs, stops
    the run with WorkerLost; the hook and SIGUSR1's handler are the caller's after."""
    seen = probe("""
        import threading
        from pipeline.beam.runners.faults import WorkerLost, watch_workers
        def lost():
            raise RuntimeError("Worker subprocess exited with return code -9")
        try:
            with watch_workers(0):
                worker = threading.Thread(target=lost)
                worker.start()
                worker.join()
                threading.Event().wait(5)  # (SIGUSR1 raises WorkerLost here)
        except WorkerLost as err:
            assert "killed by SIGKILL" in str(err), err
        else:
            raise AssertionError("no WorkerLost")
    """, tmp_path)
    assert seen["after"] == seen["before"]


def test_one_blas_thread_limits_inside_and_restores_after_even_across_threads(tmp_path):
    """Two threads inside at once: the limit holds until the last leaves, then the
    process's own limits are back (in a fresh process: the BLAS numpy loaded)."""
    seen = probe("""
        import threading
        from rouge_core.aggregate import one_blas_thread

        def threads():
            return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

        outside = threads()  # (more than 1 where there are cores: test_blas_can_use_more_than_one_thread_here)
        inside, release = threading.Event(), threading.Event()

        def hold():
            with one_blas_thread():
                inside.set()
                release.wait(10)

        other = threading.Thread(target=hold)
        other.start()
        inside.wait(10)
        with one_blas_thread():  # entered while the other thread is inside, left before it leaves
            assert threads() == [1] * len(outside)
        assert threads() == [1] * len(outside)  # the other thread is still inside
        release.set()
        other.join()
        assert threads() == outside
    """, tmp_path)
    assert seen["after"] == seen["before"]
