"""Each composite transform of the graph (pipeline/beam/graph.py) alone, with
Beam's TestPipeline and assert_that, on inputs small enough to score by hand."""

from __future__ import annotations

import json
from typing import NamedTuple

import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline.beam.counts import CountRows
from pipeline.beam.documents import GroupDocuments, ScoreDocuments, batches_of, scored_documents
from pipeline.beam.read import ReadFileFn, ReadSummaries
from pipeline.config import DEFAULT_PROFILE, InputConfig, Profile
from pipeline.records import Candidate, ReferenceRow
from rouge_core import RougeSettings

# "a cat sat" against "the cat sat": 2 of 3 unigrams match (R = P = F = 2/3), and
# 1 of 2 bigrams ("cat sat").
PROFILE = Profile(DEFAULT_PROFILE, (RougeSettings.from_flags("-n 2"),))


class Doc(NamedTuple):
    system: str
    profile: str = DEFAULT_PROFILE
    doc_id: str = "d1"
    values: bytes = b""
    digest: bytes = bytes(16)


def batch(rows):
    """Rows as ReadSummaries sends them with one bucket: one (bucket, plain tuples) batch."""
    return [(0, [tuple(r) for r in rows])] if rows else []


def documents(out):
    """GroupDocuments' lists of DocumentGroups, one element per document."""
    return out["documents"] | "Documents" >> beam.FlatMap(lambda groups: groups)


def candidate(system, doc_id, text, references=None, position=1):
    return Candidate(system, doc_id, text, references, "c.jsonl", position)


def test_group_documents_joins_split_form_and_reports_what_it_cannot_use(tmp_path):
    with TestPipeline() as p:
        candidates = p | "C" >> beam.Create(batch(
            [candidate("A", "d1", "a cat sat"), candidate("B", "d1", "x"), candidate("A", "d2", "y", position=2),
             candidate("A", "d2", "y", position=3)]
        ))
        references = p | "R" >> beam.Create(batch(
            [ReferenceRow("d1", ["the cat sat"], None, "r.jsonl", 1), ReferenceRow("d9", ["z"], None, "r.jsonl", 2)]
        ))
        out = (candidates, references) | GroupDocuments(str(tmp_path))
        assert_that(
            documents(out) | beam.Map(lambda g: (g.doc_id, [(c.system, refs) for c, refs in g.candidates])),
            equal_to([("d1", [("A", ["the cat sat"]), ("B", ["the cat sat"])])]),
            label="documents",
        )
        # d2: no references for either copy (reported once each, not as duplicates of each other)
        assert_that(out["errors"] | beam.Map(lambda e: (e.doc_id, e.reason, e.position)),
                    equal_to([("d2", "no_references", 2), ("d2", "no_references", 3)]), label="errors")
        assert_that(out["unused"], equal_to([1]), label="unused")  # d9's one row


def test_score_documents_scores_each_candidate_and_the_human_pseudo_system(tmp_path):
    refs = ["the cat sat", "a dog sat"]
    with TestPipeline() as p:
        candidates = p | "C" >> beam.Create(batch([candidate("A", "d1", "a cat sat", refs)]))
        references = p | "R" >> beam.Create([])
        grouped = (candidates, references) | GroupDocuments(str(tmp_path))
        out = grouped["documents"] | ScoreDocuments([PROFILE], progress_seconds=3600, human="[human]")
        scored = out["documents"] | "Rows" >> beam.FlatMap(scored_documents)
        systems = scored | beam.Filter(lambda d: d.system != "[human]")
        values = systems | beam.Map(lambda d: (d.system, d.doc_id, [round(x, 5) for x in d.array[:, 3]]))
        # R against each reference, averaged (-f A): ROUGE-1 (2/3 + 2/3) / 2; ROUGE-2 (1/2 + 0/2) / 2;
        # ROUGE-L ("cat sat", "a sat": 2 of 3 each) 2/3
        assert_that(values, equal_to([("A", "d1", [0.66667, 0.25, 0.66667])]), label="scored")
        assert_that(out["human"], equal_to([1]), label="human")  # one human pseudo-document
        everything = scored | beam.Map(lambda d: d.system)
        assert_that(everything, equal_to(["A", "[human]"]), label="documents")
        assert_that(out["errors"], equal_to([]), label="errors")


