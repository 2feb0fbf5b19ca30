"""The workers' side of a run's progress: counters, kept in memory per element and
handed on every few seconds, never per element.

Beam's local runners show nothing while they run and report metrics only when
the run ends.  So when the driver names a progress folder (the environment
variable PROGRESS_FOLDER_ENV, set by pipeline/run_progress.py and inherited by the
local runners' worker processes), each worker replaces its own small JSON file
there with its cumulative counts at most four times a second; the driver sums the files
and draws the stages with their totals (pipeline/progress.py).  A runner whose
workers are other machines that can reach the driver installs a publisher on each
worker (`publish_to`; Dask: an event to the scheduler, which the driver writes to
that folder: pipeline/beam/runners/dask_runner.py).  Without either (Dataflow, Spark,
Flink) each worker prints a line to its log every `every_seconds`, and the same
counts are the job's live Beam metrics ("rouge" namespace, `<stage>_<what>`).

Per element, `add` costs one dict update and one integer comparison; the clock,
the Beam counters and the file are touched once every `CHECK_EVERY` elements.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import uuid

from apache_beam.metrics import Metrics

from pipeline.progress import write_counts

PROGRESS_FOLDER_ENV = "ROUGE_PIPELINE_PROGRESS_FOLDER"
CHECK_EVERY = 64  # elements between two looks at the clock
FILE_SECONDS = 0.25  # at most four file writes a second per worker
MAX_SYSTEMS = 10_000  # systems names kept for the driver's totals
_PUBLISH: list = [None]  # this worker's publisher, if its runner installed one


def publish_to(publish) -> None:
    """Hand this process's counts to `publish(name, counts)` from now on, when the
    run names no progress folder here (None: a log line, as before)."""
    _PUBLISH[0] = publish


class Progress:
    def __init__(self, stage: str, every_seconds: float):
        self.stage = stage
        self.every_seconds = every_seconds
        self.counts: dict = {}
        self.reported: dict = {}
        self.systems: set = set()

    def start(self) -> None:
        self.started = time.monotonic()
        self.last = -math.inf  # the first element is handed on at once: the driver sees the stage start
        self.folder = os.environ.get(PROGRESS_FOLDER_ENV) or None
        self.name = f"{self.stage}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.pending = CHECK_EVERY - 1

    def add(self, what: str, n: int = 1, system: str | None = None, systems=()) -> None:
        """`n` more of `what` (by `system`, or by the `systems` of a batch)."""
        self.counts[what] = self.counts.get(what, 0) + n
        if system is not None and len(self.systems) < MAX_SYSTEMS:
            self.systems.add(system)
        if systems and len(self.systems) < MAX_SYSTEMS:
            self.systems.update(systems)
        self.pending += n
        if self.pending >= CHECK_EVERY:
            self.pending = 0
            self.flush()

    def flush(self, force: bool = False) -> None:
        """Hand the counts on, if enough time has passed (or `force`)."""
        now = time.monotonic()
        publish = _PUBLISH[0] if not self.folder else None
        every = FILE_SECONDS if self.folder or publish else self.every_seconds
        if not force and now - self.last < every:
            return
        self.last = now
        for what, n in self.counts.items():
            delta = n - self.reported.get(what, 0)
            if delta:
                Metrics.counter("rouge", f"{self.stage}_{what}").inc(delta)
        self.reported = dict(self.counts)
        if self.folder or publish:
            counts = {self.stage: self.counts}
            if self.systems:
                counts["systems"] = sorted(self.systems)
            if publish:
                publish(self.name, counts)
            else:
                write_counts(self.folder, self.name, counts)
        else:
            self.report(now)

    def report(self, now: float) -> None:
        done = ", ".join(f"{n:,} {what}" for what, n in self.counts.items())
        rate = sum(self.counts.values()) / max(now - self.started, 1e-9)
        print(
            f"rouge-pipeline: worker {os.getpid()}: {self.stage}: {done} ({rate:,.0f}/s)",
            file=sys.stderr,
            flush=True,
        )


_TALLIES: dict = {}
_TALLIES_LOCK = threading.Lock()  # a worker's threads (multi_threading mode) share its tallies


def tally(stage: str, what: str, n: int = 1) -> None:
    """Count from a plain function (a Map or a CombineFn's extract_output): one
    Progress per stage and worker process, made on first use.  Safe from many threads
    at once: a tally is made whole before another thread can see it, and counted and
    handed on under a lock (tallies are few, so the lock costs nothing that shows)."""
    folder = os.environ.get(PROGRESS_FOLDER_ENV) or None
    with _TALLIES_LOCK:
        progress = _TALLIES.get(stage)
        if progress is None or progress.folder != folder:
            progress = Progress(stage, 30.0)
            progress.start()
            _TALLIES[stage] = progress
        progress.add(what, n)
        progress.flush(force=True)  # a tally counts whole systems or pairs: few, and each worth showing
