"""Scoring on this machine, without Beam (`rouge-pipeline score`), through the same
reader, validation and document rules as `run` (pipeline.io.rows,
pipeline.documents), so both count and report every bad row the same way."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from pipeline.config import DEFAULT_PROFILE, InputConfig, Profile, StatisticsConfig
from pipeline.coverage import REFERENCES, AlikeErrors, Coverage, TextTally
from pipeline.documents import DocumentGroup, document_key, resolve_document, share_references, split_lookalikes
from pipeline.io.patterns import system_from_path
from pipeline.io.rows import (
    FILE_LEVEL_REASONS,
    expand_globs,
    iter_rows,
    parse_candidate,
    parse_reference,
    used_fields,
)
from pipeline.io.row_counts import count_all
from pipeline.progress import Progress
from pipeline.records import ErrorRecord
from rouge_core import MetricStats, RougeInputError, RougeScorer, RougeSettings
from pipeline.summaries import report_block, table_rows
from rouge_core.aggregate import SystemSums, stats_array, stats_bytes
from rouge_core.textcheck import TextCheck


KEPT_ERRORS = 10  # kinds of error rows `score` keeps (and prints); the others are counted


@dataclass
class LocalScores:
    """What `score` found: per system, per doc_id, the scores; the bad rows counted
    (by reason, and by system), the first KEPT_ERRORS kinds of them kept (2,000,000
    bad lines cost counters, not 2,000,000 records).  `rows_read` counts reference
    rows too, as the pipeline's run record does."""

    # system -> doc_id -> its statistics as `stats_bytes` packs them (every metric tag of
    # the settings, in order; `metric_stats` unpacks them)
    results: dict = field(default_factory=dict)
    errors: AlikeErrors = field(default_factory=lambda: AlikeErrors(KEPT_ERRORS))  # the first KEPT_ERRORS kinds
    error_count: int = 0
    by_reason: Counter = field(default_factory=Counter)
    rejected: int = 0  # row errors, as `run` counts rejected rows (not file-level, not duplicate_reference)
    rejected_by_system: Counter = field(default_factory=Counter)
    rows_read: int = 0
    texts: TextTally = field(default_factory=TextTally)  # texts the settings read badly
    reference_counts: set = field(default_factory=set)  # the numbers of references a scored candidate had

    def add_error(self, error: ErrorRecord) -> None:
        self.error_count += 1
        self.by_reason[error.reason] += 1
        if error.reason not in FILE_LEVEL_REASONS and error.reason != "duplicate_reference":
            self.rejected += 1
            if error.system is not None:
                self.rejected_by_system[error.system] += 1
        self.errors.add(error)

    @property
    def scored(self) -> int:
        return sum(len(docs) for docs in self.results.values())

    def references(self) -> tuple[int, int] | None:
        """The fewest and the most references a scored candidate had (None: none scored)."""
        return (min(self.reference_counts), max(self.reference_counts)) if self.reference_counts else None

    def coverage(self) -> Coverage:
        """Rows and documents rejected, per system, as `run` counts them."""
        return Coverage(
            rows=self.rows_read,
            rejected=self.rejected,
            scored={system: len(docs) for system, docs in self.results.items()},
            rejected_by_system=dict(self.rejected_by_system),
            documents=len({d for docs in self.results.values() for d in docs}),
        )

    def summary(self) -> str:
        return f"rows read {self.rows_read}, scored {self.scored}, errors {self.error_count}" + "".join(
            f"\n  {reason}: {n}" for reason, n in sorted(self.by_reason.items())
        )


class StrictStop(Exception):
    """--strict: the first bad row stops `score`."""

    def __init__(self, error: ErrorRecord):
        where = error.source + (f":{error.position}" if error.position is not None else "")
        super().__init__(f"{where}: {error.reason}: {error.message}")


def _rows(paths: list[str], config: InputConfig):
    """Every row of the files, as `run` reads them: `SourceRow` or `ErrorRecord`."""
    fields = used_fields(config)
    for path in paths:
        yield from iter_rows(path, config, fields)


