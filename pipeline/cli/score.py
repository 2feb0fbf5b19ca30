"""`rouge-pipeline score`: its options, and what it prints."""

from __future__ import annotations

import argparse
import json
import sys

from pipeline.cli.common import PYROUGE_DEFAULTS, add_rouge_options, print_signature, settings_from_args
from pipeline.config import InputConfig
from pipeline.io.names import clashes, describe_clashes, shown
from pipeline.io.tables import csv_text
from pipeline.io.text_files import line_aligned_rows
from pipeline.render import tables as views
from pipeline.score import LocalScores, StrictStop, score_files, score_rows, system_rows
from rouge_core import RougeInputError, render_report
from rouge_core.report import evaluation_ids


def print_errors(scores: LocalScores, limit: int = 10, file=sys.stderr) -> None:
    """The counts, then the first bad rows with where they are and why."""
    print(scores.summary(), file=file)
    for error in scores.errors[:limit]:
        where = error.source + (f":{error.position}" if error.position is not None else "")
        print(f"  {shown(where)}: {error.reason}: {shown(error.message)}", file=file)
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
    groups = clashes(scores.results)
    if groups:  # two systems that print alike would be two rows a reader cannot tell apart
        raise RougeInputError(describe_clashes("systems", groups))
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
            sys.stdout.write(csv_text(rows))
        else:
            sys.stdout.write(views.text(rows, settings, views.MEASURES[args.measure], args.sort))
    print_signature(settings)
    return 0


def _progress_bar():
    """A progress bar on a terminal (tqdm); nothing when stderr is a file or a pipe."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(unit=" summaries", desc="scoring", file=sys.stderr, leave=False)
