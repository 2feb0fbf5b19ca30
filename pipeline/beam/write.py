"""Writing PCollections as fixed shard layouts, whatever the runner."""

from __future__ import annotations

import apache_beam as beam

from pipeline.beam.documents import ScoredDocument
from pipeline.io.tables import errors_writer, per_document_writer
from pipeline.records import ErrorRecord
from rouge_core.resampling import stable_hash


class ShardedWrite(beam.PTransform):
    """Write a PCollection as `folder/part-NNNNN-of-MMMMM.*`: element e goes to shard
    stable_hash(key(e)) mod M, every shard is written (an empty one too, so the layout
    is fixed), and `write(shard, M, elements)` sorts and writes one.  M is `shards`,
    or with shards = 0, one shard per `per_shard` elements (from their count): no
    worker ever holds more than a bounded part.

    With `record` (a NamedTuple class), elements cross the shuffle as plain tuples,
    which Beam encodes field by field, and are rebuilt as `record`s for `write`
    (a NamedTuple without a registered coder would be pickled, class name and all)."""

    def __init__(self, key, write, count, shards: int = 0, per_shard: int = 100_000, record=None):
        super().__init__()
        self.key, self.write, self.count, self.shards, self.per_shard = key, write, count, shards, per_shard
        self.record = record

    def expand(self, elements):
        key, write, fixed, per_shard = self.key, self.write, self.shards, self.per_shard  # no `self` in closures
        plain = tuple if self.record else (lambda e: e)
        rebuild = self.record._make if self.record else (lambda e: e)

        def shards(count: int) -> int:
            return fixed or max(1, -(-count // per_shard))

        count = beam.pvalue.AsSingleton(self.count)
        # The hash of the key first, in the stage that made the elements; the shard,
        # which needs the count, after it: what waits for the count is (hash, tuple).
        hashed = elements | "HashOf" >> beam.Map(lambda e: (stable_hash(key(e)), plain(e)))
        keyed = hashed | "ShardOf" >> beam.Map(lambda he, n: (he[0] % shards(n), he[1]), count)
        empty = self.count | "AllShards" >> beam.FlatMap(lambda n: [(i, None) for i in range(shards(n))])
        return (
            (keyed, empty)
            | "FlattenShards" >> beam.Flatten()
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShard"
            >> beam.Map(lambda kv, n: write(kv[0], shards(n), [rebuild(e) for e in kv[1] if e is not None]), count)
        )


class WriteResults(beam.PTransform):
    """(scored documents, errors) in; per_document/ and errors/ shards written to
    `staging` (the per-document shard count follows their number unless set)."""

    def __init__(self, staging: str, output, profiles):
        super().__init__()
        self.staging, self.output, self.profiles = staging, output, profiles

    def expand(self, inputs):
        documents, errors = inputs
        documents | "PerDocument" >> ShardedWrite(
            lambda d: f"{d.system}\x1f{d.doc_id}",
            per_document_writer(self.staging, self.output.per_document_formats, self.profiles),
            documents | "CountDocumentScores" >> beam.combiners.Count.Globally(),
            self.output.per_document_shards,
            record=ScoredDocument,
        )
        return errors | "Errors" >> ShardedWrite(
            lambda e: f"{e.source}\x1f{e.position}",
            errors_writer(self.staging),
            errors | "CountErrors" >> beam.combiners.Count.Globally(),
            record=ErrorRecord,
        )
