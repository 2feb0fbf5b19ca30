"""Joining candidates with their references by doc_id, catching duplicates and
conflicts, and scoring every (system, document) with rouge_core."""

from __future__ import annotations

import itertools
import json
from typing import NamedTuple

import apache_beam as beam
import numpy as np

from pipeline.combiners import stats_array, stats_bytes
from pipeline.config import Profile
from pipeline.progress import Progress
from pipeline.read import ERRORS, tagged
from pipeline.records import Candidate, ErrorRecord
from rouge_core import RougeInputError, RougeScorer
from rouge_core.human import human_scores
from rouge_core.scoring import MetricStats


UNUSED = "unused_references"
HUMAN = "human"


class DocumentGroup(NamedTuple):
    doc_id: str
    candidates: list  # of (Candidate, references), sorted by system


class ScoredDocument(NamedTuple):
    """One (profile, system, document)'s scores, every metric in one compact value
    that crosses Beam's stages cheaply: `values` holds the MetricStats fields of
    each metric (in `Profile.tags` order) as float64 bytes."""

    profile: str
    system: str
    doc_id: str
    values: bytes

    @property
    def array(self) -> np.ndarray:
        """`values` as a read-only (metrics, 6) array."""
        return stats_array(self.values)

    def scores(self, tags) -> dict:
        """{metric tag: MetricStats}."""
        return {tag: MetricStats(*row) for tag, row in zip(tags, self.array.tolist())}


def _canonical(texts) -> str:
    return json.dumps(texts, ensure_ascii=False, separators=(",", ":"))


def _candidate_error(c: Candidate, reason: str, message: str) -> ErrorRecord:
    return ErrorRecord(c.system, c.doc_id, c.source, c.position, reason, message)


def _place(row) -> str:
    return f"{row.source}:{row.position}"


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
    order = lambda r: (r.source, r.position)  # noqa: E731
    candidates = sorted(candidates, key=lambda c: (c.system, c.source, c.position))
    references, problem, reference_errors = _references(candidates, sorted(reference_rows, key=order), keep_conflicts)
    yield from reference_errors
    if problem:
        reason, message = problem
        for c in candidates:
            yield _candidate_error(c, reason, message)
        return
    unique = []
    for _, group in itertools.groupby(candidates, key=lambda c: c.system):
        rows = list(group)
        if len(rows) == 1:
            unique.append(rows[0])
            continue
        for r in rows:
            yield _candidate_error(
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
    lists = {_canonical(c.references) for c in candidates}
    if len(lists) > 1 and not keep_conflicts:
        return None, ("conflicting_references", f"{len(lists)} different reference lists for this doc_id"), []
    return (candidates[0].references if len(lists) == 1 else None), None, []


class ResolveDocumentFn(beam.DoFn):
    """(doc_id, {"candidates": [...], "references": [...]}) in, a DocumentGroup out,
    errors to ERRORS; reference rows of documents no candidate has are counted
    on UNUSED (they are normal: a reference set larger than the outputs)."""

    def __init__(self, keep_conflicts: bool = False):
        self.keep_conflicts = keep_conflicts

    def process(self, element):
        doc_id, grouped = element
        candidates, references = list(grouped["candidates"]), list(grouped["references"])
        if not candidates:
            yield beam.pvalue.TaggedOutput(UNUSED, len(references))
            return
        try:
            yield from tagged(list(resolve_document(doc_id, candidates, references, self.keep_conflicts)))
        except Exception as err:  # the last resort: every row of the document is reported
            message = f"unexpected {type(err).__name__} while grouping this document: {str(err)[:300]!r}"
            for c in candidates:
                yield beam.pvalue.TaggedOutput(ERRORS, _candidate_error(c, "internal_error", message))


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
            ERRORS, UNUSED, main="documents"
        )


class ScoreDocumentFn(beam.DoFn):
    """A DocumentGroup in, one ScoredDocument per candidate and profile out.

    The scorers are built once per worker; a document's candidates go to each in
    one batch (`score_batch`: one call into the compiled kernel), and its
    references are read and tokenized once per scorer, whatever the number of
    systems.  A candidate that fails under any profile is one error row (the
    first failure), so every profile scores the same rows.
    """

    def __init__(self, profiles: list[Profile], progress_seconds: float, human: str = ""):
        self.profiles = profiles
        self.progress = Progress("scoring", progress_seconds)
        self.human = human

    def setup(self):
        self.scorers = [[RougeScorer(s) for s in p.settings] for p in self.profiles]
        self.tags = [[s.metric_tags() for s in p.settings] for p in self.profiles]
        self.best = (
            [[RougeScorer(s.replace(multi_reference="best")) for s in p.settings] for p in self.profiles]
            if self.human
            else None
        )
        self.progress.start()

    def _human(self, group: DocumentGroup):
        """Lin (2004) 2.1's human pseudo-system for a document with two or more
        references (to HUMAN; not counted as a scored input row)."""
        references = group.candidates[0][1]
        if len(references) < 2 or any(c.system == self.human for c, _ in group.candidates):
            return
        try:
            values = [
                b"".join(stats_bytes(human_scores(best, references), tags) for best, tags in zip(scorers, profile_tags))
                for scorers, profile_tags in zip(self.best, self.tags)
            ]
        except RougeInputError:  # a reference over a work limit: no human score for this document
            self.progress.add("human skipped")
            return
        for p, v in zip(self.profiles, values):
            yield beam.pvalue.TaggedOutput(HUMAN, ScoredDocument(p.name, self.human, group.doc_id, v))

    def process(self, group: DocumentGroup):
        if self.human:
            yield from self._human(group)
        pairs = [(c.text, references) for c, references in group.candidates]
        values = [[b""] * len(pairs) for _ in self.profiles]  # per profile, per candidate
        failed: dict[int, tuple[str, Exception]] = {}
        for k, (profile, scorers) in enumerate(zip(self.profiles, self.scorers)):
            for scorer, tags in zip(scorers, self.tags[k]):
                for i, result in enumerate(self._score(scorer, pairs)):
                    if isinstance(result, Exception):
                        failed.setdefault(i, (profile.name, result))
                    elif i not in failed:
                        values[k][i] += stats_bytes(result, tags)
        for i, (c, _) in enumerate(group.candidates):
            if i in failed:
                self.progress.add("failed")
                yield beam.pvalue.TaggedOutput(ERRORS, self._error(c, *failed[i]))
                continue
            self.progress.add("scored")
            for profile, per_candidate in zip(self.profiles, values):
                yield ScoredDocument(profile.name, c.system, c.doc_id, per_candidate[i])

    def _score(self, scorer, pairs) -> list:
        try:  # one call into the scorer (the compiled kernel when built) per document
            return scorer.score_batch(pairs)
        except Exception:  # an unexpected failure: score one by one, so it stays with its row
            return [self._score_one(scorer, text, references) for text, references in pairs]

    @staticmethod
    def _score_one(scorer, text, references):
        try:
            return scorer.score(candidate=text, references=references)
        except Exception as err:  # RougeInputError with its reason, or the last resort
            return err

    def _error(self, c, profile: str, error: Exception) -> ErrorRecord:
        where = f" (profile {profile})" if len(self.profiles) > 1 else ""
        if isinstance(error, RougeInputError):
            return _candidate_error(c, error.reason, f"{error}{where}")
        return _candidate_error(c, "internal_error", f"unexpected {type(error).__name__} while scoring{where}: {str(error)[:300]!r}")
