"""Joining candidates with their references by doc_id, catching duplicates and
conflicts: the document rules that `run` (pipeline.beam.documents) and `score`
(pipeline.score) share."""

from __future__ import annotations

import itertools
import json
from typing import NamedTuple

from pipeline.io.names import seen_as, spelled
from pipeline.records import Candidate, ErrorRecord, make


class DocumentGroup(NamedTuple):
    doc_id: str
    candidates: list  # of (Candidate, references), sorted by system


def _canonical(texts) -> str:
    return json.dumps(texts, ensure_ascii=False, separators=(",", ":"))


def candidate_error(c: Candidate, reason: str, message: str) -> ErrorRecord:
    return ErrorRecord(c.system, c.doc_id, c.source, c.position, reason, message)


def _place(row) -> str:
    return f"{row.source}:{row.position}"


def share_references(first, row):
    """`row` (a Candidate, or its plain tuple) with the references of `first` (an
    earlier row of its document) when the two are equal: the document then holds
    one copy of them, not one per row (20 systems' rows of one document with 10 x
    950 KB references each held 190 MB where one copy is 9.5 MB), and the rules
    below compare them by identity.  Rows with other references, or none (split
    form), are as they were."""
    mine, theirs = row[3], first[3]
    if mine is None or mine is theirs or mine != theirs:
        return row
    return make(type(row), (*row[:3], theirs, *row[4:]))


def document_key(doc_id: str) -> str:
    """The key that brings together the doc_ids a person reads as one
    (pipeline.io.names.seen_as): `split_lookalikes` then tells them apart."""
    return seen_as(doc_id)


def split_lookalikes(candidates: list, reference_rows: list):
    """The rows of one `document_key` -> (error rows, [(doc_id, candidates, reference
    rows)] per exact doc_id, sorted).  A system with two doc_ids that print alike
    but differ (invisible characters, Unicode forms) would publish two documents
    that look like one: all its rows of those ids are `duplicate_key` errors, both
    spellings named (keeping one would depend on input order)."""
    if candidates:  # the common key: one spelling, so nothing prints alike
        doc_id = candidates[0].doc_id
        if all(c.doc_id == doc_id for c in candidates) and all(r.doc_id == doc_id for r in reference_rows):
            return [], [(doc_id, candidates, reference_rows)]
    errors = []
    spellings: dict = {}
    for c in candidates:
        spellings.setdefault(c.system, set()).add(c.doc_id)
    clashing = {system for system, ids in spellings.items() if len(ids) > 1}
    if clashing:
        kept = []
        for c in sorted(candidates, key=lambda c: (c.system, c.doc_id, c.source, c.position)):
            if c.system not in clashing:
                kept.append(c)
                continue
            names = " and ".join(spelled(d) for d in sorted(spellings[c.system]))
            errors.append(candidate_error(
                c, "duplicate_key",
                f"system {spelled(c.system)} has doc_ids that print alike but differ (invisible characters or "
                f"Unicode forms): {names}; this row is {spelled(c.doc_id)}",
            ))
        candidates = kept
    by_id: dict = {}
    for c in candidates:
        by_id.setdefault(c.doc_id, ([], []))[0].append(c)
    for r in reference_rows:
        by_id.setdefault(r.doc_id, ([], []))[1].append(r)
    return errors, [(doc_id, *by_id[doc_id]) for doc_id in sorted(by_id)]


def plain_document(candidates: list):
    """The common joined-form document, seen in a few comparisons: every row of one
    doc_id and the same references, one row per system.  Its DocumentGroup, the one
    the rules below make of it; None for any other document (which they resolve,
    saying what is wrong)."""
    first = candidates[0]
    doc_id, references = first.doc_id, first.references
    if references is None or len({c.system for c in candidates}) != len(candidates):
        return None
    for c in candidates:
        if c.doc_id != doc_id or c.references != references:
            return None
    return DocumentGroup(doc_id, [(c, references) for c in sorted(candidates, key=_system)])


def _system(c) -> str:
    return c.system


