"""The per-document table built from columns equals, byte for byte, the same table
built one dict per (document, metric) row."""

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
        docs.append(ScoredDocument(profile, f"sys{rng.randint(0, 5)}", f"d{i}\u00e9", np.array(stats).tobytes()))
    return sorted(docs, key=lambda d: ("pq".index(d.profile), d.system, d.doc_id))


def rows_of(docs):
    """The table one dict per row, from each document's MetricStats."""
    return [
        {
            "profile": d.profile, "system": d.system, "doc_id": d.doc_id, "metric": tag,
            "recall": s.recall, "precision": s.precision, "f_measure": s.f_measure, "hits": float(s.hits),
            "reference_total": float(s.reference_total), "candidate_total": float(s.candidate_total),
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


def test_the_writer_gives_the_bytes_of_rows_in_every_format(tmp_path):
    from pipeline.config import Profile
    from pipeline.io.tables import csv_text, jsonl_bytes, names
    from rouge_core import RougeSettings

    profiles = [Profile("p", (RougeSettings.from_flags("-n 2"),)), Profile("q", (RougeSettings.from_flags("-w 1.2 -n 0 -x"),))]
    assert [p.tags for p in profiles] == [TAGS["p"], TAGS["q"]]
    docs = scored(50, seed=3)
    name = per_document_writer(str(tmp_path), ("csv", "jsonl"), profiles)(0, 1, list(reversed(docs)))
    rows = rows_of(docs)
    assert (tmp_path / "per_document" / "part-00000-of-00001.parquet").read_bytes() == parquet_bytes(rows, DOCUMENT_COLUMNS)
    assert open(name + ".csv", encoding="utf-8").read() == csv_text(rows, names(DOCUMENT_COLUMNS))
    assert open(name + ".jsonl", "rb").read() == jsonl_bytes(rows)


def test_the_writer_sorts_as_python_does_from_plain_tuples(tmp_path):
    # Arrow sorts the shard; doc_ids across the planes (BMP high, astral, combining) and
    # systems that are prefixes of each other order as Python's sort orders them.
    from pipeline.config import Profile
    from rouge_core import RougeSettings

    profiles = [Profile("q", (RougeSettings.from_flags("-w 1.2 -n 0 -x"),)), Profile("p", (RougeSettings.from_flags("-n 2"),))]
    rng = random.Random(5)
    ids = ["a", "ab", "a b", "Z", "\uffff", "\U0001f600", "\ufb01", "e\u0301", "\u00e9", "10", "9", ""]
    docs = []
    for system in ("s", "s1", "S", "\U0001f600"):
        for doc_id in ids:
            profile = rng.choice("pq")
            docs.append((profile, system, doc_id, np.arange(6 * len(TAGS[profile]), dtype=np.float64).tobytes()))
    rng.shuffle(docs)
    per_document_writer(str(tmp_path), ("jsonl",), profiles)(0, 1, docs)
    import json

    written = [json.loads(line) for line in (tmp_path / "per_document" / "part-00000-of-00001.jsonl").open()]
    want = sorted(docs, key=lambda d: ("qp".index(d[0]), d[1], d[2]))
    assert [(r["profile"], r["system"], r["doc_id"]) for r in written] == [
        (d[0], d[1], d[2]) for d in want for _ in TAGS[d[0]]
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
