"""The elements that flow through the pipeline, and its reason codes.

Plain tuples and dicts with `str` keys keep Beam's coders deterministic and
make the elements cheap to pickle between worker processes.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

# `make(Record, fields)`: a record from the tuple of its fields in one C call, for the
# rows every input row makes (a NamedTuple's own __new__, and `_make`, run Python
# code: 70-80 ns more a row each).
make = tuple.__new__


class SourceRow(NamedTuple):
    """One parsed input row and where it came from (file, 1-based line or row)."""

    source: str
    position: int
    row: dict


class Candidate(NamedTuple):
    system: str
    doc_id: str
    text: object  # str or list of str
    references: Optional[list]  # joined form: the row's references; split form: None
    source: str
    position: int


class SameReferences(int):
    """In place of a joined-form row's references: the same as those of the row at
    this position of the same file, of the same document (the reader writes a run of
    rows of one document with equal references once; pipeline.beam.documents puts
    the references back, one shared copy)."""


class ReferenceRow(NamedTuple):
    doc_id: str
    references: list  # one or more texts
    reference_id: Optional[str]  # one-reference-per-row form: orders the references
    source: str
    position: int


class ErrorRecord(NamedTuple):
    """A row that was not scored, and why.  The errors table has exactly these columns."""

    system: Optional[str]
    doc_id: Optional[str]
    source: str
    position: Optional[int]
    reason: str
    message: str


# Reason codes of the errors table, and what each means.
REASONS = {
    "missing_path": "an input glob matched no file",
    "unreadable_file": "a file could not be opened or read",
    "undecodable": 'a line is not valid UTF-8 (input.invalid_utf8 = "reject")',
    "line_too_long": "a JSONL line is longer than input.max_line_bytes",
    "invalid_json": "a line is not valid JSON",
    "not_an_object": "a JSON line is not an object",
    "invalid_parquet": "a Parquet file could not be read",
    "missing_field": "a required field is absent",
    "null_value": "a required field is null",
    "wrong_type": "a field has the wrong type",
    "text_too_long": "a text is longer than input.max_text_bytes",
    "duplicate_key": "the same (system, doc_id) appears more than once",
    "no_references": "no references for the candidate's doc_id",
    "conflicting_references": "rows of one doc_id give different references",
    "no_system": "input.system_from_path does not match the file path",
    "too_costly": "a text is too long for a quadratic metric (ROUGE-S*, ROUGE-L/W work limits)",
    "lone_surrogate": "a text holds a lone surrogate (a \\ud800-\\udfff escape that is no character)",
    "invalid_id": "a system, doc_id or reference_id holds a control character, is made only of invisible "
    "characters or spaces, or is over 1000 characters",
    "duplicate_reference": "a reference row repeats a (doc_id, reference_id), or repeats a doc_id's reference list",
    "internal_error": "an unexpected exception while handling this row (a bug: please report it)",
}

ERROR_COLUMNS = ErrorRecord._fields
