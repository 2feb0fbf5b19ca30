"""The coder of the graph's batches: rows that travel many to an element.

Beam measures every PCollection's mean element size by encoding sampled elements
(the first ten of each operation's outputs, then about ten in every N), whole.
For an element of one row that is cheap; for a batch of 2,000 rows with their
texts it is a full encoding that nothing uses, done in every run and at random
(Beam 2.77's `OperationCounters._should_sample` draws from `random`): 0.3-0.6 CPU-s
of a run of 20,000-80,000 pairs here, and run-to-run noise.  A batch PCollection
is `batched`: its coder encodes as Beam's own (FastPrimitivesCoder) and estimates
a batch's size from its first row's, times the number of rows.
"""

from __future__ import annotations

import apache_beam as beam


class Batch:
    """The element type of a batch PCollection: a list of rows, or a (key, [rows])
    pair.  Only a type hint, so that Beam picks `BatchCoder`."""


class BatchCoder(beam.coders.Coder):
    """Beam's FastPrimitivesCoder, but a batch's size estimate is its first row's
    encoded size times its number of rows (the whole batch encoded when it has no
    list of rows); a tuple of three or more whose first item is a list of rows
    (a list of documents and what goes with them) is measured by that list."""

    def __init__(self):
        self._rows = beam.coders.FastPrimitivesCoder()

    def encode(self, value) -> bytes:
        return self._rows.encode(value)

    def decode(self, encoded: bytes):
        return self._rows.decode(encoded)

    def is_deterministic(self) -> bool:
        return self._rows.is_deterministic()

    def estimate_size(self, value) -> int:
        rows = value[1] if type(value) is tuple and len(value) == 2 else value
        if isinstance(rows, tuple) and len(rows) > 2 and type(rows[0]) is list:
            rows = rows[0]  # (a list of rows with what goes with them: pipeline.beam.documents.Matched)
        if type(rows) is list and rows:
            return len(self._rows.encode(rows[0])) * len(rows)
        return len(self._rows.encode(value))

    def to_type_hint(self):
        return Batch


beam.coders.registry.register_coder(Batch, BatchCoder)


def batched(pcoll: beam.PCollection) -> beam.PCollection:
    """`pcoll`, its elements typed Batch (so encoded, and measured, by BatchCoder)."""
    pcoll.element_type = Batch
    return pcoll
