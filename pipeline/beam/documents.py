"""Documents in Beam: candidates joined with their references by doc_id (the rules
of pipeline.documents), a bucket of documents at a time, then every (system,
document) scored with rouge_core, a list of documents per call into the kernel.
What leaves is scored batches: per profile, (profile, [(system, doc_id, values,
digest), ...]) with a document's rows together, plain tuples that Beam encodes
field by field (`digest`: the row's content digests, pipeline.digests)."""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam
import numpy as np

from rouge_core.aggregate import stats_array, stats_bytes
from pipeline.beam.batches import batched
from pipeline.beam.progress import Progress
from pipeline.collector import in_worker, this_process
from pipeline.beam.read import BATCH_ROWS, ERRORS
from pipeline.beam.spill import SpillFn, iter_load, load
from pipeline.config import Profile
from pipeline.digests import NO_CANDIDATE, row_digests
from pipeline.documents import (
    DocumentGroup,
    candidate_error,
    document_key,
    resolve_document,
    share_references,
    split_lookalikes,
)
from pipeline.records import Candidate, ErrorRecord, ReferenceRow, SameReferences, make
from pipeline.reuse import REUSE_COUNTS, BucketPrevious
from pipeline.score import group_text_problems, score_values
from rouge_core import MetricStats, RougeInputError, RougeScorer
from rouge_core.human import human_scores
from rouge_core.textcheck import TextCheck

UNUSED = "unused_references"
HUMAN = "human"
TEXT_CHECKS = "text_checks"  # (owner, kind, doc_id) of texts the settings read badly
REFERENCE_COUNTS = "reference_counts"  # per list of groups: the fewest and the most references a scored candidate had


class ScoredDocument(NamedTuple):
    """One row of a scored batch seen alone: a (profile, system, document)'s scores,
    every metric in one compact value: `values` holds the MetricStats fields of each
    metric (in `Profile.tags` order) as float64 bytes; `digest` the 16 bytes of its
    candidate's and references' digests (pipeline.digests)."""

    profile: str
    system: str
    doc_id: str
    values: bytes
    digest: bytes = bytes(16)

    @property
    def array(self) -> np.ndarray:
        """`values` as a read-only (metrics, 6) array."""
        return stats_array(self.values)

    def scores(self, tags) -> dict:
        """{metric tag: MetricStats}."""
        return {tag: MetricStats(*row) for tag, row in zip(tags, self.array.tolist())}


def scored_documents(batch) -> list[ScoredDocument]:
    """A scored batch (profile, [(system, doc_id, values, digest), ...]) as ScoredDocuments."""
    profile, rows = batch
    return [ScoredDocument(profile, *row) for row in rows]


def batches_of(documents) -> list[tuple]:
    """ScoredDocuments as scored batches, one per profile (rows of a document
    together, sorted by doc_id and system): the form ScoreDocuments emits."""
    by_profile: dict = {}
    for d in sorted(documents, key=lambda d: (d.doc_id, d.system)):
        by_profile.setdefault(d.profile, []).append((d.system, d.doc_id, d.values, d.digest))
    return sorted(by_profile.items())


class Matched(NamedTuple):
    """A list of DocumentGroups with, per candidate in order, its 16-byte digest and
    the previous run's values of the same row (one per profile) or None
    (pipeline.reuse.BucketPrevious.match; `reused` is None when no row's are);
    `carried`: the documents among them that systems carried whole scored too."""

    groups: list
    digests: list
    reused: list
    carried: frozenset


