"""The per-document table built from columns equals, byte for byte, the same table
built one dict per (document, metric) row; each (profile, system) has files of its own."""

import random

import numpy as np

from pipeline.beam.documents import ScoredDocument
from pipeline.io.tables import DOCUMENT_COLUMNS, document_columns, parquet_bytes, parquet_columns_bytes, per_document_writer

TAGS = {"p": ["ROUGE-1", "ROUGE-2", "ROUGE-L"], "q": ["ROUGE-W-1.2"]}
ORDER = {"p": 0, "q": 1}  # the profiles in the config's order


def scored(n=200, seed=0):
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        profile = rng.choice("pq")
        stats = [
            [rng.randint(1, 50), rng.randint(0, 50), rng.random() * 9, rng.random(), rng.random(), rng.random()]
            for _ in TAGS[profile]
        ]
        digest = rng.getrandbits(128).to_bytes(16, "little")
        docs.append(ScoredDocument(profile, f"sys{rng.randint(0, 5)}", f"d{i}\u00e9", np.array(stats).tobytes(), digest))
    return sorted(docs, key=lambda d: ("pq".index(d.profile), d.system, d.doc_id))


def rows_of(docs):
    """The table one dict per row, from each document's MetricStats."""
    return [
        {
            "profile": d.profile, "system": d.system, "doc_id": d.doc_id, "metric": tag,
            "recall": s.recall, "precision": s.precision, "f_measure": s.f_measure, "hits": float(s.hits),
            "reference_total": float(s.reference_total), "candidate_total": float(s.candidate_total),
            "candidate_digest": int.from_bytes(d.digest[:8], "little", signed=True),
            "references_digest": int.from_bytes(d.digest[8:], "little", signed=True),
        }
        for d in docs
        for tag, s in d.scores(TAGS[d.profile]).items()
    ]


def test_columns_give_the_bytes_of_rows():
    docs = scored()
    shuffled = random.Random(1).sample(docs, len(docs))  # document_columns sorts them
    assert parquet_columns_bytes(document_columns(shuffled, TAGS, ORDER), DOCUMENT_COLUMNS) == parquet_bytes(rows_of(docs), DOCUMENT_COLUMNS)


def test_an_empty_shard():
    assert parquet_columns_bytes(document_columns([], TAGS, ORDER), DOCUMENT_COLUMNS) == parquet_bytes([], DOCUMENT_COLUMNS)


def groups(docs):
    """ScoredDocuments as the writer's elements: ((profile, system), [(doc_id, values, digest)])."""
    out = {}
    for d in docs:
        out.setdefault((d.profile, d.system), []).append((d.doc_id, d.values, d.digest))
    return out


def two_profiles():
    from pipeline.config import Profile
    from rouge_core import RougeSettings

    profiles = [Profile("p", (RougeSettings.from_flags("-n 2"),)), Profile("q", (RougeSettings.from_flags("-w 1.2 -n 0 -x"),))]
    assert [p.tags for p in profiles] == [TAGS["p"], TAGS["q"]]
    return profiles


def test_the_writer_gives_each_system_the_bytes_of_its_rows_in_every_format(tmp_path):
    from pipeline.io.tables import csv_text, jsonl_bytes, names

    docs = scored(50, seed=3)
    write = per_document_writer(str(tmp_path), ("csv", "jsonl"), two_profiles())
    written = []
    for key, documents in groups(docs).items():
        (name,) = write((key, list(reversed(documents))))
        written.append(name)
        rows = rows_of([d for d in docs if (d.profile, d.system) == key])
        assert open(name + ".parquet", "rb").read() == parquet_bytes(rows, DOCUMENT_COLUMNS)
        assert open(name + ".csv", encoding="utf-8").read() == csv_text(rows, names(DOCUMENT_COLUMNS))
        assert open(name + ".jsonl", "rb").read() == jsonl_bytes(rows)
    assert len(set(written)) == len(written) == len({(d.profile, d.system) for d in docs})
    assert sorted(p.name for p in (tmp_path / "per_document").iterdir()) == sorted(
        f"{n.rsplit('/', 1)[1]}.{ext}" for n in written for ext in ("parquet", "csv", "jsonl")
    )


