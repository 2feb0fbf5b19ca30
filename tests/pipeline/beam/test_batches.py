"""Rows travel in batches keyed by a bucket of documents (pipeline.beam.read): how
many buckets there are changes only how the work is cut, never a byte of a table."""

from __future__ import annotations

import pytest

import pipeline.beam.read as read
from pipeline.beam.read import BUCKET_BYTES, bucket_count, bucket_of
from tests.pipeline.runs import TWO_PROCESSES, run_pipeline, table_bytes, write_jsonl


def test_bucket_count_follows_the_input_size(tmp_path):
    plain = tmp_path / "a.jsonl"
    plain.write_bytes(b"x" * (BUCKET_BYTES + 1))  # just over one bucket's bytes: 2
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(b"x" * (BUCKET_BYTES // 4 + 1))  # counted 4 times: just over one
    assert bucket_count([str(plain)]) == 2
    assert bucket_count([str(packed)]) == 2
    assert bucket_count([str(plain), str(packed)]) == 3  # ceil((2 B + 5) / B), B the bucket's bytes
    assert bucket_count([]) == 1 and bucket_count([str(tmp_path / "missing.jsonl")]) == 1


def test_doc_ids_that_print_alike_share_a_bucket():
    # NFC and NFD spellings of one name, and one with a zero-width space: split_lookalikes
    # must see them together to name the clash, so they land in one bucket.
    spellings = ["caf\u00e9", "cafe\u0301", "caf\u00e9\u200b"]
    for buckets in (7, 1000):
        assert len({bucket_of(s, buckets) for s in spellings}) == 1
    assert len({bucket_of(f"doc-{i}", 1000) for i in range(200)}) > 100  # spread, not one bucket


def _rows():
    rows = []
    for i in range(60):
        refs = [f"the cat {i} sat on the mat", f"a dog {i % 7} ran"]
        for system in ("alpha", "beta", "gamma"):
            if system == "gamma" and i % 9 == 0:
                continue  # gamma lacks some documents
            rows.append({"system": system, "doc_id": f"d{i:03d}", "candidate": f"the {system} cat {i % 5} sat", "references": refs})
    rows.append({"system": "alpha", "doc_id": "d001", "candidate": "again", "references": ["x"]})  # duplicate_key
    rows.append({"system": "beta", "doc_id": "d\u200b002", "candidate": "look-alike", "references": ["x"]})
    return rows


@pytest.mark.parametrize("beam_args", [None, TWO_PROCESSES], ids=["in process", "2 worker processes"])
def test_tables_are_the_same_whatever_the_number_of_buckets(tmp_path, monkeypatch, beam_args):
    data = write_jsonl(tmp_path / "in.jsonl", _rows())
    one = run_pipeline(tmp_path / "one", [data], flags="-n 2 -c 95 -r 100 -m -d")
    assert one["counts"]["balanced"]
    extra = {} if beam_args is None else {"beam_args": beam_args}
    monkeypatch.setattr(read, "BUCKET_BYTES", 256)  # this input in dozens of buckets
    monkeypatch.setattr(read, "BATCH_ROWS", 7)  # and read in small batches (in this process)
    assert bucket_count([str(data)]) > 20
    many = run_pipeline(tmp_path / "many", [data], flags="-n 2 -c 95 -r 100 -m -d", **extra)
    assert many["counts"] == one["counts"]
    assert table_bytes(tmp_path / "many") == table_bytes(tmp_path / "one")


def test_split_lookalikes_one_spelling_and_several():
    """A key of one doc_id (every row's) is one document and no error; spellings that
    print alike make the clashing system's rows errors, the other system's kept."""
    from pipeline.documents import split_lookalikes
    from pipeline.records import Candidate, ReferenceRow

    def cand(system, doc_id, position):
        return Candidate(system, doc_id, "a text", None, "f.jsonl", position)

    rows = [cand("a", "caf\u00e9", 1), cand("b", "caf\u00e9", 2)]
    refs = [ReferenceRow("caf\u00e9", ["ref"], None, "r.jsonl", 1)]
    assert split_lookalikes(rows, refs) == ([], [("caf\u00e9", rows, refs)])
    mixed = rows + [cand("a", "cafe\u0301", 3)]
    errors, documents = split_lookalikes(mixed, refs)
    assert sorted((e.system, e.reason) for e in errors) == [("a", "duplicate_key"), ("a", "duplicate_key")]
    assert documents == [("caf\u00e9", [rows[1]], refs)]
    assert split_lookalikes([], refs) == ([], [("caf\u00e9", [], refs)])


def test_text_chars_counts_the_characters_of_every_text_in_a_field_and_16_an_item():
    from pipeline.beam.read import text_chars
    from pipeline.io.rows import VALUE_OVERHEAD

    assert VALUE_OVERHEAD == 16
    assert text_chars("caf\u00e9") == 4
    # lists of texts, or of lists of them: 6 characters; 3 items, 2 in the inner list, 1 in the tuple
    assert text_chars(["ab", ["c", "de"], ("f",)]) == 6 + 16 * (3 + 2 + 1)
    assert text_chars(None) == 0 and text_chars([]) == 0 and text_chars([1, "ab", None]) == 2 + 16 * 3
    assert text_chars([""] * 1000) == 16_000  # (empty references weigh in a batch too)
