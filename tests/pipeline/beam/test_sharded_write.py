"""ShardedWrite: the layout of sharded tables follows from the element count alone."""

import json
import zlib

import apache_beam as beam

from pipeline.beam.write import ShardedWrite


def written(folder, elements, shards=0, per_shard=3):
    folder.mkdir()

    def write(shard, total, items):  # runs in a worker: leave the result in a file
        (folder / f"{shard}.json").write_text(json.dumps([total, sorted(items)]))
        return shard

    with beam.Pipeline("FnApiRunner") as p:
        pcoll = p | beam.Create(elements)
        count = pcoll | beam.combiners.Count.Globally()
        pcoll | ShardedWrite(lambda rows: [zlib.crc32(str(e).encode()) for e in rows], write, count, str(folder) + "-spill", "t", shards, per_shard)
    return {int(f.stem): tuple(json.loads(f.read_text())) for f in folder.iterdir()}


def test_one_shard_per_so_many_elements_every_element_once_and_empty_shards_written(tmp_path):
    out = written(tmp_path / "a", list(range(10)))
    assert sorted(out) == [0, 1, 2, 3] and {total for total, _ in out.values()} == {4}  # ceil(10 / 3)
    assert sorted(e for _, items in out.values() for e in items) == list(range(10))
    for shard, (_, items) in out.items():
        assert all(zlib.crc32(str(e).encode()) % 4 == shard for e in items)  # (a CRC-32 places rows)
    assert written(tmp_path / "b", [], per_shard=3) == {0: (1, [])}  # nothing: one empty shard
    assert sorted(written(tmp_path / "c", list(range(10)), shards=2)) == [0, 1]  # a fixed count wins


def test_a_shards_partitions_lie_together_in_a_spill_file_for_every_shard_count():
    from pipeline.beam.write import PARTITIONS, READ_ORDER

    assert sorted(READ_ORDER) == list(range(PARTITIONS))  # a permutation
    by_place = sorted(range(PARTITIONS), key=READ_ORDER.__getitem__)
    shards = 1
    while shards <= PARTITIONS:
        seen = [p % shards for p in by_place]
        runs = [s for i, s in enumerate(seen) if i == 0 or seen[i - 1] != s]
        assert sorted(runs) == list(range(shards))  # each shard one run of places
        shards *= 2


def test_an_error_rows_place_is_the_crc_of_its_source_and_position():
    from pipeline.beam.write import error_places
    from pipeline.records import ErrorRecord

    errors = [ErrorRecord("s", "d", f"f{i}.jsonl", i, "r", "m") for i in range(5)]
    assert error_places(errors) == [zlib.crc32(f"f{i}.jsonl\x1f{i}".encode()) for i in range(5)]


def test_the_per_document_writers_elements_are_each_systems_rows_of_a_batch():
    from pipeline.beam.write import system_documents

    batch = ("p", [("b", "d1", b"v1", b"g1"), ("a", "d1", b"v2", b"g2"), ("b", "d2", b"v3", b"g3")])
    assert sorted(system_documents(batch)) == [
        (("p", "a"), [("d1", b"v2", b"g2")]),
        (("p", "b"), [("d1", b"v1", b"g1"), ("d2", b"v3", b"g3")]),
    ]
