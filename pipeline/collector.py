"""Python's cyclic garbage collector, tuned for scoring: rows, tuples and lists by
the million, none of them in a reference cycle (they are freed by their counts),
so the collector's passes over a large heap find nothing and cost the most.
Set only where this code owns the process: the command line, a worker process
of a runner, and `run()` while its pipeline runs (restored after).

Measured on 80,000 pairs, the reading, joining, scoring and aggregating steps
called directly: 73 us per pair with Python's default thresholds (700, 10, 10),
57 us with the collector off, 58 us with (100,000, 20, 10).  A first-generation
pass looks at every container object made since the last one and still alive,
so rows a stage holds for a while are looked at again and again; a higher first
threshold does fewer passes but leaves cyclic garbage longer.  Tried on
2026-11-27 (one file of 10 systems, in process): at 1,000,000, 80,000 pairs made
no pass instead of 8 and cost 7.6-7.8 CPU-s against 8.1-8.2, but 1,000,000 pairs
peaked at 542 MiB against 462, 1.32 times the peak at 200,000 pairs (the bound is
1.2: memory must not grow with the input); at 300,000, 494 against 415 MiB
(1.19).  So the threshold stays at 100,000.  The collector stays on: cycles (a
traceback, a closure) are still collected, after 100,000 allocations instead of
700.
"""

from __future__ import annotations

import contextlib
import gc
import os
import uuid

THRESHOLDS = (100_000, 20, 10)

# This process, told apart from a worker forked from it (another pid) or started
# fresh (another token), even on another host or in a container where pids repeat.
_TOKEN = uuid.uuid4().hex


def this_process() -> str:
    return f"{os.getpid()}-{_TOKEN}"


@contextlib.contextmanager
def fewer_collections():
    """THRESHOLDS while the body runs (the command line's command, `run()`'s
    pipeline); the caller's thresholds are restored after: a library call leaves
    the process as it found it."""
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def in_worker(driver: str) -> None:
    """A DoFn's setup: THRESHOLDS for good in a worker process of the runner's (the
    DoFn's setup is the worker's entry point into this code); nothing in `driver`,
    the process that built the graph (`this_process()` there), whose runner runs the
    DoFns in process, inside `run()`'s `fewer_collections`."""
    if driver != this_process() and gc.get_threshold() != THRESHOLDS:
        gc.set_threshold(*THRESHOLDS)
