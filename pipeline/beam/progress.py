"""Progress lines for long runs, printed by each worker at most every few seconds.

Beam's local runners report metrics only when a run ends, so every worker
prints what it has done so far straight to stderr (the worker processes of the
multi-processing DirectRunner share the terminal); on Dataflow the same counts
also appear live as the job's metrics.
"""

from __future__ import annotations

import os
import sys
import time

from apache_beam.metrics import Metrics


class Progress:
    def __init__(self, stage: str, every_seconds: float):
        self.stage = stage
        self.every_seconds = every_seconds
        self.counters: dict = {}
        self.counts: dict = {}

    def start(self) -> None:
        self.started = self.last = time.monotonic()

    def add(self, what: str, n: int = 1) -> None:
        if what not in self.counters:
            self.counters[what] = Metrics.counter("rouge", f"{self.stage}_{what}")
            self.counts[what] = 0
        self.counters[what].inc(n)
        self.counts[what] += n
        now = time.monotonic()
        if now - self.last >= self.every_seconds:
            self.last = now
            self.report(now)

    def report(self, now: float) -> None:
        done = ", ".join(f"{n:,} {what}" for what, n in self.counts.items())
        rate = sum(self.counts.values()) / max(now - self.started, 1e-9)
        print(
            f"rouge-pipeline: worker {os.getpid()}: {self.stage}: {done} ({rate:,.0f}/s)",
            file=sys.stderr,
            flush=True,
        )