def test_read_summaries_counts_every_row_once(tmp_path):
    rows = [
        {"system": "A", "doc_id": "d1", "candidate": "a cat sat", "references": ["the cat sat"]},
        {"system": "A", "doc_id": 7, "candidate": "x", "references": ["y"]},  # wrong_type
    ]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{oops\n")
    with TestPipeline() as p:
        out = p | ReadSummaries(InputConfig(), [str(path)], [], str(tmp_path / "staging"))
        rows = out["candidates"] | beam.FlatMap(lambda b: b[1])
        assert_that(rows | beam.Map(lambda c: (c[0], c[1])), equal_to([("A", "d1")]), label="c")
        assert_that(out["counts"], equal_to([(3, {"wrong_type": 1, "invalid_json": 1})]), label="n")
    errors = [json.loads(line) for f in (tmp_path / "staging" / "errors").glob("*.jsonl") for line in f.open()]
    assert sorted(e["reason"] for e in errors) == ["invalid_json", "wrong_type"]


def test_count_rows_writes_the_run_counts(tmp_path):
    with TestPipeline() as p:
        pc = lambda label, items: p | label >> beam.Create(items)  # noqa: E731
        {
            "read_counts": pc("Reads", [(3, {"invalid_json": 1}), (2, {})]),
            "references": pc("Refs", []),
            "unused": pc("Unused", [4]),
            "human": pc("Human", [1]),
            # the first profile's documents; one of another profile, not counted
            "documents": pc("Docs", batches_of(
                [Doc("A", doc_id="d1"), Doc("A", doc_id="d2"), Doc("B"), Doc("[human]"), Doc("A", "other")]
            )),
            "errors": pc("Errors", []),
        } | CountRows(str(tmp_path), DEFAULT_PROFILE)
    counts = json.loads((tmp_path / "_counts.json").read_text())
    assert counts["rows_read"] == 5 and counts["scored"] == 3 and counts["human_documents"] == 1
    assert counts["documents"] == 2  # distinct doc_ids d1, d2
    assert counts["errors_by_reason"] == {"invalid_json": 1} and counts["reference_rows_unused"] == 4
    assert counts["documents_by_system"] == {"A": 2, "B": 1, "[human]": 1}
    assert counts["systems_missing_documents"] == {"B": 1, "[human]": 1}


def test_count_rows_tallies_errors_text_checks_references_and_reuse(tmp_path):
    from pipeline.records import ErrorRecord

    def error(system, reason):
        return ErrorRecord(system, "d1", "f.jsonl", 1, reason, "")

    with TestPipeline() as p:
        pc = lambda label, items: p | label >> beam.Create(items, reshuffle=False)  # noqa: E731
        out = {
            "read_counts": pc("Reads", [(4, {"invalid_json": 1})]),
            "references": pc("Refs", [(0, ["r1", "r2", "r3"]), (1, ["r4"])]),
            "unused": pc("Unused", [0]),
            "human": pc("Human", [0]),
            "documents": pc("Docs", batches_of([Doc("A", doc_id="d1"), Doc("A", doc_id="d2")])),
            # a duplicate reference row names its system but is not a rejected candidate
            "errors": pc("Errors", [error("A", "empty_candidate"), error("A", "duplicate_reference"),
                                    error(None, "invalid_json")]),
            # (kind, owner, doc_id): counted per (owner, kind), the first doc_id the example
            "text_checks": pc("Checks", [("one_sentence", "A", "d9"), ("one_sentence", "A", "d2"),
                                         ("markup", "refs", "d5")]),
            # per scored list, its fewest and most references: the run's are the fewest and the most of all
            "references_per_document": pc("Nrefs", [(2, 3), (1, 2), (2, 2)]),
            "reuse": pc("Reuse", [("rows_reused", 2), ("refused", "b"), ("rows_reused", 1), ("refused", "a")]),
        } | CountRows(str(tmp_path), DEFAULT_PROFILE)
        assert_that(out["counts"] | beam.Map(lambda c: c["reuse"]["rows_reused"]), equal_to([3]))
        # the rows of "errors" (3; the readers' own error row is in the counts only): WriteErrors' shards
        assert_that(out["error_rows"], equal_to([3]), label="ErrorRows")
    counts = json.loads((tmp_path / "_counts.json").read_text())
    assert counts["rows_read"] == 4 and counts["scored"] == 2 and counts["documents"] == 2
    assert counts["reference_rows"] == 4
    assert counts["errors_by_reason"] == {"duplicate_reference": 1, "empty_candidate": 1, "invalid_json": 2}
    assert counts["errors"] == 4 and counts["errors_by_system"] == {"A": 1}
    assert counts["text_checks"] == {"A": {"one_sentence": {"texts": 2, "example": "d2"}},
                                     "refs": {"markup": {"texts": 1, "example": "d5"}}}
    assert counts["references_per_document"] == [1, 3]
    assert counts["reuse"]["refused"] == ["a", "b"] and counts["reuse"]["carried_scored"] == 0


def test_run_counts_do_not_depend_on_how_the_input_is_split():
    from pipeline.beam.counts import RunCounts

    items = [("read_counts", (3, {"x": 1})), ("error", ("x", "A")), ("documents", (2, {"A": 2})),
             ("text_check", (("A", "k"), "d7")), ("text_check", (("A", "k"), "d3")), ("reuse", ("refused", "z")),
             ("reuse", ("rows_reused", 5)), ("human_documents", 1), ("documents", (1, {"B": 1}))]
    fn = RunCounts(with_reuse=True)

    def combined(parts):
        accs = []
        for part in parts:
            acc = fn.create_accumulator()
            for item in part:
                acc = fn.add_input(acc, item)
            accs.append(acc)
        return fn.extract_output(fn.merge_accumulators(accs))

    whole = combined([items])
    assert whole == combined([items[::2], [], items[1::2]]) == combined([[item] for item in reversed(items)])
    assert whole["scored"] == 2 and whole["text_checks"] == [(("A", "k"), (2, "d3"))]
    assert whole["read_counts"] == (3, {"x": 1}) and whole["errors_by_reason"] == [("x", 1)]


def test_group_documents_conflicting_references_are_errors_unless_kept(tmp_path):
    rows = [candidate("A", "d", "x", ["r1"]), candidate("B", "d", "x", ["r2"])]
    for keep, expected in ((False, ["conflicting_references"] * 2), (True, [])):
        with TestPipeline() as p:
            out = (p | "C" >> beam.Create(batch(rows)), p | "R" >> beam.Create([])) | GroupDocuments(str(tmp_path / str(keep)), keep)
            assert_that(out["errors"] | beam.Map(lambda e: e.reason), equal_to(expected))


def test_a_row_whose_parsing_raises_is_one_internal_error_row(tmp_path, monkeypatch):
    import pipeline.beam.read as read  # noqa: PLC0415

    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"system": "A", "doc_id": f"d{i}", "candidate": "x", "references": ["y"]}) + "\n"
                            for i in range(3)))
    real = read.parse_candidate

    def flaky(item, *args):
        if item.position == 2:
            raise KeyError("boom")
        return real(item, *args)

    monkeypatch.setattr(read, "parse_candidate", flaky)
    fn = ReadFileFn(InputConfig(), "candidates", True, str(tmp_path / "staging"), 3600)
    fn.setup()
    out = list(fn.process(str(path)))
    rows = [row for element in out if isinstance(element, tuple) for row in element[1]]
    assert sorted(r[1] for r in rows) == ["d0", "d2"]
    assert out[-1].value == (3, {"internal_error": 1})  # every row counted: 2 rows out, 1 error
    (error,) = [json.loads(line) for f in (tmp_path / "staging" / "errors").glob("*.jsonl") for line in f.open()]
    assert error["position"] == 2 and "unexpected KeyError while parsing this row" in error["message"]
