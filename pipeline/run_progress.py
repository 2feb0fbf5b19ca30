"""The driver's view of a run: the workers' counters (written by
pipeline/beam/progress.py to a temporary folder) summed twice a second (or as
often as [run] progress_seconds asks, if more often) and shown as stages with a
total, a rate and the time left (pipeline/progress.py).

Stages and their totals:

    reading      rows of every input file             (counted ahead: pipeline/io/row_counts.py)
    scoring      candidate rows that could be read    (the candidate files' rows, less their bad rows)
    aggregating  (profile, system) pairs               (the systems the scorers saw, times the profiles)
    significance pairs of systems per profile          (every pair, or each system against the baseline)

The report, written by the driver after Beam finishes, is a stage of its own
(pipeline/beam/run.py).  Dask's workers hand the same counters to the driver through
the scheduler, which writes them to the same folder (pipeline/beam/runners/dask_runner.py).
On a runner whose workers cannot reach the driver the view shows nothing:
Dataflow, Spark and Flink show the same counters as live metrics.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from typing import Optional

from pipeline.io.row_counts import count_all
from pipeline.progress import Progress, read_counts

POLL_SECONDS = 0.5
STAGES = {"reading": "rows", "scoring": "summaries", "aggregating": "systems", "significance": "pairs"}


class RunProgress:
    """`with RunProgress(...) as view:` around the Beam pipeline; `view.finish(counts)`
    after it, with the run's counts, closes every stage at its final numbers: each
    stage's last line is in the log, also for a stage that ended between two looks."""

    def __init__(self, progress: Progress, inputs: dict, *, env: str, profiles: int, baseline: str = "",
                 significance: bool = False, human: str = "", live: bool = True):
        self.progress, self.inputs, self.env = progress, inputs, env
        self.profiles, self.baseline, self.significance, self.human = profiles, baseline, significance, human
        # live: the runner's workers hand their counters to the driver (local runners, Dask);
        # else the view shows nothing
        self.active = live
        self.stages: dict = {}
        self.totals: dict = {"candidates": None, "references": None}
        self.stop = threading.Event()

    def __enter__(self) -> "RunProgress":
        if not self.active:
            return self
        self.folder = tempfile.mkdtemp(prefix="rouge-progress-")
        self.previous = os.environ.get(self.env)
        os.environ[self.env] = self.folder
        if self.progress.quiet:  # the workers' counters still tell the stall watch they move
            self.poller = None
            return self
        # the inputs' rows counted ahead (gzip read once more: about 4 CPU-s per 1,000,000 rows)
        self.counter = threading.Thread(target=self._count_inputs, name="rouge-progress-count", daemon=True)
        self.poller = threading.Thread(target=self._poll, name="rouge-progress", daemon=True)
        self.counter.start()
        self.poller.start()
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if not self.active:
            return
        self.stop.set()
        if self.poller:
            self.poller.join()
        if self.previous is None:
            os.environ.pop(self.env, None)
        else:
            os.environ[self.env] = self.previous
        for stage in self.stages.values():
            stage.close(finished=kind is None)
        shutil.rmtree(self.folder, ignore_errors=True)

    def finish(self, counts: dict) -> None:
        """The run's own counts: the stages end at the true numbers."""
        if not self.active or not self.poller:
            return
        self.stop.set()
        self.poller.join()
        self._show(read_counts(self.folder), final=counts)

    # ------------------------------------------------------------- inside

    def _count_inputs(self) -> None:
        for kind in ("candidates", "references"):
            self.totals[kind] = count_all(self.inputs[kind])

    def _poll(self) -> None:
        # twice a second, or as often as a log line is asked for ([run] progress_seconds)
        seconds = min(POLL_SECONDS, max(self.progress.interval, 0.05))
        while not self.stop.wait(seconds):
            self._show(read_counts(self.folder))

    def _stage(self, name: str):
        """The stage `name`, made (with every stage before it) when first needed."""
        for earlier, unit in STAGES.items():
            if earlier not in self.stages and (earlier != "significance" or self.significance):
                # its line, even if it ended between two looks
                self.stages[earlier] = self.progress.stage(earlier, None, unit, always_end=True)
            if earlier == name:
                return self.stages[name]

    def _ended(self, name: str) -> bool:
        return name in self.stages and self.stages[name].closed

    def _show(self, counts: dict, final: Optional[dict] = None) -> None:
        """Each stage from its first count, or from the end of the stage before it
        (the workers count a summary once scored, a system or a pair once done: the
        time until then, grouping the documents or the bootstrap, is the stage's too)."""
        started = final is not None or any(stage != "systems" and values for stage, values in counts.items())
        if "starting" not in self.stages:  # Beam's start (worker processes: seconds) until the first count
            self.stages["starting"] = self.progress.stage("starting Beam", 1, "runner", always_end=True)
        if started:
            self.stages["starting"].set(1)
        else:
            self.stages["starting"].set(0)
            return
        read = {kind: counts.get(f"reading_{kind}", {}) for kind in ("candidates", "references")}
        rows = sum(sum(c.values()) for c in read.values())
        known = [self.totals[kind] for kind in read]
        rows_total = None if None in known else sum(known)
        if final is not None:
            rows = rows_total = final["rows_read"]
        if rows or final is not None:
            self._stage("reading").set(rows, rows_total)
        scoring = counts.get("scoring", {})
        scored = scoring.get("scored", 0) + scoring.get("failed", 0)
        candidates = self.totals["candidates"]
        to_score = None if candidates is None else max(candidates - read["candidates"].get("bad rows", 0), scored)
        if final is not None:
            scored = to_score = final["scored"] + scoring.get("failed", 0)
        if scored or self._ended("reading") or final is not None:
            self._stage("scoring").set(scored, to_score)
        systems = set(final["documents_by_system"]) if final is not None else set(counts.get("systems", ()))
        systems |= {self.human} if self.human else set()
        if "aggregating" in counts or self._ended("scoring") or (final is not None and systems):
            done = counts.get("aggregating", {}).get("systems", 0)
            total = self.profiles * len(systems) if systems else None
            self._stage("aggregating").set(total if final is not None and total else done, total)
        if (self.significance and len(systems) > 1
                and ("significance" in counts or self._ended("aggregating") or final is not None)):
            n = len(systems)
            total = self.profiles * ((n - 1) if self.baseline else n * (n - 1) // 2)
            done = counts.get("significance", {}).get("pairs", 0)
            self._stage("significance").set(total if final is not None else done, total)
