"""pipeline.coverage: the rejected shares, the threshold, and the warnings' words."""

from pipeline.coverage import (
    EXIT_REJECTED,
    REFERENCES,
    Coverage,
    TextTally,
    docs_cell,
    rejected_warning,
    text_warnings,
)


def test_the_share_of_rows_and_of_each_systems_documents_against_the_threshold():
    # 200 rows: 2 systems x 100 documents; system b lost 3 of its 100 documents.
    coverage = Coverage(rows=200, rejected=3, scored={"a": 100, "b": 97}, rejected_by_system={"b": 3}, documents=100)
    assert coverage.had("a") == 100 and coverage.had("b") == 100
    assert coverage.problems(0.05) == []
    assert coverage.problems(0.02) == ["b was scored on 97 of its 100 documents"]  # 3% of b, 1.5% of rows
    assert coverage.problems(0.01) == [
        "3 of 200 input rows (1.5%) were rejected",
        "b was scored on 97 of its 100 documents",
    ]
    assert coverage.problems(0.03) == []  # exactly at the threshold is within it
    assert coverage.different_document_sets() == {"b": 3}


def test_a_system_with_every_row_rejected_is_named():
    coverage = Coverage(rows=10, rejected=5, scored={"a": 5}, rejected_by_system={"b": 5}, documents=5)
    assert "b was scored on 0 of its 5 documents" in coverage.problems(0.01)
    assert coverage.systems() == ["a", "b"]


def test_from_run_counts_leaves_out_file_errors_and_reference_copies():
    counts = {
        "rows_read": 45_960,
        "errors_by_reason": {"conflicting_references": 45_828, "duplicate_reference": 4, "missing_path": 1},
        "documents_by_system": {"a": 33},
        "errors_by_system": {"a": 11_457},
        "documents": 33,
    }
    coverage = Coverage.from_counts(counts)
    assert coverage.rejected == 45_828
    assert coverage.had("a") == 11_490
    assert coverage.problems(0.01)[0] == "45,828 of 45,960 input rows (99.7%) were rejected"


def test_the_warning_names_the_loss_the_fix_and_the_exit_status():
    text = rejected_warning(["x was scored on 1 of its 2 documents"], 0.01, "See errors/.", {"conflicting_references": 1})
    assert text.startswith("WARNING: these numbers rest on part of the input: x was scored on 1 of its 2 documents")
    assert "(threshold 1%, --max-rejected)" in text
    assert "--conflicting-references keep" in text and f"Exit status {EXIT_REJECTED}." in text


def test_docs_cell():
    assert docs_cell(33, 11_490) == "33/11490" and docs_cell(5, None) == "5"


def test_text_tally_counts_and_keeps_the_smallest_doc_id_as_example():
    tally = TextTally()
    for doc in ("d3", "d1", "d2"):
        tally.add("sysA", "unreadable", doc)
    tally.add(REFERENCES, "one_sentence", "d9")
    found = tally.to_dict()
    assert found == {
        "sysA": {"unreadable": {"texts": 3, "example": "d1"}},
        REFERENCES: {"one_sentence": {"texts": 1, "example": "d9"}},
    }
    unreadable, one_sentence = text_warnings(found)
    assert one_sentence.startswith("warning: 1 reference text was scored as one sentence")
    assert "--sentence-split" in one_sentence
    assert unreadable.startswith("warning: 3 texts of sysA have letters the preset's tokenizer drops")
    assert "(e.g. doc_id d1)" in unreadable and "--preset unicode" in unreadable


def test_a_kind_of_text_warning_is_one_line_whatever_the_owners():
    """CNN/DM's: the references and each of four systems hold texts read as one sentence,
    one line with the count, whose they are (the three systems with most named) and an
    example, not five."""
    checks = {REFERENCES: {"one_sentence": {"texts": 11_423, "example": "cnndm-test-00000"}}}
    for system, n, example in (("simcls", 11_479, "cnndm-test-00000"), ("pg", 10, "cnndm-test-00393"),
                               ("base", 8, "cnndm-test-00353"), ("cov", 8, "cnndm-test-00474")):
        checks[system] = {"one_sentence": {"texts": n, "example": example}}
    checks["pg"]["unreadable"] = {"texts": 1, "example": "cnndm-test-00007"}
    one_sentence, unreadable = sorted(text_warnings(checks), key=lambda line: "unreadable" in line or "letters" in line)
    assert one_sentence == (
        "warning: 22,928 texts (11,423 reference texts; simcls 11,479, pg 10, base 8 and 1 more system) were "
        "scored as one sentence but hold several sentences: summary-level ROUGE-L/W and rougeLsum see one "
        "sentence (e.g. doc_id cnndm-test-00000, a reference); use --sentence-split sentencex (or "
        '"sep: . | ? | ! " for PTB-tokenized text)'
    )
    assert unreadable.startswith("warning: 1 text of pg has letters") and "(e.g. doc_id cnndm-test-00007)" in unreadable
    del checks[REFERENCES]
    assert "(e.g. doc_id cnndm-test-00000, simcls's)" in text_warnings(checks)[-1]
