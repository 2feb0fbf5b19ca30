"""`rouge-pipeline score`: score on this machine, without Beam, through the same
reader, validation and document rules as `run` (pipeline.read, pipeline.documents),
so both count and report every bad row the same way."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

from pipeline import tables, views
from pipeline.cli_common import PYROUGE_DEFAULTS, add_rouge_options, print_signature, settings_from_args
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
from pipeline.records import ErrorRecord
from pipeline.text_input import line_aligned_rows
from rouge_core import RougeInputError, RougeScorer, RougeSettings, render_report
from rouge_core.report import evaluation_ids, printed_averages
from rouge_core.resampling import SCORE_UNITS, to_units


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


def _rows(paths: list[str], config: InputConfig):
    """Every row of the files, as `run` reads them: `SourceRow` or `ErrorRecord`."""
    fields = used_fields(config)
    for path in paths:
        yield from iter_rows(path, config, fields)


def _readable(rows, scores: LocalScores, strict: bool):
    """The rows that could be read; every row is counted (as the pipeline counts:
    not a file-level error) and an unreadable one reported."""
    for row in rows:
        if isinstance(row, ErrorRecord):
            scores.rows_read += row.reason not in FILE_LEVEL_REASONS
            _report(row, scores, strict)
        else:
            scores.rows_read += 1
            yield row


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
    progress=None,
) -> LocalScores:
    """Read, validate, group and score, exactly as the pipeline does, in this process.
    A glob that matches nothing is a usage error, as in `run`; '-' is stdin."""
    candidate_files, missing, _ = expand_globs(c for c in candidates if c != "-")
    reference_files, missing_refs, _ = expand_globs(references)
    if missing + missing_refs:
        raise RougeInputError("; ".join(e.message for e in missing + missing_refs))
    if "-" in candidates:
        candidate_files.append("-")
    return score_rows(
        _rows(candidate_files, config),
        _rows(reference_files, config),
        config,
        settings,
        joined=not reference_files,
        keep_conflicts=keep_conflicts,
        strict=strict,
        progress=progress,
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
    progress=None,
) -> LocalScores:
    """Parse, group by doc_id and score rows (`SourceRow`, or `ErrorRecord` for a row
    that could not be read), with the pipeline's rules (pipeline.documents)."""
    scores = LocalScores()
    pattern = re.compile(config.system_from_path) if config.system_from_path else None
    by_doc: dict[str, tuple[list, list]] = {}
    for row in _readable(candidate_rows, scores, strict):
        parsed = parse_candidate(row, config, joined, pattern)
        if isinstance(parsed, ErrorRecord):
            _report(parsed, scores, strict)
        else:
            by_doc.setdefault(parsed.doc_id, ([], []))[0].append(parsed)
    for row in _readable(reference_rows, scores, strict):
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
            if progress is not None:
                progress.update(len(out.candidates))
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




EPILOG = f"""\
examples:
  rouge-pipeline score summaries.jsonl
      ROUGE-1..4, L, W-1.2, S*, SU* with stemming: pyrouge's defaults,
      "{PYROUGE_DEFAULTS}", which most papers report.
  rouge-pipeline score --candidates cand.txt --references ref.txt [ref2.txt ...]
      line-aligned text files (files2rouge, rouge-score): line n of every file is
      document n; several reference files give several references.
  rouge-pipeline score 'outputs/*.parquet' --references 'refs/*.jsonl' --format csv
      split form, as `run` reads it; every system's table as CSV.
  cat summaries.jsonl | rouge-pipeline score - --format report
      the ROUGE-1.5.5 report, byte-identical to the official script's with -a.
  rouge-pipeline score summaries.jsonl --rouge-args "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -d"
      DUC/TAC style ROUGE-2 and ROUGE-SU4, with per-document lines.
  rouge-pipeline score summaries.jsonl --eval-ids index
      number documents 1..N in sorted doc_id order, as pyrouge does: the printed
      averages are bootstrap means whose digits depend on that order.

formats (--format): table (the default on a terminal): systems as rows, metrics
as columns, x 100 with intervals; report (the default otherwise): the ROUGE-1.5.5
text; csv: one row per (system, metric), every number; jsonl: one object per
(system, doc_id, metric) with recall, precision and f_measure at full precision.

input: JSON Lines (.jsonl, .jsonl.gz), Parquet, or '-' for JSON Lines on stdin,
one object per (system, document):
  {{"system": "lead3", "doc_id": "d1", "candidate": "First sentence.\\nSecond.",
   "references": ["A reference.", ["Another", "as a list of sentences."]]}}
"""