def resolve_document(doc_id: str, candidates: list, reference_rows: list, keep_conflicts: bool = False):
    """One document's candidates and reference rows -> a DocumentGroup and error rows.

    Every candidate leaves as part of the group or as exactly one error, and
    every reference row is used or reported.  Duplicates of (system, doc_id) all
    go to errors (keeping one would depend on input order), each pointing at the
    first copy, so n copies cost O(n).  All candidates of a document go to
    errors when it has no references or its reference rows cannot be used,
    unless `keep_conflicts` lets each joined-form row keep its own references
    (as when one system was released with its own copy of the references).
    """
    if not reference_rows and candidates:
        plain = plain_document(candidates)
        if plain is not None:
            yield plain
            return
    order = lambda r: (r.source, r.position)  # noqa: E731
    candidates = sorted(candidates, key=lambda c: (c.system, c.source, c.position))
    references, problem, reference_errors = _references(candidates, sorted(reference_rows, key=order), keep_conflicts)
    yield from reference_errors
    if problem:
        reason, message = problem
        for c in candidates:
            yield candidate_error(c, reason, message)
        return
    unique = []
    for _, group in itertools.groupby(candidates, key=_system):
        rows = list(group)
        if len(rows) == 1:
            unique.append(rows[0])
            continue
        for r in rows:
            yield candidate_error(
                r,
                "duplicate_key",
                f"({r.system!r}, {doc_id!r}) appears {len(rows)} times; first at {_place(rows[0])}",
            )
    if unique:
        yield DocumentGroup(doc_id, [(c, c.references if references is None else references) for c in unique])


def _references(candidates, reference_rows, keep_conflicts):
    """(references or None, problem or None, reference rows reported as errors).

    Split form: list-form rows (a `references` list) must agree, and the copies
    after the first are reported as `duplicate_reference`; one-reference-per-row
    rows are each one reference, identical texts included (as the same texts in
    a joined-form list would be), ordered by reference_id and then text, so the
    order (which decides -f B ties) does not depend on the files; two rows with
    one non-empty reference_id are both reported, never merged.
    """
    if reference_rows:
        lists = [r for r in reference_rows if r.reference_id is None]
        singles = [r for r in reference_rows if r.reference_id is not None]
        if lists and singles:
            return None, ("conflicting_references", "reference rows mix the list and one-per-row forms"), []
        if lists:
            if len({_canonical(r.references) for r in lists}) > 1:
                return None, ("conflicting_references", f"{len(lists)} reference rows disagree"), []
            first = lists[0]
            errors = [
                ErrorRecord(None, r.doc_id, r.source, r.position, "duplicate_reference",
                            f"the same references again; used those at {_place(first)}")
                for r in lists[1:]
            ]
            return first.references, None, errors
        by_id: dict[str, list] = {}
        for r in singles:
            if r.reference_id:
                by_id.setdefault(r.reference_id, []).append(r)
        duplicated = {rid: rows for rid, rows in by_id.items() if len(rows) > 1}
        if duplicated:
            errors = [
                ErrorRecord(None, r.doc_id, r.source, r.position, "duplicate_reference",
                            f"reference_id {rid!r} appears {len(rows)} times; first at {_place(rows[0])}")
                for rid, rows in sorted(duplicated.items())
                for r in rows
            ]
            names = ", ".join(repr(rid) for rid in sorted(duplicated)[:3])
            return None, ("conflicting_references", f"reference_id {names} appears more than once"), errors
        ordered = sorted(singles, key=lambda r: (r.reference_id, _canonical(r.references[0])))
        return [r.references[0] for r in ordered], None, []
    if candidates[0].references is None:
        return None, ("no_references", "no reference row has this doc_id"), []
    first = candidates[0].references
    if all(c.references == first for c in candidates):  # (lists of texts: equal lists, equal JSON)
        return first, None, []
    if not keep_conflicts:
        lists = {_canonical(c.references) for c in candidates}
        return None, ("conflicting_references", f"{len(lists)} different reference lists for this doc_id"), []
    return None, None, []
