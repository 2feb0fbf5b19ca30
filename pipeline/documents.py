"""Joining candidates with their references by doc_id, catching duplicates and
conflicts, and scoring every (system, document) with rouge_core."""

from __future__ import annotations

import json
from typing import NamedTuple

import apache_beam as beam

from pipeline.progress import Progress
from pipeline.read import ERRORS
from pipeline.records import Candidate, ErrorRecord
from rouge_core import RougeInputError, RougeScorer, RougeSettings


class DocumentGroup(NamedTuple):
    doc_id: str
    candidates: list  # of (Candidate, references), sorted by system


class ScoredDocument(NamedTuple):
    system: str
    doc_id: str
    scores: dict  # metric tag -> rouge_core MetricStats


def _canonical(texts) -> str:
    return json.dumps(texts, ensure_ascii=False, separators=(",", ":"))


def _candidate_error(c: Candidate, reason: str, message: str):
    return beam.pvalue.TaggedOutput(
        ERRORS, ErrorRecord(c.system, c.doc_id, c.source, c.position, reason, message)
    )


class ResolveDocumentFn(beam.DoFn):
    """(doc_id, {"candidates": [...], "references": [...]}) in, a DocumentGroup out.

    Every candidate of the document leaves as part of the group or as exactly
    one error: duplicates of (system, doc_id) all go to errors (keeping one
    would depend on input order), as do all candidates of a document that has
    no references or whose rows disagree on the references, unless
    `keep_conflicts` lets each joined-form row keep its own references (as when
    one system was released with its own copy of the references).
    """

    def __init__(self, keep_conflicts: bool = False):
        self.keep_conflicts = keep_conflicts

    def process(self, element):
        doc_id, grouped = element
        candidates = sorted(grouped["candidates"], key=lambda c: (c.system, c.source, c.position))
        if not candidates:
            return
        references, problem = self._references(candidates, grouped["references"])
        if problem:
            reason, message = problem
            for c in candidates:
                yield _candidate_error(c, reason, message)
            return
        by_system: dict[str, list[Candidate]] = {}
        for c in candidates:
            by_system.setdefault(c.system, []).append(c)
        unique = []
        for system, rows in by_system.items():
            if len(rows) == 1:
                unique.append(rows[0])
                continue
            places = ", ".join(f"{r.source}:{r.position}" for r in rows)
            for r in rows:
                yield _candidate_error(
                    r, "duplicate_key", f"({system!r}, {doc_id!r}) appears {len(rows)} times: {places}"
                )
        if unique:
            yield DocumentGroup(
                doc_id, [(c, c.references if references is None else references) for c in unique]
            )

    def _references(self, candidates, reference_rows):
        """(the document's references, None), or (None, (reason, message)) when the
        rows cannot be used, or (None, None) when each row keeps its own."""
        if reference_rows:  # split form
            lists = {_canonical(r.references) for r in reference_rows if r.reference_id is None}
            # One reference per row: ordered by reference_id (by text when there is
            # none), so the order, which decides -f B ties, does not depend on the files.
            singles = sorted(
                {(r.reference_id, _canonical(r.references[0])) for r in reference_rows if r.reference_id is not None}
            )
            if len(lists) > 1 or (lists and singles):
                return None, ("conflicting_references", f"{len(reference_rows)} reference rows disagree")
            if lists:
                return json.loads(lists.pop()), None
            ids = [rid for rid, _ in singles if rid]
            if len(ids) != len(set(ids)):
                return None, ("conflicting_references", "a reference_id has two different texts")
            return [json.loads(text) for _, text in singles], None
        if candidates[0].references is None:
            return None, ("no_references", "no reference row has this doc_id")
        lists = {_canonical(c.references) for c in candidates}
        if len(lists) > 1 and not self.keep_conflicts:
            return None, ("conflicting_references", f"{len(lists)} different reference lists for this doc_id")
        return (candidates[0].references if len(lists) == 1 else None), None


class GroupDocuments(beam.PTransform):
    """Candidates and reference rows in; DocumentGroups and errors out."""

    def __init__(self, keep_conflicts: bool = False):
        super().__init__()
        self.keep_conflicts = keep_conflicts

    def expand(self, inputs):
        candidates, references = inputs
        grouped = {
            "candidates": candidates | "KeyCandidates" >> beam.Map(lambda c: (c.doc_id, c)),
            "references": references | "KeyReferences" >> beam.Map(lambda r: (r.doc_id, r)),
        } | "ByDocId" >> beam.CoGroupByKey()
        return grouped | "Resolve" >> beam.ParDo(ResolveDocumentFn(self.keep_conflicts)).with_outputs(
            ERRORS, main="documents"
        )


class ScoreDocumentFn(beam.DoFn):
    """A DocumentGroup in, one ScoredDocument per candidate out.

    The scorer is built once per worker; the references are read and tokenized
    once per document, whatever the number of systems.
    """

    def __init__(self, settings: RougeSettings, progress_seconds: float):
        self.settings = settings
        self.progress = Progress("scoring", progress_seconds)

    def setup(self):
        self.scorer = RougeScorer(self.settings)
        self.progress.start()

    def process(self, group: DocumentGroup):
        for c, references in group.candidates:
            try:
                scores = self.scorer.score(candidate=c.text, references=references)
            except RougeInputError as err:
                self.progress.add("failed")
                yield _candidate_error(c, err.reason, str(err))
                continue
            self.progress.add("scored")
            yield ScoredDocument(c.system, c.doc_id, scores)
