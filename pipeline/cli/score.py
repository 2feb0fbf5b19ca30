"""`rouge-pipeline score`: its options, and what it prints."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter

from pipeline import config as run_config
from pipeline.cli.common import PYROUGE_DEFAULTS, add_rouge_options, print_signature
from pipeline.coverage import (
    DEFAULT_MAX_REJECTED,
    EXIT_REJECTED,
    document_sets_warning,
    rejected_warning,
    text_warnings,
)
from pipeline.io.names import clashes, describe_clashes, shown
from pipeline.io.tables import csv_text
from pipeline.io.text_files import line_aligned_rows
from pipeline.render import tables as views
from pipeline.score import LocalScores, StrictStop, score_files, score_rows, system_rows
from rouge_core import RougeConfigError, RougeInputError, render_report
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

exit status: 0 when every row was scored or few were rejected; 1 for an error
(nothing scored, a usage error, --strict on a bad row); 3 when more rows were
rejected than --max-rejected allows (default 1% of all rows, or of any one
system's documents): everything that could be scored is still printed, headed
by a warning.  The table's docs column reads scored/had per system.

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
    score.add_argument("--config", help="a run configuration (TOML, as for run): its [input] fields and "
                       "policies, [rouge] and [statistics]; options given here override it")
    policies = score.add_argument_group("rejected rows")
    policies.add_argument(
        "--conflicting-references", choices=["reject", "keep"],
        help="joined form, rows of one doc_id with different references: reject them all (the default, "
        'input.conflicting_references = "error") or keep each row\'s own references (a system released '
        "with its own copy of the references, e.g. SimCLS on CNN/DM)",
    )
    policies.add_argument(
        "--max-rejected", type=float, metavar="SHARE",
        help=f"exit with status {EXIT_REJECTED} (after printing everything) when more than this share of the "
        f"rows, or of any one system's documents, was rejected (default: run.max_rejected, {DEFAULT_MAX_REJECTED})",
    )
    score.add_argument("--strict", action="store_true", help="stop at the first bad row (exit 1)")
    score.add_argument("--verbose", action="store_true", help="show tracebacks")
    add_rouge_options(score)
    score.set_defaults(rouge_args=None, eval_ids=None, handler=lambda args, extra: score_command(args))
    return score


def score_configuration(args: argparse.Namespace) -> run_config.RunConfig:
    """The run configuration `score` reads: --config's (or the defaults, with
    pyrouge's flags), and the options given on the command line over it."""
    config = run_config.load_config(args.config)
    if config.profiles:
        raise RougeConfigError(f"{config.source} has [profiles]: score takes one setting ([rouge]); use run for profiles")
    if args.config is None:
        config = run_config.with_overrides(config, rouge_args=PYROUGE_DEFAULTS)
    policy = {"reject": "error", "keep": "keep", None: None}[args.conflicting_references]
    config = run_config.with_overrides(
        config,
        input_conflicting_references=policy,
        rouge_args=args.rouge_args,
        rouge_preset=args.preset,
        rouge_rouge_types=tuple(t for t in args.rouge_types.split(",") if t) if args.rouge_types else None,
        rouge_stem=args.stem,
        rouge_language=args.language,
        rouge_multi_reference=args.multi_ref,
        rouge_sentence_split=args.sentence_split,
        rouge_eval_ids=args.eval_ids,
        run_max_rejected=args.max_rejected,
    )
    # Check what score uses ([input] needs no candidates here: they come from the command line).
    dataclasses.replace(config, input=dataclasses.replace(config.input, candidates=("-",))).validate()
    return config


def score_command(args: argparse.Namespace) -> int:
    run = score_configuration(args)
    settings = run.settings()
    inputs = tuple(args.input) or (() if args.candidates else run.input.candidates)
    config = dataclasses.replace(run.input, candidates=inputs, references=tuple(args.references or run.input.references))
    keep = config.conflicting_references == "keep"
    if args.candidates and args.input:
        raise RougeInputError("give either INPUT files or --candidates with --references, not both")
    if not args.candidates and not inputs:
        raise RougeInputError("nothing to score: give INPUT files, '-' for stdin, or --candidates and --references")
    progress = _progress_bar()
    try:
        if args.candidates:
            rows = line_aligned_rows(args.candidates, args.references or [], args.system, args.sentence_sep, config)
            scores = score_rows(rows, [], config, settings, keep_conflicts=keep, strict=args.strict, progress=progress)
        else:
            scores = score_files(list(inputs), list(config.references), config, settings, keep_conflicts=keep,
                                 strict=args.strict, progress=progress)
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
    ids = evaluation_ids((d for docs in scores.results.values() for d in docs), run.rouge.eval_ids)
    coverage = scores.coverage()
    for line in text_warnings(scores.texts.to_dict()) + document_sets_warning(
        coverage.different_document_sets(), coverage.documents
    ):
        print(line, file=sys.stderr)
    problems = coverage.problems(run.run.max_rejected)
    by_reason = dict(Counter(e.reason for e in scores.errors))
    warning = rejected_warning(problems, run.run.max_rejected, "The first rejected rows are listed on stderr.",
                               by_reason) if problems else ""
    if warning:  # the table a person reads starts with it; machine formats keep stdout clean
        print(warning + ("\n" if form == "table" else ""), file=sys.stdout if form == "table" else sys.stderr)
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
        had = {s: coverage.had(s) for s in coverage.systems()}
        rows = system_rows(scores.results, settings, ids, run.statistics, had)
        if form == "csv":
            sys.stdout.write(csv_text(rows))
        else:
            sys.stdout.write(views.text(rows, settings, views.MEASURES[args.measure], args.sort))
    print_signature(settings)
    return EXIT_REJECTED if problems else 0


def _progress_bar():
    """A progress bar on a terminal (tqdm); nothing when stderr is a file or a pipe."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(unit=" summaries", desc="scoring", file=sys.stderr, leave=False)