def test_a_systems_documents_are_cut_into_files_of_consecutive_documents(tmp_path):
    docs = [d for d in scored(300, seed=4) if d.profile == "p"]
    key = ("p", docs[0].system)
    mine = [d for d in docs if (d.profile, d.system) == key]
    for parts in (1, 2, 3, len(mine) + 2):  # more files than documents: empty ones too (the layout is fixed)
        folder = tmp_path / str(parts)
        names = per_document_writer(str(folder), (), two_profiles(), parts)((key, groups(mine)[key]))
        assert [n.rsplit("-", 3)[1:] for n in names] == [[f"{j:05d}", "of", f"{parts:05d}"] for j in range(parts)]
        cut = [mine[j * len(mine) // parts : (j + 1) * len(mine) // parts] for j in range(parts)]
        for name, expected in zip(names, cut):
            assert open(name + ".parquet", "rb").read() == parquet_bytes(rows_of(expected), DOCUMENT_COLUMNS)


def test_a_systems_file_is_written_and_read_back_in_row_groups_of_whole_documents(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    import pipeline.io.tables as tables
    from pipeline.io.tables import document_batches

    monkeypatch.setattr(tables, "DOCUMENTS_PER_ROW_GROUP", 7)
    docs = [d for d in scored(300, seed=6) if d.profile == "p"]
    key = ("p", docs[0].system)
    mine = [d for d in docs if (d.profile, d.system) == key]
    (name,) = per_document_writer(str(tmp_path), (), two_profiles())((key, groups(mine)[key]))
    rows = rows_of(mine)
    assert open(name + ".parquet", "rb").read() == parquet_bytes(rows, DOCUMENT_COLUMNS, row_group_size=7 * 3)
    assert pq.ParquetFile(name + ".parquet").metadata.num_row_groups == -(-len(mine) // 7)
    for size in (1, 5, 7, 100):  # read back in parts of whole documents, whatever the row groups
        parts = list(document_batches(name + ".parquet", 3, ["doc_id", "metric"], size))
        assert all(p.num_rows == 3 * size for p in parts[:-1]) and 0 < parts[-1].num_rows <= 3 * size
        assert [r for p in parts for r in p.to_pylist()] == [{"doc_id": r["doc_id"], "metric": r["metric"]} for r in rows]


def test_the_writer_sorts_as_python_does_from_plain_tuples(tmp_path):
    # Arrow sorts a system's documents; doc_ids across the planes (BMP high, astral,
    # combining) and numbers order as Python's sort orders them.
    import json

    ids = ["a", "ab", "a b", "Z", "\uffff", "\U0001f600", "\ufb01", "e\u0301", "\u00e9", "10", "9", ""]
    write = per_document_writer(str(tmp_path), ("jsonl",), two_profiles())
    for system in ("s", "s1", "S", "\U0001f600"):
        docs = [(doc_id, np.arange(6 * 3, dtype=np.float64).tobytes(), bytes(16)) for doc_id in ids]
        random.Random(system).shuffle(docs)
        (name,) = write((("p", system), docs))
        written = [json.loads(line) for line in open(name + ".jsonl", encoding="utf-8")]
        assert [(r["system"], r["doc_id"], r["metric"]) for r in written] == [
            (system, doc_id, tag) for doc_id in sorted(ids) for tag in TAGS["p"]
        ]


def test_a_shard_built_in_many_chunks_gives_the_bytes_of_rows(monkeypatch):
    # The columns are made DOCUMENT_CHUNK documents at a time; chunk edges fall
    # inside runs of one system and between the profiles (of 3 and 1 metrics).
    import pipeline.io.tables as tables

    docs = scored(300, seed=9)
    shuffled = random.Random(2).sample(docs, len(docs))
    for chunk in (1, 7, 64, 299, 300):
        monkeypatch.setattr(tables, "DOCUMENT_CHUNK", chunk)
        columns = document_columns(shuffled, TAGS, ORDER)
        assert columns["doc_id"].num_chunks == -(-len(docs) // chunk)
        assert parquet_columns_bytes(columns, DOCUMENT_COLUMNS) == parquet_bytes(rows_of(docs), DOCUMENT_COLUMNS)


def _table_file(path, doc_ids, system="s", **write):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"system": [system] * len(doc_ids), "doc_id": doc_ids, "recall": [0.5] * len(doc_ids)})
    pq.write_table(table, path, row_group_size=4, **write)
    return str(path)


def test_the_doc_id_key_is_equal_exactly_for_files_whose_doc_id_bytes_are(tmp_path):
    # `column_key` tells two files' doc_ids equal from the bytes of their column chunks
    # (what the decoded values are a function of), whatever the other columns hold.
    from pipeline.io.tables import column_key

    ids = [f"d{i:03d}" for i in range(10)]
    key = column_key(_table_file(tmp_path / "a.parquet", ids, "alpha"), "doc_id")
    assert key[0] == 10 and len(key[1]) == 3  # (its rows; a key per row group of 4 rows)
    assert column_key(_table_file(tmp_path / "b.parquet", ids, "a much longer system name"), "doc_id") == key
    one_changed = ids[:7] + ["d999"] + ids[8:]
    assert column_key(_table_file(tmp_path / "c.parquet", one_changed, "alpha"), "doc_id") != key
    other_codec = column_key(_table_file(tmp_path / "d.parquet", ids, "alpha", compression="zstd"), "doc_id")
    assert other_codec[1] is not None and other_codec != key  # (equal values, other bytes: then they are decoded)
    assert column_key(str(tmp_path / "a.parquet"), "no_such_column") == (10, None)


def test_a_doc_id_chunk_over_the_bound_gives_no_key(tmp_path, monkeypatch):
    # (a footer can claim any size: a chunk over CHUNK_KEY_MOST_BYTES is not hashed; its ids are decoded, bounded)
    import pyarrow.parquet as pq

    import pipeline.io.tables as tables

    path = _table_file(tmp_path / "a.parquet", [f"d{i}" for i in range(10)])
    largest = max(pq.ParquetFile(path).metadata.row_group(g).column(1).total_compressed_size for g in range(3))
    monkeypatch.setattr(tables, "CHUNK_KEY_MOST_BYTES", largest)
    assert tables.column_key(path, "doc_id")[1] is not None
    monkeypatch.setattr(tables, "CHUNK_KEY_MOST_BYTES", largest - 1)
    assert tables.column_key(path, "doc_id") == (10, None)
