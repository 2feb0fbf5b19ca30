"""Python's cyclic garbage collector, tuned for scoring: rows, tuples and lists by
the million, none of them in a reference cycle (they are freed by their counts),
so the collector's passes over a large heap find nothing and cost the most.

Measured on 80,000 pairs, the reading, joining, scoring and aggregating steps
called directly: 73 us per pair with Python's default thresholds (700, 10, 10),
57 us with the collector off, 58 us with (100,000, 20, 10).  A first-generation
pass looks at every container object made since the last one and still alive:
rows a stage holds for a while (a batch, a bucket) were looked at again and
again.  At 1,000,000 a pass runs only once a million more containers are alive
than at the last one, which a run of bounded memory rarely reaches: a run of
80,000 pairs in process made 8 passes (0.23 CPU-s) at 100,000 and none at
1,000,000, and cost 7.6-7.8 CPU-s against 8.1-8.2 (three runs each; 44 against
51 us a pair at the margin), its peak 20 MB higher (490 against 472 MiB: what
the passes would have freed).  The collector stays on: cycles (a traceback, a
closure) are still collected, after a million allocations instead of 700.
"""

from __future__ import annotations

import gc

THRESHOLDS = (1_000_000, 20, 10)


def fewer_collections() -> None:
    """Set THRESHOLDS for this process (idempotent; every worker calls it in its
    DoFns' setup, the command line at start)."""
    if gc.get_threshold() != THRESHOLDS:
        gc.set_threshold(*THRESHOLDS)
