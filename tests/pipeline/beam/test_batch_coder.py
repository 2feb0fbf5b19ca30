"""The coder of the graph's batches (pipeline.beam.batches): a batch is pickled
whole when it crosses a stage, but Beam's size sampling prices it from one row."""

from __future__ import annotations

import pickle

import apache_beam as beam
from apache_beam.coders import FastPrimitivesCoder, registry

from pipeline.beam.batches import Batch, BatchCoder, batched
from pipeline.beam.read import ReadSummaries
from pipeline.config import InputConfig


def test_a_batch_encodes_as_beams_own_coder_and_is_sized_from_its_first_row():
    coder, beams = BatchCoder(), FastPrimitivesCoder()
    row = ("sys", "doc-1", b"\x00" * 384)
    batch = ("rouge155", [row] * 1000)
    assert coder.encode(batch) == beams.encode(batch) and coder.decode(coder.encode(batch)) == batch
    one = len(beams.encode(row))
    assert coder.estimate_size(batch) == one * 1000  # not the batch encoded whole
    assert coder.estimate_size([row, row]) == one * 2  # a list of rows (DocumentGroups)
    assert coder.estimate_size(("k", [])) == len(beams.encode(("k", [])))
    assert coder.estimate_size({"a": 1}) == len(beams.encode({"a": 1}))
    assert BatchCoder() == BatchCoder() and pickle.loads(pickle.dumps(coder)) == coder  # (sent to workers)


def test_beam_picks_the_batch_coder_for_batched_collections():
    assert isinstance(registry.get_coder(Batch), BatchCoder)
    p = beam.Pipeline()
    read = p | ReadSummaries(InputConfig(), ["a.jsonl"], [], "/nonexistent")
    for name in ("candidates", "references"):
        assert read[name].element_type is Batch
    assert read["counts"].element_type is not Batch  # (small elements keep Beam's own coder)
    plain = p | "Plain" >> beam.Create([1])
    assert batched(plain) is plain and plain.element_type is Batch