def _readable(rows, scores: LocalScores, strict: bool, stage):
    """The rows that could be read; every row is counted (as the pipeline counts:
    not a file-level error) and an unreadable one reported."""
    for row in rows:
        stage.update(1)
        if isinstance(row, ErrorRecord):
            scores.rows_read += row.reason not in FILE_LEVEL_REASONS
            _report(row, scores, strict)
        else:
            scores.rows_read += 1
            yield row


def _report(error: ErrorRecord, scores: LocalScores, strict: bool) -> None:
    if strict:
        raise StrictStop(error)
    scores.add_error(error)


def score_files(
    candidates: list[str],
    references: list[str],
    config: InputConfig,
    settings: RougeSettings,
    *,
    keep_conflicts: bool = False,
    strict: bool = False,
    progress: Optional[Progress] = None,
) -> LocalScores:
    """Read, validate, group and score, exactly as the pipeline does, in this process.
    A glob that matches nothing is a usage error, as in `run`; '-' is stdin.
    `progress` shows reading (of the files' rows, counted ahead) and scoring."""
    candidate_files, missing, _ = expand_globs(c for c in candidates if c != "-")
    reference_files, missing_refs, _ = expand_globs(references)
    if missing + missing_refs:
        raise RougeInputError("; ".join(e.message for e in missing + missing_refs))
    if "-" in candidates:
        candidate_files.append("-")
    pattern = system_from_path(config.system_from_path)
    if pattern is not None:  # (a pattern that backtracks is refused before anything is read)
        pattern.check("<stdin>" if path == "-" else path for path in candidate_files)
    shown = progress is not None and not progress.quiet
    return score_rows(
        _rows(candidate_files, config),
        _rows(reference_files, config),
        config,
        settings,
        joined=not reference_files,
        keep_conflicts=keep_conflicts,
        strict=strict,
        progress=progress,
        rows_total=count_all(candidate_files + reference_files) if shown else None,
    )


def score_rows(
    candidate_rows,
    reference_rows,
    config: InputConfig,
    settings: RougeSettings,
    *,
    joined: bool = True,
    keep_conflicts: bool = False,
    strict: bool = False,
    progress: Optional[Progress] = None,
    rows_total: Optional[int] = None,
) -> LocalScores:
    """Parse, group by doc_id and score rows (`SourceRow`, or `ErrorRecord` for a row
    that could not be read), with the pipeline's rules (pipeline.documents).
    `progress` shows the stages reading (of `rows_total` rows) and scoring."""
    progress = progress or Progress(quiet=True)
    scores = LocalScores()
    pattern = system_from_path(config.system_from_path)
    by_doc: dict[str, tuple[list, list]] = {}
    with progress.stage("reading", rows_total, "rows") as stage:
        for row in _readable(candidate_rows, scores, strict, stage):
            parsed = parse_candidate(row, config, joined, pattern)
            if isinstance(parsed, ErrorRecord):
                _report(parsed, scores, strict)
            else:
                held = by_doc.setdefault(document_key(parsed.doc_id), ([], []))[0]
                held.append(share_references(held[0], parsed) if held else parsed)  # (equal references: one copy)
        for row in _readable(reference_rows, scores, strict, stage):
            parsed = parse_reference(row, config)
            if isinstance(parsed, ErrorRecord):
                _report(parsed, scores, strict)
            elif document_key(parsed.doc_id) in by_doc:
                by_doc[document_key(parsed.doc_id)][1].append(parsed)
    scorer = RougeScorer(settings)
    check = TextCheck(settings)
    with progress.stage("scoring", sum(len(c) for c, _ in by_doc.values()), "summaries") as stage:
        for key in sorted(by_doc):
            errors, documents = split_lookalikes(*by_doc.pop(key))
            for error in errors:
                _report(error, scores, strict)
                stage.update(1)
            for doc_id, doc_candidates, doc_references in documents:
                if not doc_candidates:
                    continue
                for out in resolve_document(doc_id, doc_candidates, doc_references, keep_conflicts):
                    if isinstance(out, ErrorRecord):
                        _report(out, scores, strict)
                        stage.update(1)
                        continue
                    _score_group(out, scorer, scores, strict)
                    check_texts(out, check, scores.texts)
                    stage.update(len(out.candidates))
    return scores


