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
