"""Each table of a run is written once (issue 32): the per-system table is written
by the graph's writing stage with what it needs (each system's documents had, the
rejected-rows warning), never rewritten by the driver after the graph."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow.parquet as pq

from pipeline.io import files
from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import run_pipeline, write_jsonl


def test_every_file_of_a_run_is_written_once_with_documents_had_and_the_warning(tmp_path, monkeypatch):
    cases = read_jsonl(GOLDEN / "cases.jsonl")
    # Rows of one doc_id whose references differ are rejected: 11 and 12 had 26 documents each, scored 25.
    rows = cases + [{"system": "11", "doc_id": "extra", "candidate": "a b", "references": ["a b"]},
                    {"system": "12", "doc_id": "extra", "candidate": "a", "references": ["a c"]}]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    written = Counter()
    write_bytes = files.write_bytes

    def counted(path, data):
        written["/".join(path.rsplit("/", 2)[-2:])] += 1  # (folder/name: per_document/part-..., errors/part-...)
        return write_bytes(path, data)

    monkeypatch.setattr(files, "write_bytes", counted)  # (the in-process runner writes in this process)
    record = run_pipeline(tmp_path / "out", [data], flags="-n 1 -r 10")
    assert {name: n for name, n in written.items() if n > 1} == {}
    for name in ("system_scores.parquet", "system_scores.csv", "system_scores.md"):
        assert sum(n for path, n in written.items() if path.endswith("/" + name)) == 1, name
    table = pq.read_table(tmp_path / "out" / "system_scores.parquet").to_pylist()
    had = {r["system"]: r["documents_had"] for r in table}
    assert had == {"11": 26, "12": 26, "13": 25, "14": 25, "21": 25, "22": 25, "23": 25, "24": 25}
    assert all(r["documents"] == 25 for r in table)
    markdown = (tmp_path / "out" / "system_scores.md").read_text()
    warning = record["rejected"]["warning"]
    assert warning and markdown.startswith(f"**{warning}**\n\n")
    assert "11 was scored on 25 of its 26 documents" in warning
    assert json.loads((tmp_path / "out" / "run.json").read_text())["rejected"]["warning"] == warning