class ResolveBucketFn(beam.DoFn):
    """(bucket, {"candidates": [places], "references": [places]}) in (the places of the
    bucket's rows in spill files, pipeline.beam.spill); out, lists of
    DocumentGroups (a bucket's documents in doc_id order, cut at document
    boundaries into lists of about BATCH_ROWS candidates), errors to ERRORS;
    reference rows of documents no candidate has are counted on UNUSED (they are
    normal: a reference set larger than the outputs).  A document with more than
    `most_references` reference rows (pipeline.io.rows.most_texts, the bound of a
    row's list of references) holds only that many while they are counted, and its
    candidates are `text_too_long` errors: a million one-word reference rows of one
    document took 2 GB to score.

    With a previous run (`previous`) the bucket's "previous" items come too
    (pipeline.beam.reuse.ReadPrevious): each list goes out as a `Matched` (a
    candidate scored before with the same digests takes its previous values,
    ScoreDocuments scores the rest); references of a document only carried
    systems have are used, not unused; and what would make a carried system's
    results differ from a full run's is counted ("carry_violations" on
    REUSE_COUNTS, pipeline.reuse.BucketPrevious)."""

    def __init__(self, keep_conflicts: bool = False, previous: bool = False, most_references: int = 1 << 62):
        self.keep_conflicts = keep_conflicts
        self.previous = previous
        self.most_references = most_references  # a document's reference rows (pipeline.io.rows.most_texts)

    def process(self, element):
        _, grouped = element
        previous = None
        if self.previous:
            previous = BucketPrevious(load(grouped.get("previous", [])), not self.keep_conflicts)
        by_id: dict = {}
        repeated = False
        for c in iter_load(grouped["candidates"]):  # (rows of the spill: every field, as read)
            found = by_id.get(c[1])
            if found is None:
                by_id[c[1]] = found = ([], [])
            elif found[0]:
                c = share_references(found[0][0], c)  # (a document's equal references: one copy)
            repeated = repeated or type(c[3]) is SameReferences
            found[0].append(make(Candidate, c))
        if repeated:
            for candidates, _ in by_id.values():
                _put_back_references(candidates)
        most, over = self.most_references, {}
        for r in iter_load(grouped["references"]):  # (a document's rows past `most` are counted, not held)
            held = by_id.setdefault(r[0], ([], []))[1]
            if len(held) < most:
                held.append(make(ReferenceRow, r))
            else:
                over[r[0]] = over.get(r[0], most) + 1
        violations = 0
        for doc_id in sorted(over):  # its candidates are errors, as a row of that many references is
            candidates, _ = by_id.pop(doc_id)
            message = (f"document {doc_id!r} has {over[doc_id]} reference rows, over the limit of {most} "
                       "(input.max_text_bytes / 16, as for a row's list of references)")
            for c in candidates:
                yield beam.pvalue.TaggedOutput(ERRORS, candidate_error(c, "text_too_long", message))
            carried = previous is not None and previous.is_carried(doc_id)
            if not candidates and not carried:
                yield beam.pvalue.TaggedOutput(UNUSED, over[doc_id])
            violations += carried  # (a full run would refuse the carried systems' rows of it too)
        by_key: dict = {}  # document_key: doc_ids that print alike meet, and are told apart here
        for doc_id, (candidates, references) in by_id.items():
            rows = by_key.setdefault(document_key(doc_id), ([], []))
            rows[0].extend(candidates)
            rows[1].extend(references)
        del by_id
        out, held = [], 0
        for key in sorted(by_key):
            candidates, references = by_key.pop(key)
            for item in self._resolve(candidates, references, previous):
                if isinstance(item, DocumentGroup):
                    out.append(item)
                    held += len(item.candidates)
                else:
                    if previous is not None and item.tag == ERRORS:
                        violations += previous.unresolved(item.value)
                    yield item
            if held >= BATCH_ROWS:
                yield self._with_previous(out, previous)
                out, held = [], 0
        if out:
            yield self._with_previous(out, previous)
        if previous is not None:
            violations += previous.changed
        if violations:
            yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("carry_violations", violations))

    @staticmethod
    def _with_previous(groups: list, previous):
        """The groups alone, or with a previous run their `Matched`."""
        if previous is None:
            return groups
        digests = row_digests(groups)
        return Matched(groups, digests, *previous.match(groups, digests))

    def _resolve(self, candidates, references, previous=None):
        unused = (lambda rows: len(rows)) if previous is None else (
            lambda rows: sum(not previous.is_carried(r.doc_id) for r in rows))
        if not candidates:
            yield beam.pvalue.TaggedOutput(UNUSED, unused(references))
            return
        try:
            errors, documents = split_lookalikes(candidates, references)
            out = list(errors)
            for doc_id, doc_candidates, doc_references in documents:
                if doc_candidates:
                    out += resolve_document(doc_id, doc_candidates, doc_references, self.keep_conflicts)
                elif doc_references:
                    yield beam.pvalue.TaggedOutput(UNUSED, unused(doc_references))
            for item in out:
                yield beam.pvalue.TaggedOutput(ERRORS, item) if isinstance(item, ErrorRecord) else item
        except Exception as err:  # the last resort: every row of the document is reported
            message = f"unexpected {type(err).__name__} while grouping this document: {str(err)[:300]!r}"
            for c in candidates:
                yield beam.pvalue.TaggedOutput(ERRORS, candidate_error(c, "internal_error", message))