def register(commands) -> argparse.ArgumentParser:
    score = commands.add_parser(
        "score",
        help="score files on this machine (no Beam) and print a table or the ROUGE-1.5.5 report",
        description="Score summaries on this machine, without Beam, through the same reader and\n"
        "rules as `run`, and print a table, the ROUGE-1.5.5 report, CSV or JSON Lines.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument(
        "input", nargs="*", metavar="INPUT",
        help="files or globs: JSONL, .jsonl.gz or Parquet (joined form, or candidates with "
        "--references); '-' reads JSON Lines from stdin",
    )
    inputs = score.add_argument_group("line-aligned text files")
    inputs.add_argument("--candidates", metavar="FILE", help="one candidate summary per line")
    score.add_argument(
        "--references", nargs="+", action="extend", metavar="FILE",
        help="reference files: globs of split-form files, or with --candidates, line-aligned text files",
    )
    inputs.add_argument("--sentence-sep", metavar="STR", help="split each line into sentences at STR, e.g. '<q>'")
    inputs.add_argument("--system", default="system", help="the system name for --candidates (default: system)")
    out = score.add_argument_group("output")
    out.add_argument("--format", choices=["table", "report", "csv", "jsonl"], help="see below")
    out.add_argument("--measure", choices=["f", "r", "p"], default="f", help="the table's measure (default F)")
    out.add_argument("--sort", metavar="METRIC", help="rank the table's systems by this metric (default: the first)")
    score.add_argument("--strict", action="store_true", help="stop at the first bad row (exit 1)")
    score.add_argument("--verbose", action="store_true", help="show tracebacks")
    add_rouge_options(score)
    score.set_defaults(handler=lambda args, extra: score_command(args))
    return score


def score_command(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    config = InputConfig(candidates=tuple(args.input), references=tuple(args.references or ()))
    if args.candidates and args.input:
        raise RougeInputError("give either INPUT files or --candidates with --references, not both")
    if not args.candidates and not args.input:
        raise RougeInputError("nothing to score: give INPUT files, '-' for stdin, or --candidates and --references")
    progress = _progress_bar()
    try:
        if args.candidates:
            rows = line_aligned_rows(args.candidates, args.references or [], args.system, args.sentence_sep, config)
            scores = score_rows(rows, [], config, settings, strict=args.strict, progress=progress)
        else:
            scores = score_files(args.input, args.references or [], config, settings, strict=args.strict, progress=progress)
    except StrictStop as err:
        print(f"rouge-pipeline: error: strict mode: {err}", file=sys.stderr)
        return 1
    finally:
        if progress is not None:
            progress.close()
    if scores.errors:
        print_errors(scores)
    if not scores.scored:
        print("rouge-pipeline: error: nothing was scored", file=sys.stderr)
        return 1
    form = args.format or ("table" if sys.stdout.isatty() else "report")
    ids = evaluation_ids((d for docs in scores.results.values() for d in docs), args.eval_ids)
    if form == "report":
        results = {s: {ids[d]: stats for d, stats in docs.items()} for s, docs in scores.results.items()}
        sys.stdout.write(render_report(results, settings))
    elif form == "jsonl":
        for system in sorted(scores.results):
            for doc_id, metrics in sorted(scores.results[system].items()):
                for tag, s in metrics.items():
                    record = {"system": system, "doc_id": doc_id, "metric": tag, "recall": s.recall,
                              "precision": s.precision, "f_measure": s.f_measure}
                    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        rows = system_rows(scores.results, settings, ids)
        if form == "csv":
            sys.stdout.write(tables.csv_text(rows))
        else:
            sys.stdout.write(views.text(rows, settings, views.MEASURES[args.measure], args.sort))
    print_signature(settings)
    return 0


def system_rows(results: dict, settings: RougeSettings, ids: dict) -> list[dict]:
    """The per-system table's rows, as the pipeline computes them: order-free means
    and ROUGE-1.5.5's printed averages with their intervals."""
    rows = []
    for system in sorted(results):
        docs = results[system]
        for tag in settings.metric_tags():
            by_eval_id = {ids[d]: metrics[tag] for d, metrics in docs.items() if tag in metrics}
            if not by_eval_id:
                continue
            row = {"system": system, "metric": tag, "documents": len(by_eval_id)}
            averages = printed_averages(system, by_eval_id, settings) if settings.preset == "rouge155" else None
            for name, interval in zip(("recall", "precision", "f_measure"), averages or [(None,) * 3] * 3):
                units = sum(to_units(getattr(s, name)) for s in by_eval_id.values())
                row[name] = units / (len(by_eval_id) * SCORE_UNITS)
                row[f"rouge155_{name}"], row[f"rouge155_{name}_low"], row[f"rouge155_{name}_high"] = (
                    None if v is None else float(v) for v in interval
                )
            rows.append(row)
    return rows


def _progress_bar():
    """A progress bar on a terminal (tqdm); nothing when stderr is a file or a pipe."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(unit=" summaries", desc="scoring", file=sys.stderr, leave=False)