def _score_group(group: DocumentGroup, scorer: RougeScorer, scores: LocalScores, strict: bool) -> None:
    """A document's candidates in one batch (one call into the compiled kernel,
    the references read once), as `run` scores them (pipeline.beam.documents)."""
    pairs = [(c.text, references) for c, references in group.candidates]
    for (c, references), result in zip(group.candidates, score_values(scorer, pairs)):
        if isinstance(result, RougeInputError):
            _report(ErrorRecord(c.system, c.doc_id, c.source, c.position, result.reason, str(result)), scores, strict)
        elif isinstance(result, Exception):  # the last resort of row isolation, as in the pipeline
            message = f"unexpected {type(result).__name__} while scoring: {str(result)[:300]!r}"
            _report(ErrorRecord(c.system, c.doc_id, c.source, c.position, "internal_error", message), scores, strict)
        else:
            scores.results.setdefault(c.system, {})[c.doc_id] = result
            scores.reference_counts.add(len(references))


def score_values(scorer: RougeScorer, pairs: list) -> list:
    """Each pair's values (`stats_bytes`) or its error, in one call into the scorer
    (the compiled kernel when built, which packs the values itself); `score` and
    the pipeline's scoring DoFn both score through it."""
    try:
        return scorer.score_batch_values(pairs)
    except Exception:  # an unexpected failure: one by one, so it stays with its row
        return [_score_one(scorer, text, references) for text, references in pairs]


def _score_one(scorer: RougeScorer, text, references):
    try:
        return stats_bytes(scorer.score(candidate=text, references=references), scorer.tags)
    except Exception as err:  # RougeInputError with its reason, or the last resort
        return err


def metric_stats(values: bytes, tags) -> dict:
    """A pair's packed statistics (`LocalScores.results`) as {metric tag: MetricStats}."""
    return {tag: MetricStats._make(row) for tag, row in zip(tags, stats_array(values).tolist())}


def check_texts(group: DocumentGroup, check: TextCheck, tally: TextTally) -> None:
    """Tally the group's texts that the settings read badly (rouge_core.textcheck):
    each candidate under its system, each distinct reference list once, under
    REFERENCES.  `run` tallies the same way (pipeline.beam.documents)."""
    for kind, owner, doc_id in group_text_problems(group, check):
        tally.add(owner, kind, doc_id)


def group_text_problems(group: DocumentGroup, check: TextCheck):
    """(kind, owner, doc_id) for each problem text of a document group."""
    seen = set()
    for c, references in group.candidates:
        for kind in check(c.text):
            yield kind, c.system, group.doc_id
        key = id(references)
        if key in seen:
            continue
        seen.add(key)
        for reference in references:
            for kind in check(reference):
                yield kind, REFERENCES, group.doc_id


def system_rows(
    results: dict, settings: RougeSettings, ids: dict, statistics: StatisticsConfig | None = None,
    had: dict | None = None, facts: dict | None = None,
) -> list[dict]:
    """The per-system table's rows (`results`: LocalScores.results), computed as `run` computes them: each system's
    documents through the same accumulator (`rouge_core.aggregate.SystemSums`,
    the Beam CombineFn's) and the same summaries (`pipeline.summaries`), so `score`
    and `run` print and write the same columns and digits; plus `documents_had`
    (scored plus rejected documents) when `had` gives it.  `facts`: what the run
    adds to the signature (`RunConfig.facts`)."""
    statistics = statistics or StatisticsConfig()
    profile = Profile(DEFAULT_PROFILE, (settings,))
    rows = []
    for system in sorted(results):
        sums = SystemSums(statistics.bootstrap_replicates, statistics.jackknife_buckets)
        documents = {}  # the printed averages need the documents; the accumulator keeps none
        for doc_id, values in sorted(results[system].items()):
            sums.add(doc_id, values, statistics.bootstrap_seed)
            documents[ids[doc_id]] = values
        sums.flush(statistics.bootstrap_seed)
        averages, _ = report_block(system, documents, profile, lines=False)
        metrics = [sums.metric(m) for m in range(sums.metrics)]
        for *_, row in table_rows(profile.name, system, metrics, profile, averages, facts or {}):
            if had is not None:
                row["documents_had"] = had.get(system, row["documents"])
            rows.append(row)
    return rows
