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
