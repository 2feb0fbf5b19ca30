"""Writing the result tables: the per-document table a (profile, system) at a time,
other tables as fixed shard layouts, whatever the runner."""

from __future__ import annotations


import apache_beam as beam

from pipeline.beam.progress import tally
from pipeline.beam.spill import SpilledGroupByKey, SpillFn, load, place_hash
from pipeline.io.tables import errors_writer, per_document_writer
from pipeline.records import ErrorRecord


PARTITIONS = 4096  # the most shards a table gets from its count (a power of two)
_BITS = PARTITIONS.bit_length() - 1
# A partition's place in a spill file: its bits reversed, so that the partitions of
# any one shard (partition mod M, M a power of two) lie next to each other.
READ_ORDER = [int(f"{p:0{_BITS}b}"[::-1], 2) for p in range(PARTITIONS)]


def shard_count(count: int, per_shard: int) -> int:
    """Shards for `count` rows: the power of two that keeps a shard at most
    `per_shard` rows on average (at most PARTITIONS), so that the shard of a row,
    hash mod shards, follows from its partition, hash mod PARTITIONS."""
    return min(PARTITIONS, 1 << (max(1, -(-count // per_shard)) - 1).bit_length())


class ShardedWrite(beam.PTransform):
    """Write a PCollection as `folder/part-NNNNN-of-MMMMM.*`: a row goes to shard
    (its place) mod M, `places(rows)` giving the places of a list of rows (a
    `place_hash` each), every shard is written (an empty one too, so the layout
    is fixed), and `write(shard, M, rows)` sorts and writes one.  M is `shards`,
    or with shards = 0, `shard_count` of their count: no worker ever holds more than
    a bounded part.

    `rows(element)` gives an element's rows (an element is one row unless told).
    The rows go through spill files under `spill` (pipeline.beam.spill), a list per
    partition (hash mod PARTITIONS, or mod `shards` when fixed) and file written;
    the shard of a partition is known once the count is, and only the places cross
    the shuffle.  With `record` (a NamedTuple class), rows are spilled as plain
    tuples and rebuilt as `record`s for `write`."""

    def __init__(self, places, write, count, spill: str, name: str, shards: int = 0, per_shard: int = 100_000,
                 record=None, rows=None):
        super().__init__()
        self.places, self.write, self.count, self.shards, self.per_shard = places, write, count, shards, per_shard
        self.spill, self.name = spill, name
        self.record, self.rows = record, rows or (lambda e: [e])

    def expand(self, elements):
        places, write, fixed, per_shard, rows = self.places, self.write, self.shards, self.per_shard, self.rows
        partitions = fixed or PARTITIONS
        plain = self.record is not None
        rebuild = self.record._make if self.record else (lambda r: r)

        def shards(count: int) -> int:
            return fixed or shard_count(count, per_shard)

        def by_partition(element) -> list:
            out: dict = {}
            these = rows(element)
            for r, place in zip([tuple(r) for r in these] if plain else these, places(these)):
                out.setdefault(place % partitions, []).append(r)
            return list(out.items())

        count = beam.pvalue.AsSingleton(self.count)
        located = (
            elements
            | "Spill" >> beam.ParDo(SpillFn(self.spill, self.name, split=by_partition,  # (no element per partition)
                                            order=None if fixed else READ_ORDER.__getitem__))
            | "ShardOf" >> beam.Map(lambda kv, n: (kv[0] % shards(n), kv[1]), count)
        )
        empty = self.count | "AllShards" >> beam.FlatMap(lambda n: [(i, None) for i in range(shards(n))])
        return (
            (located, empty)
            | "FlattenShards" >> beam.Flatten()
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShard" >> beam.Map(lambda kv, n: _written(write(kv[0], shards(n), [rebuild(r) for r in load(
                [p for p in kv[1] if p])])), count)
        )


def _written(result):
    """A shard was written: counted (the stall watch sees a long write progress)."""
    tally("writing", "shards")
    return result


def error_places(errors) -> list[int]:
    """The place of each error row: place_hash(f"{source}\\x1f{position}")."""
    return [place_hash(f"{e.source}\x1f{e.position}") for e in errors]


def system_documents(batch) -> list:
    """A scored batch -> ((profile, system), [(doc_id, values, digest), ...]) per
    system in it: the per-document writer's elements."""
    profile, rows = batch
    out: dict = {}
    for row in rows:
        found = out.get(row[0])
        if found is None:
            out[row[0]] = found = []
        found.append(row[1:])
    return [((profile, system), documents) for system, documents in out.items()]


class WriteResults(beam.PTransform):
    """Scored batches in; per_document/ written to `staging`: the per-document rows
    grouped per (profile, system) through spill files (pipeline.beam.spill), each
    (profile, system)'s files written where its rows are loaded
    (`per_document_writer`).  Out: (profile, (system, path)) of each per-document
    Parquet file written."""

    def __init__(self, staging: str, output, profiles):
        super().__init__()
        self.staging, self.output, self.profiles = staging, output, profiles

    def expand(self, batches):
        write = per_document_writer(self.staging, self.output.per_document_formats, self.profiles,
                                    self.output.per_document_shards)
        return (
            batches
            | "BySystem" >> beam.FlatMap(system_documents)
            | "PerDocument" >> SpilledGroupByKey(
                self.staging, "per_document",
                then=lambda element: [(element[0][0], (element[0][1], name + ".parquet")) for name in write(element)])
            | "DocumentFiles" >> beam.FlatMap(lambda names: names)
        )


class WriteErrors(beam.PTransform):
    """Error rows in; errors/ written to `staging`, in shards that follow `number`
    (one element: how many rows come; CountRows counts them with the run's counts)."""

    def __init__(self, staging: str, number):
        super().__init__()
        self.staging, self.number = staging, number

    def expand(self, errors):
        return errors | "Shards" >> ShardedWrite(error_places, errors_writer(self.staging), self.number, self.staging,
                                                 "errors", record=ErrorRecord)
