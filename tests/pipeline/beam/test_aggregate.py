"""The aggregation's composites alone (TestPipeline + assert_that)."""

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline.beam.aggregate import EvaluationIds
from pipeline.beam.documents import ScoredDocument, batches_of

IDS = ["b", "a", "ab", "é1", "é", "z9", "\U0001f600x", "A", "10", "9", "\u00e9\u00e9", "a\U0001f600"]


def _documents():
    # two systems; system "s2" lacks one document, which still has its number
    return [ScoredDocument("p", "s1", d, d.encode()) for d in IDS] + [
        ScoredDocument("p", "s2", d, d.encode()) for d in IDS[1:]
    ]


def _run(mode: str, expected):
    options = PipelineOptions(["--runner=FnApiRunner", "--direct_running_mode=in_memory"])
    with TestPipeline(options=options) as p:
        out = p | beam.Create(batches_of(_documents())) | EvaluationIds(mode)
        assert_that(out, equal_to(expected))


def test_index_numbers_every_document_in_sorted_doc_id_order_across_byte_ranges():
    number = {d: str(i) for i, d in enumerate(sorted(IDS), 1)}  # Python's str order: code points
    expected = [(("p", d.system), [(number[d.doc_id], d.values)]) for d in _documents()]
    _run("index", expected)


def test_doc_id_mode_uses_the_doc_ids():
    # one scored batch: one list per system, in doc_id order
    expected = [(("p", s), [(d.doc_id, d.values) for d in sorted(_documents(), key=lambda d: d.doc_id) if d.system == s]) for s in ("s1", "s2")]
    _run("doc_id", expected)
