"""Shuffles through files (pipeline.beam.spill): every row comes back once, under
its key, whatever the flushes; only places cross the runner's shuffle; a run's
spill files are gone before its folder is published."""

import os
import pickle

import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline.beam.spill import SPILL, SpilledGroupByKey, SpillFn, load
from tests.pipeline.runs import run_pipeline, write_jsonl


def test_spilled_group_by_key_gives_every_row_once_under_its_key(tmp_path):
    elements = [(k % 7, [(k, j, "x" * j) for j in range(k % 4)]) for k in range(60)]
    expected: dict = {}
    for key, rows in elements:  # the grouping done by hand
        expected.setdefault(key, []).extend(rows)
    with TestPipeline() as p:
        grouped = p | beam.Create(elements) | SpilledGroupByKey(str(tmp_path), "t", limit=5)
        assert_that(
            grouped | beam.MapTuple(lambda key, rows: (key, sorted(rows))),
            equal_to([(key, sorted(rows)) for key, rows in expected.items()]),
        )
    written = os.listdir(tmp_path / SPILL / "t")
    assert len(written) > 5  # a flush every 5 rows: many files, each a few keys' lists


def test_only_places_leave_the_spill_and_load_reads_them_back(tmp_path):
    fn = SpillFn(str(tmp_path), "t", limit=4)
    fn.start_bundle()
    places = list(fn.process(("a", [1, 2]))) + list(fn.process(("b", [3]))) + list(fn.process(("a", [4, 5])))
    places += [w.value for w in fn.finish_bundle()]
    # the first flush (5 rows held) wrote a's 4 rows and b's 1; the bundle's end wrote nothing more
    assert sorted(key for key, _ in places) == ["a", "b"]
    for key, (path, offset, length) in places:
        assert isinstance(path, str) and isinstance(offset, int) and 0 < length < 100
        with open(path, "rb") as fh:  # what the place names is the key's rows, pickled
            fh.seek(offset)
            assert pickle.loads(fh.read(length)) == {"a": [1, 2, 4, 5], "b": [3]}[key]
    assert sorted(load([place for key, place in places if key == "a"])) == [1, 2, 4, 5]
    fn.start_bundle()
    assert list(fn.process(("c", [6]))) == []  # held, not written, until the bundle ends
    (end,) = fn.finish_bundle()
    assert end.value[0] == "c" and load([end.value[1]]) == [6]


def test_a_run_publishes_no_spill_files(tmp_path):
    rows = [{"system": s, "doc_id": f"d{i}", "candidate": f"the cat {s} sat {i}", "references": [f"a cat sat {i}"]}
            for s in ("A", "B") for i in range(30)]
    record = run_pipeline(tmp_path / "out", [write_jsonl(tmp_path / "c.jsonl", rows)])
    assert record["counts"]["scored"] == 60
    assert not [p for p in (tmp_path / "out").rglob("*") if SPILL in p.parts]
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl", "out"]  # no staging folder left either


def test_texts_are_written_by_bytes_held_whatever_their_number(tmp_path, monkeypatch):
    """Rows whose size the input decides (texts) are pickled as they come and written
    once SPILL_BYTES are held, not after a number of rows: 5 rows of 1 MB are written
    after every second row with a 1.5 MB limit; each place reads back its rows."""
    import pipeline.beam.spill as spill  # noqa: PLC0415

    monkeypatch.setattr(spill, "SPILL_BYTES", 1_500_000)
    fn = SpillFn(str(tmp_path), "t", pickled=True)
    fn.start_bundle()
    places = []
    for k in range(5):
        places += fn.process(("a" if k % 2 else "b", [(k, str(k) * 1_000_000)]))
    places += [w.value for w in fn.finish_bundle()]
    assert len(os.listdir(tmp_path / SPILL / "t")) == 3  # after rows 1, 3 and at the end
    rows = sorted(row for _, place in places for row in load([place]))
    assert [k for k, _ in rows] == [0, 1, 2, 3, 4] and all(text == str(k) * 1_000_000 for k, text in rows)
    by_key = {key: sorted(k for k, _ in load([p for q, p in places if q == key])) for key, _ in places}
    assert by_key == {"a": [1, 3], "b": [0, 2, 4]}


def test_the_reader_sends_rows_of_long_texts_in_smaller_batches(tmp_path, monkeypatch):
    import json  # noqa: PLC0415

    import pipeline.beam.read as read  # noqa: PLC0415
    from pipeline.config import InputConfig  # noqa: PLC0415

    monkeypatch.setattr(read, "BATCH_CHARS", 25_000)
    path = tmp_path / "c.jsonl"
    path.write_text("".join(
        json.dumps({"system": "A", "doc_id": f"d{i}", "candidate": "x" * 4_000, "references": ["y" * 6_000]}) + "\n"
        for i in range(10)
    ))
    fn = read.ReadFileFn(InputConfig(), "candidates", True, str(tmp_path / "staging"), 3600)
    fn.setup()
    sizes = [len(rows) for element in fn.process(str(path)) if isinstance(element, tuple) for rows in [element[1]]]
    assert sizes == [3, 3, 3, 1]  # 10,000 characters a row: a batch once 25,000 are held


