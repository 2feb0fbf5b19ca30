"""Writing PCollections as fixed shard layouts, whatever the runner."""

from __future__ import annotations

import apache_beam as beam

from pipeline.beam.documents import ScoredDocument, scored_documents
from pipeline.io.tables import errors_writer, per_document_writer
from pipeline.records import ErrorRecord
from rouge_core.resampling import stable_hash


class ShardedWrite(beam.PTransform):
    """Write a PCollection as `folder/part-NNNNN-of-MMMMM.*`: a row r goes to shard
    stable_hash(key(r)) mod M, every shard is written (an empty one too, so the layout
    is fixed), and `write(shard, M, rows)` sorts and writes one.  M is `shards`,
    or with shards = 0, one shard per `per_shard` rows (from their count): no
    worker ever holds more than a bounded part.

    `rows(element)` gives an element's rows (an element is one row unless told),
    so a batch crosses the shuffle as one list per shard it touches.  With `record`
    (a NamedTuple class), rows cross as plain tuples, which Beam encodes field by
    field, and are rebuilt as `record`s for `write` (a NamedTuple without a
    registered coder would be pickled, class name and all)."""

    def __init__(self, key, write, count, shards: int = 0, per_shard: int = 100_000, record=None, rows=None):
        super().__init__()
        self.key, self.write, self.count, self.shards, self.per_shard = key, write, count, shards, per_shard
        self.record, self.rows = record, rows or (lambda e: [e])

    def expand(self, elements):
        key, write, fixed, per_shard, rows = self.key, self.write, self.shards, self.per_shard, self.rows
        plain = tuple if self.record else (lambda r: r)
        rebuild = self.record._make if self.record else (lambda r: r)

        def shards(count: int) -> int:
            return fixed or max(1, -(-count // per_shard))

        def by_shard(hashed: list, count: int):
            out: dict = {}
            n = shards(count)
            for h, row in hashed:
                out.setdefault(h % n, []).append(row)
            return list(out.items())

        count = beam.pvalue.AsSingleton(self.count)
        # The hash of each row's key first, in the stage that made the rows; the shard,
        # which needs the count, after it: what waits for the count is (hash, tuple) lists.
        hashed = elements | "HashOf" >> beam.Map(lambda e: [(stable_hash(key(r)), plain(r)) for r in rows(e)])
        keyed = hashed | "ShardOf" >> beam.FlatMap(by_shard, count)
        empty = self.count | "AllShards" >> beam.FlatMap(lambda n: [(i, []) for i in range(shards(n))])
        return (
            (keyed, empty)
            | "FlattenShards" >> beam.Flatten()
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShard"
            >> beam.Map(lambda kv, n: write(kv[0], shards(n), [rebuild(r) for part in kv[1] for r in part]), count)
        )


class WriteResults(beam.PTransform):
    """(scored batches, errors) in; per_document/ and errors/ shards written to
    `staging` (the per-document shard count follows their number unless set)."""

    def __init__(self, staging: str, output, profiles):
        super().__init__()
        self.staging, self.output, self.profiles = staging, output, profiles

    def expand(self, inputs):
        batches, errors = inputs
        count = batches | "DocumentScores" >> beam.Map(lambda b: len(b[1])) | "CountDocumentScores" >> beam.CombineGlobally(sum)
        batches | "PerDocument" >> ShardedWrite(
            lambda d: f"{d.system}\x1f{d.doc_id}",
            per_document_writer(self.staging, self.output.per_document_formats, self.profiles),
            count,
            self.output.per_document_shards,
            record=ScoredDocument,
            rows=scored_documents,
        )
        return errors | "Errors" >> ShardedWrite(
            lambda e: f"{e.source}\x1f{e.position}",
            errors_writer(self.staging),
            errors | "CountErrors" >> beam.combiners.Count.Globally(),
            record=ErrorRecord,
        )
