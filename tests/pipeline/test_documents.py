"""The document rules (pipeline.documents): the common joined-form document takes
a short path (`plain_document`), which must give exactly what the full rules give."""

from __future__ import annotations

import random

import pipeline.documents as documents
from pipeline.documents import DocumentGroup, resolve_document
from pipeline.records import Candidate


def _rows(rng: random.Random) -> list:
    """A document's joined-form candidate rows, often plain, sometimes with a
    duplicate system, a second doc_id spelling or other references."""
    refs = [["the cat sat ."], ["a dog ran .", "the cat sat ."]]
    out = []
    for k in range(rng.randint(1, 5)):
        system = rng.choice("abcdef") if rng.random() < 0.3 else f"sys{k}"
        doc_id = "d1" if rng.random() < 0.9 else "d1\u200b"
        references = list(refs[0] if rng.random() < 0.9 else refs[1])  # equal lists, not one object
        out.append(Candidate(system, doc_id, f"text {k}", references, f"file{k % 2}.jsonl", rng.randint(1, 9)))
    return out


def test_a_plain_document_is_grouped_by_system_with_its_references():
    rows = [Candidate(s, "d1", f"t{s}", ["r ."], "f.jsonl", i) for i, s in enumerate(["b", "a", "c"], 1)]
    (group,) = resolve_document("d1", rows, [])
    assert group == DocumentGroup("d1", [(rows[1], ["r ."]), (rows[0], ["r ."]), (rows[2], ["r ."])])


def test_the_short_path_gives_what_the_full_rules_give(monkeypatch):
    rng = random.Random(7)
    plain = 0
    for _ in range(3000):
        rows = _rows(rng)
        if len({c.doc_id for c in rows}) > 1:  # (split_lookalikes hands resolve_document one doc_id)
            continue
        fast = list(resolve_document(rows[0].doc_id, list(rows), []))
        with monkeypatch.context() as m:
            m.setattr(documents, "plain_document", lambda candidates: None)
            full = list(resolve_document(rows[0].doc_id, list(rows), []))
        assert fast == full
        plain += documents.plain_document(rows) is not None
    assert 300 < plain < 2900  # both paths were taken


def test_a_document_past_the_reference_rows_bound_is_refused_and_one_at_it_is_scored(tmp_path):
    """A document's reference rows are bounded as a row's list of references is:
    input.max_text_bytes / 16 (here 1,600 / 16 = 100)."""
    from tests.pipeline.runs import read_errors, run_pipeline, write_jsonl

    candidates = write_jsonl(tmp_path / "c.jsonl", [{"system": s, "doc_id": d, "candidate": "a b c"}
                                                    for s in ("s1", "s2") for d in ("at", "past")])
    references = write_jsonl(tmp_path / "r.jsonl", [{"doc_id": "at", "reference": f"a {i}"} for i in range(100)]
                             + [{"doc_id": "past", "reference": f"b {i}"} for i in range(101)])
    record = run_pipeline(tmp_path / "out", [candidates], references=[references], flags="-n 1 -r 10",
                          max_text_bytes=1_600)
    counts = record["counts"]
    assert (counts["rows_read"], counts["scored"], counts["errors_by_reason"]) == (205, 2, {"text_too_long": 2})
    errors = read_errors(tmp_path / "out")
    assert sorted((e["system"], e["doc_id"]) for e in errors) == [("s1", "past"), ("s2", "past")]
    assert all("document 'past' has 101 reference rows, over the limit of 100" in e["message"] for e in errors)