def _put_back_references(candidates: list) -> None:
    """Rows whose references the reader wrote once (`SameReferences`: the position of
    the row of the same file and document that holds them) get that row's, shared."""
    held = {(c.source, c.position): c.references for c in candidates if type(c.references) is not SameReferences}
    for i, c in enumerate(candidates):
        if type(c.references) is SameReferences:
            candidates[i] = make(Candidate, (*c[:3], held[c.source, int(c.references)], *c[4:]))


class GroupDocuments(beam.PTransform):
    """(candidate batches, reference batches[, previous items]), as ReadSummaries
    (and ReadPrevious) make them, in; out a dict: "documents" (lists of
    DocumentGroups; with a previous run, as ResolveBucketFn says), "errors",
    "unused" (per document without candidates, its reference rows) and
    "reuse" (ResolveBucketFn's counts).  The rows go through spill files under `folder`
    (pipeline.beam.spill): what crosses the shuffle is the place of a bucket's rows
    per file written, never a row."""

    def __init__(self, folder: str, keep_conflicts: bool = False, most_references: int = 1 << 62):
        super().__init__()
        self.folder, self.keep_conflicts, self.most_references = folder, keep_conflicts, most_references

    def expand(self, inputs):
        candidates, references, *previous = inputs
        spilled = {
            "candidates": candidates | "SpillCandidates" >> beam.ParDo(SpillFn(self.folder, "candidates", pickled=True)),
            "references": references | "SpillReferences" >> beam.ParDo(SpillFn(self.folder, "references", pickled=True)),
        }
        if previous:
            spilled["previous"] = previous[0] | "SpillPrevious" >> beam.ParDo(SpillFn(self.folder, "previous", pickled=True))
        grouped = spilled | "ByBucket" >> beam.CoGroupByKey()
        fn = ResolveBucketFn(self.keep_conflicts, bool(previous), self.most_references)
        resolved = grouped | "Resolve" >> beam.ParDo(fn).with_outputs(ERRORS, UNUSED, REUSE_COUNTS, main="documents")
        return {"documents": batched(resolved.documents), "errors": resolved[ERRORS], "unused": resolved[UNUSED],
                "reuse": resolved[REUSE_COUNTS]}


