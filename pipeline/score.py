"""`rouge-pipeline score`: score on this machine, without Beam, through the same
reader, validation and document rules as `run` (pipeline.read, pipeline.documents),
so both count and report every bad row the same way."""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

from pipeline.config import InputConfig
from pipeline.documents import DocumentGroup, resolve_document
from pipeline.read import (
    FILE_LEVEL_REASONS,
    expand_globs,
    iter_rows,
    parse_candidate,
    parse_reference,
    used_fields,
)
from pipeline.records import ErrorRecord, SourceRow
from rouge_core import RougeInputError, RougeScorer, RougeSettings


@dataclass
class LocalScores:
    """What `score` found: per system, per doc_id, the scores; and every bad row.
    `rows_read` counts reference rows too, as the pipeline's run record does."""

    results: dict = field(default_factory=dict)  # system -> doc_id -> {metric tag: MetricStats}
    errors: list = field(default_factory=list)  # ErrorRecord
    rows_read: int = 0

    @property
    def scored(self) -> int:
        return sum(len(docs) for docs in self.results.values())

    def summary(self) -> str:
        by_reason = Counter(e.reason for e in self.errors)
        return f"rows read {self.rows_read}, scored {self.scored}, errors {len(self.errors)}" + "".join(
            f"\n  {reason}: {n}" for reason, n in sorted(by_reason.items())
        )


class StrictStop(Exception):
    """--strict: the first bad row stops `score`."""

    def __init__(self, error: ErrorRecord):
        where = error.source + (f":{error.position}" if error.position is not None else "")
        super().__init__(f"{where}: {error.reason}: {error.message}")


def _rows(paths: list[str], config: InputConfig, scores: LocalScores, strict: bool):
    fields = used_fields(config)
    for path in paths:
        for item in iter_rows(path, config, fields):
            if isinstance(item, SourceRow):
                scores.rows_read += 1
                yield item
            else:
                scores.rows_read += item.reason not in FILE_LEVEL_REASONS
                _report(item, scores, strict)


def _report(error: ErrorRecord, scores: LocalScores, strict: bool) -> None:
    if strict:
        raise StrictStop(error)
    scores.errors.append(error)


def score_files(
    candidates: list[str],
    references: list[str],
    config: InputConfig,
    settings: RougeSettings,
    *,
    keep_conflicts: bool = False,
    strict: bool = False,
) -> LocalScores:
    """Read, validate, group and score, exactly as the pipeline does, in this process."""
    scores = LocalScores()
    candidate_files, missing = expand_globs(candidates)
    reference_files, missing_refs = expand_globs(references)
    for error in missing + missing_refs:
        _report(error, scores, strict)
    joined = not reference_files
    pattern = re.compile(config.system_from_path) if config.system_from_path else None
    by_doc: dict[str, tuple[list, list]] = {}
    for row in _rows(candidate_files, config, scores, strict):
        parsed = parse_candidate(row, config, joined, pattern)
        if isinstance(parsed, ErrorRecord):
            _report(parsed, scores, strict)
        else:
            by_doc.setdefault(parsed.doc_id, ([], []))[0].append(parsed)
    for row in _rows(reference_files, config, scores, strict):
        parsed = parse_reference(row, config)
        if isinstance(parsed, ErrorRecord):
            _report(parsed, scores, strict)
        elif parsed.doc_id in by_doc:
            by_doc[parsed.doc_id][1].append(parsed)
    scorer = RougeScorer(settings)
    for doc_id in sorted(by_doc):
        doc_candidates, doc_references = by_doc.pop(doc_id)
        for out in resolve_document(doc_id, doc_candidates, doc_references, keep_conflicts):
            if isinstance(out, ErrorRecord):
                _report(out, scores, strict)
                continue
            _score_group(out, scorer, scores, strict)
    return scores


def _score_group(group: DocumentGroup, scorer: RougeScorer, scores: LocalScores, strict: bool) -> None:
    for c, references in group.candidates:
        try:
            result = scorer.score(candidate=c.text, references=references)
        except RougeInputError as err:
            _report(ErrorRecord(c.system, c.doc_id, c.source, c.position, err.reason, str(err)), scores, strict)
            continue
        except Exception as err:  # the last resort of row isolation, as in the pipeline
            message = f"unexpected {type(err).__name__} while scoring: {str(err)[:300]!r}"
            _report(ErrorRecord(c.system, c.doc_id, c.source, c.position, "internal_error", message), scores, strict)
            continue
        scores.results.setdefault(c.system, {})[c.doc_id] = result


def print_errors(scores: LocalScores, limit: int = 10, file=sys.stderr) -> None:
    """The counts, then the first bad rows with where they are and why."""
    print(scores.summary(), file=file)
    for error in scores.errors[:limit]:
        where = error.source + (f":{error.position}" if error.position is not None else "")
        print(f"  {where}: {error.reason}: {error.message}", file=file)
    if len(scores.errors) > limit:
        print(f"  ... and {len(scores.errors) - limit} more", file=file)


def input_config(args: argparse.Namespace) -> InputConfig:
    return InputConfig(candidates=tuple(args.input), references=tuple(args.references or ()))