def test_a_failed_run_leaves_no_spill_files(tmp_path, monkeypatch):
    """When a run's pipeline fails after the reading stage has spilled the texts, the
    spill files go with the staging folder: nothing of the run is left beside the
    inputs.  (On a store the staging prefix is discarded the same way:
    tests/pipeline/test_object_stores.py.)"""
    import pytest  # noqa: PLC0415

    from pipeline.beam.documents import ScoreDocumentFn  # noqa: PLC0415

    out = tmp_path / "out"
    seen = []

    def failing(self, groups):
        seen.append(sorted(p.name for p in tmp_path.glob(f"out.staging-*/{SPILL}/*")))
        raise RuntimeError("scoring failed on purpose")

    monkeypatch.setattr(ScoreDocumentFn, "process", failing)
    rows = [{"system": "A", "doc_id": f"d{i}", "candidate": "a cat", "references": ["the cat"]} for i in range(5)]
    inputs = write_jsonl(tmp_path / "c.jsonl", rows)
    with pytest.raises(Exception, match="scoring failed on purpose"):
        run_pipeline(out, [inputs])
    assert seen and seen[0] == ["candidates"]  # the texts were spilled before scoring failed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_places_that_touch_are_read_as_one_run(tmp_path, monkeypatch):
    from pipeline.beam import spill

    fn = SpillFn(str(tmp_path), "t", limit=1000, order=lambda key: -key)  # written in the order 9, 8, ..., 0
    fn.start_bundle()
    for key in range(10):
        list(fn.process((key, [(key, "x" * key)])))
    places = dict(w.value for w in fn.finish_bundle())
    assert [places[k][1] for k in range(9, -1, -1)] == sorted(p[1] for p in places.values())  # `order` decides
    seeks = []
    real_open = spill.files.open_read

    def counting(path):
        fh = real_open(path)
        seek = fh.seek
        fh.seek = lambda offset, *whence: seeks.append(offset) or seek(offset, *whence)
        return fh

    monkeypatch.setattr(spill.files, "open_read", counting)
    touching = [places[k] for k in (5, 4, 3)]  # next to each other in the file
    assert sorted(load(touching)) == [(3, "xxx"), (4, "xxxx"), (5, "xxxxx")]
    assert seeks == [places[5][1]]
    seeks.clear()
    apart = [places[k] for k in (7, 2)]
    assert sorted(load(apart)) == [(2, "xx"), (7, "x" * 7)]
    assert seeks == sorted([places[7][1], places[2][1]])


def test_runs_join_places_that_touch_in_offset_order():
    from pipeline.beam.spill import _runs

    assert _runs([]) == []
    assert _runs([("f", 0, 5), ("f", 5, 3), ("f", 8, 0), ("f", 10, 2), ("f", 12, 1)]) == [(0, 8), (10, 3)]
    assert _runs([("f", 0, 0), ("f", 0, 4)]) == [(0, 4)]


def test_load_gives_what_each_place_holds_read_alone(tmp_path):
    import io
    import random

    rng = random.Random(1)
    for trial in range(60):
        fn = SpillFn(str(tmp_path / str(trial)), "t", limit=rng.randint(1, 50), pickled=rng.random() < 0.5,
                     order=(lambda k: -k) if rng.random() < 0.5 else None)
        fn.start_bundle()
        places, expected = [], {}
        for e in range(rng.randint(1, 30)):
            key = rng.randint(0, 6)
            rows = [(key, e, j, "y" * rng.randint(0, 3000)) for j in range(rng.randint(0, 20))]
            expected.setdefault(key, []).extend(rows)
            places += list(fn.process((key, rows)))
        places += [w.value for w in fn.finish_bundle()]
        for key, rows in expected.items():
            assert sorted(load([p for k, p in places if k == key])) == sorted(rows)
        some = [p for _, p in places if rng.random() < 0.5]
        alone = []
        for path, offset, length in some:  # each place by itself, pickle by pickle
            with open(path, "rb") as fh:
                fh.seek(offset)
                data = io.BytesIO(fh.read(length))
            while data.tell() < length:
                alone.extend(pickle.load(data))
        assert sorted(load(some)) == sorted(alone)


def test_a_spilled_group_handed_to_then_is_every_row_of_its_key(tmp_path):
    """With `then`, each key's rows go straight to the function (never an element of
    their own): the same rows as the grouping without it, counted by hand."""
    elements = [(k % 3, [(k, i) for i in range(k % 4)]) for k in range(30)]
    with TestPipeline() as p:
        out = (
            p | beam.Create(elements)
            | SpilledGroupByKey(str(tmp_path), "t", limit=5, then=lambda kv: (kv[0], sorted(kv[1])))
        )
        want = {key: sorted(r for k, rows in elements if k == key for r in rows) for key in range(3)}
        assert_that(out, equal_to(sorted(want.items())))