class ScoreDocumentFn(beam.DoFn):
    """A list of DocumentGroups in; out, per profile one scored batch (profile,
    [(system, doc_id, values, digest), ...]), a document's rows together.

    The scorers are built once per worker; every candidate of the list goes to
    each scorer in one batch (`score_batch`: one call into the compiled kernel).
    A candidate that fails under any profile is one error row (the first
    failure), so every profile scores the same rows.  HUMAN gets the number of
    human pseudo-documents of the list (they are in the batches too).  Given a
    `Matched` list, a candidate with the previous run's values takes them and is
    not scored ("rows_reused" on REUSE_COUNTS).
    """

    def __init__(self, profiles: list[Profile], progress_seconds: float, human: str = ""):
        self.profiles = profiles
        self.progress = Progress("scoring", progress_seconds)
        self.human = human
        self.driver = this_process()

    def setup(self):
        in_worker(self.driver)  # gc thresholds in a worker process (pipeline.collector)
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
        references: its values per profile, or None."""
        references = group.candidates[0][1]
        if len(references) < 2 or any(c.system == self.human for c, _ in group.candidates):
            return None
        try:
            return [
                b"".join(stats_bytes(human_scores(best, references), tags) for best, tags in zip(scorers, profile_tags))
                for scorers, profile_tags in zip(self.best, self.tags)
            ]
        except RougeInputError:  # a reference over a work limit: no human score for this document
            self.progress.add("human skipped")
            return None

    def process(self, element):
        if type(element) is Matched:  # (with a previous run: some rows' values are the previous run's)
            groups, digests, reused, carried = element
        else:
            groups, reused, carried = element, None, frozenset()
            digests = row_digests(groups)
        pairs = [(c.text, references) for group in groups for c, references in group.candidates]
        values = [[b""] * len(pairs) for _ in self.profiles]  # per profile, per candidate
        todo = list(range(len(pairs)))
        if reused is not None:
            todo = [i for i in todo if reused[i] is None]
            for i, found in enumerate(reused):
                if found is not None:
                    for k, profile_values in enumerate(found):
                        values[k][i] = profile_values
            if len(todo) < len(pairs):
                yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("rows_reused", len(pairs) - len(todo)))
                self.progress.add("reused", len(pairs) - len(todo))
        failed: dict[int, tuple[str, Exception]] = {}
        scored_pairs = pairs if len(todo) == len(pairs) else [pairs[i] for i in todo]
        for k, (profile, scorers) in enumerate(zip(self.profiles, self.scorers)):
            for scorer in scorers:
                for i, result in zip(todo, score_values(scorer, scored_pairs)):
                    if isinstance(result, Exception):
                        failed.setdefault(i, (profile.name, result))
                    elif i not in failed:
                        values[k][i] += result  # (the scorer's tags, in Profile.tags order)
        rows = [[] for _ in self.profiles]
        humans, i, scored, systems, reference_counts, carried_scored = 0, 0, 0, set(), set(), 0
        for group in groups:
            if group.doc_id in carried:  # (scored: some candidate of it did not fail)
                rows_of = range(i, i + len(group.candidates))
                carried_scored += any(j not in failed for j in rows_of) if failed else bool(rows_of)
            first = i  # the group's first candidate: the human pseudo-system's references are its
            for problem in group_text_problems(group, self.check):
                yield beam.pvalue.TaggedOutput(TEXT_CHECKS, problem)
            for c, references in group.candidates:
                if i in failed:
                    self.progress.add("failed")
                    yield beam.pvalue.TaggedOutput(ERRORS, self._error(c, *failed[i]))
                else:
                    scored += 1
                    systems.add(c.system)
                    reference_counts.add(len(references))
                    for out, per_candidate in zip(rows, values):
                        out.append((c.system, c.doc_id, per_candidate[i], digests[i]))
                i += 1
            human = self._human(group) if self.human else None
            if human is not None:
                humans += 1
                digest = NO_CANDIDATE + digests[first][8:]
                for out, v in zip(rows, human):
                    out.append((self.human, group.doc_id, v, digest))
        if scored:
            self.progress.add("scored", scored, systems=systems)  # (a list at a time)
        for profile, out in zip(self.profiles, rows):
            if out:
                yield profile.name, out
        if humans:
            yield beam.pvalue.TaggedOutput(HUMAN, humans)
        if reference_counts:
            yield beam.pvalue.TaggedOutput(REFERENCE_COUNTS, (min(reference_counts), max(reference_counts)))
        if carried_scored:
            yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("carried_scored", carried_scored))

    def _error(self, c, profile: str, error: Exception) -> ErrorRecord:
        where = f" (profile {profile})" if len(self.profiles) > 1 else ""
        if isinstance(error, RougeInputError):
            return candidate_error(c, error.reason, f"{error}{where}")
        return candidate_error(c, "internal_error", f"unexpected {type(error).__name__} while scoring{where}: {str(error)[:300]!r}")


class ScoreDocuments(beam.PTransform):
    """Lists of DocumentGroups (or, with a previous run, `Matched`) in; out a dict:
    "documents" (scored batches: per profile, (profile, [(system, doc_id, values,
    digest), ...]), Lin 2004's human pseudo-system among them when `human` names
    it: what every table shows), "human" (per batch, the number of human
    pseudo-documents), "errors", "text_checks" ((kind, owner, doc_id) per text
    rouge_core.textcheck flags), "references" (per list scored, the fewest and
    the most references a scored candidate had: CountRows makes the signature's
    nrefs of them) and "reuse" (with a previous run, its counts:
    pipeline.reuse.REUSE_COUNTS).

    A scored batch is plain tuples: the stages after it spill them (the report, the
    per-document table: pipeline.beam.spill) or combine them where they are made
    (statistics, significance, counts), so what they shuffle is places and small
    partial sums, never an element per pair."""

    def __init__(self, profiles: list[Profile], progress_seconds: float, human: str = ""):
        super().__init__()
        self.profiles, self.progress_seconds, self.human = profiles, progress_seconds, human

    def expand(self, groups):
        fn = ScoreDocumentFn(self.profiles, self.progress_seconds, self.human)
        scored = groups | "Score" >> beam.ParDo(fn).with_outputs(
            ERRORS, HUMAN, TEXT_CHECKS, REFERENCE_COUNTS, REUSE_COUNTS, main="documents"
        )
        return {"human": scored[HUMAN], "documents": batched(scored.documents), "errors": scored[ERRORS],
                "text_checks": scored[TEXT_CHECKS], "references": scored[REFERENCE_COUNTS], "reuse": scored[REUSE_COUNTS]}
