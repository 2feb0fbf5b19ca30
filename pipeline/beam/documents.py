"""Documents in Beam: candidates joined with their references by doc_id (the rules
of pipeline.documents), then every (system, document) scored with rouge_core."""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam
import numpy as np

from rouge_core.aggregate import stats_array, stats_bytes
from pipeline.beam.progress import Progress
from pipeline.beam.read import ERRORS, tagged
from pipeline.config import Profile
from pipeline.documents import DocumentGroup, candidate_error, document_key, resolve_document, split_lookalikes
from pipeline.records import Candidate, ErrorRecord, ReferenceRow
from pipeline.score import group_text_problems
from rouge_core import MetricStats, RougeInputError, RougeScorer
from rouge_core.human import human_scores
from rouge_core.textcheck import TextCheck

UNUSED = "unused_references"
HUMAN = "human"
TEXT_CHECKS = "text_checks"  # (owner, kind, doc_id) of texts the settings read badly


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


class ResolveDocumentFn(beam.DoFn):
    """(doc_id, {"candidates": [...], "references": [...]}) in, a DocumentGroup out,
    errors to ERRORS; reference rows of documents no candidate has are counted
    on UNUSED (they are normal: a reference set larger than the outputs)."""

    def __init__(self, keep_conflicts: bool = False):
        self.keep_conflicts = keep_conflicts

    def process(self, element):
        _, grouped = element  # the key: document_key, shared by doc_ids that print alike
        candidates = [Candidate._make(c) for c in grouped["candidates"]]
        references = [ReferenceRow._make(r) for r in grouped["references"]]
        if not candidates:
            yield beam.pvalue.TaggedOutput(UNUSED, len(references))
            return
        try:
            errors, documents = split_lookalikes(candidates, references)
            out = list(errors)
            for doc_id, doc_candidates, doc_references in documents:
                if doc_candidates:
                    out += resolve_document(doc_id, doc_candidates, doc_references, self.keep_conflicts)
                elif doc_references:
                    yield beam.pvalue.TaggedOutput(UNUSED, len(doc_references))
            yield from tagged(out)
        except Exception as err:  # the last resort: every row of the document is reported
            message = f"unexpected {type(err).__name__} while grouping this document: {str(err)[:300]!r}"
            for c in candidates:
                yield beam.pvalue.TaggedOutput(ERRORS, candidate_error(c, "internal_error", message))


class GroupDocuments(beam.PTransform):
    """(candidates, reference rows) in; out a dict: "documents" (DocumentGroup),
    "errors" and "unused" (per document without candidates, its reference rows)."""

    def __init__(self, keep_conflicts: bool = False):
        super().__init__()
        self.keep_conflicts = keep_conflicts

    def expand(self, inputs):
        candidates, references = inputs
        grouped = {
            # Keyed by document_key (doc_ids that print alike meet); plain tuples cross the
            # shuffle (Beam encodes them field by field; a NamedTuple would be pickled),
            # rebuilt as records by ResolveDocumentFn.
            "candidates": candidates | "KeyCandidates" >> beam.Map(lambda c: (document_key(c.doc_id), tuple(c))),
            "references": references | "KeyReferences" >> beam.Map(lambda r: (document_key(r.doc_id), tuple(r))),
        } | "ByDocId" >> beam.CoGroupByKey()
        resolved = grouped | "Resolve" >> beam.ParDo(ResolveDocumentFn(self.keep_conflicts)).with_outputs(
            ERRORS, UNUSED, main="documents"
        )
        return {"documents": resolved.documents, "errors": resolved[ERRORS], "unused": resolved[UNUSED]}


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
        self.check = TextCheck(self.profiles[0].settings[0])  # the first setting's reading
        self.best = (
            [[RougeScorer(s.replace(multi_reference="best")) for s in p.settings] for p in self.profiles]
            if self.human
            else None
        )
        self.progress.start()

    def finish_bundle(self):
        self.progress.flush(force=True)

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
            document = ScoredDocument(p.name, self.human, group.doc_id, v)
            yield document  # among the documents every table shows
            yield beam.pvalue.TaggedOutput(HUMAN, document)  # and apart, to be counted

    def process(self, group: DocumentGroup):
        if self.human:
            yield from self._human(group)
        for problem in group_text_problems(group, self.check):
            yield beam.pvalue.TaggedOutput(TEXT_CHECKS, problem)
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
            self.progress.add("scored", system=c.system)
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
            return candidate_error(c, error.reason, f"{error}{where}")
        return candidate_error(c, "internal_error", f"unexpected {type(error).__name__} while scoring{where}: {str(error)[:300]!r}")


class ScoreDocuments(beam.PTransform):
    """DocumentGroups in; out a dict: "documents" (one ScoredDocument per candidate
    and profile, and Lin 2004's human pseudo-system when `human` names it: what every
    table shows), "human" (the human pseudo-documents alone), "errors" and
    "text_checks" ((owner, kind, doc_id) per text rouge_core.textcheck flags).

    The documents are the DoFn's main output, not a Flatten of two outputs: Beam's
    local runner materializes a Flatten's output, which pickled every document once."""

    def __init__(self, profiles: list[Profile], progress_seconds: float, human: str = ""):
        super().__init__()
        self.profiles, self.progress_seconds, self.human = profiles, progress_seconds, human

    def expand(self, groups):
        fn = ScoreDocumentFn(self.profiles, self.progress_seconds, self.human)
        scored = groups | "Score" >> beam.ParDo(fn).with_outputs(ERRORS, HUMAN, TEXT_CHECKS, main="documents")
        return {"human": scored[HUMAN], "documents": scored.documents, "errors": scored[ERRORS],
                "text_checks": scored[TEXT_CHECKS]}
