"""Python's cyclic garbage collector, tuned for scoring: rows, tuples and lists by
the million, none of them in a reference cycle (they are freed by their counts),
so the collector's passes over a large heap find nothing and cost the most.

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

import gc

THRESHOLDS = (100_000, 20, 10)


def fewer_collections() -> None:
    """Set THRESHOLDS for this process (idempotent; every worker calls it in its
    DoFns' setup, the command line at start)."""
    if gc.get_threshold() != THRESHOLDS:
        gc.set_threshold(*THRESHOLDS)
