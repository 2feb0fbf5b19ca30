"""`rouge-pipeline history RUN... --output DIR`: its options, what it prints and
publishes (the history itself: pipeline/history.py; its page:
pipeline/render/history.py)."""

from __future__ import annotations

import argparse
import math
import sys

from pipeline.cli import one_line
from pipeline.cli.common import STORE_OPTIONS_HELP, apply_store_options, measure_name, takes_store_options
from pipeline.compare import EXIT_OK, EXIT_USAGE, UsageError
from pipeline.history import HISTORY_COLUMNS, csv_bytes, history_table, last_changes, read_runs, signature_groups
from pipeline.io.names import shown
from pipeline.io.publish import output_taken
from pipeline.io.publish_url import publish_files
from pipeline.io.tables import parquet_bytes
from pipeline.progress import Progress
from pipeline.render.history import history_page
from pipeline.render.numbers import in_points
from pipeline.render.html import confidence_level
from rouge_core.errors import RougeConfigError, RougeInputError

EPILOG = """\
writes to --output (published whole; it must not exist or be empty):
  history.csv      every run's system_scores.csv, row by row, after the run's id and
                   start time: each value as that run wrote it
  history.parquet  the same from each run's system_scores.parquet
  report.html      per group of runs with one signature: a chart per metric of every
                   system's score across the runs with its interval, each system's
                   last significant change marked (compare's paired test on the
                   documents two consecutive runs share), and those changes listed

Runs whose signatures differ are never joined by a line: consecutive runs of one
signature form a group, and each group names the settings that differ from the
group before it.

exit status: 0 written; 2 a folder missing, incomplete or changed since its run
wrote it (named), --output not empty, or any other failure.

example (nightly, after tonight's run; results/ holds one folder per night):
  rouge-pipeline history results/2026-11-* --by-start --output results/history

""" + STORE_OPTIONS_HELP + "\n"


def check_options(args: argparse.Namespace) -> None:
    if not (math.isfinite(args.confidence) and 0 < args.confidence < 100):
        raise RougeConfigError(f"--confidence must be a number between 0 and 100 (exclusive), got {args.confidence}")


def history_command(args: argparse.Namespace, extra: list[str]) -> int:
    """Any failure is exit 2, in one line."""
    try:
        apply_store_options(extra)
        return _history_command(args)
    except (UsageError, RougeConfigError, RougeInputError) as err:
        print(f"rouge-pipeline history: error: {shown(str(err))}", file=sys.stderr)
    except Exception as err:  # a folder that breaks the history in a way not checked above
        print(f"rouge-pipeline history: error: {shown(one_line(err))}", file=sys.stderr)
    return EXIT_USAGE


def _history_command(args: argparse.Namespace) -> int:
    check_options(args)
    taken = output_taken(args.output)
    if taken:  # (said before the runs are read)
        raise UsageError(f"output folder {args.output} {taken}; choose another --output")
    progress = Progress(quiet=args.quiet)
    with progress.stage("reading runs", len(args.runs), "runs") as stage:
        runs = read_runs(args.runs, by_start=args.by_start)
        stage.update(len(runs))
    header, cells, rows = history_table(runs)
    groups = signature_groups(runs)
    pairs = sum(max(0, len(g.runs) - 1) for g in groups)
    with progress.stage("paired tests", pairs, "pairs of runs") as stage:
        changes = [last_changes(g, args.measure, args.confidence, on_pair=lambda: None) for g in groups]
        stage.update(pairs)
    options = (
        f"Measure: {args.measure}; a significant change: compare's paired sign-flip test (exact up to 20 documents, "
        f"Student's t beyond) between two consecutive runs of a group on the documents both scored, Holm-adjusted "
        f"p below 0.05 across the (system, metric) pairs of the two runs; intervals {args.confidence:g}% for the "
        "change, and each run's own for its scores."
    )
    page = history_page(groups, changes, args.measure, options, confidence_level(runs[-1].signature))
    publish_files(args.output, {
        "history.csv": csv_bytes(header, cells),
        "history.parquet": parquet_bytes(rows, HISTORY_COLUMNS),
        "report.html": page.encode("utf-8"),
    })
    for number, group in enumerate(groups, 1):
        differs = "" if not group.differences else "; other settings: " + ", ".join(
            f"{key} {before} -> {after}" for key, before, after in group.differences)
        print(f"group {number}: {len(group.runs)} run(s){differs}")
        for (system, metric), change in sorted(changes[number - 1].items()):
            run = group.runs[change["run"]]
            print(f"  {system} {metric}: {change['verdict']} ({in_points(change['delta_points'])} points) in run "
                  f"{run.run_id} ({run.started})")
    print(f"history: {args.output} ({len(runs)} run{'s' * (len(runs) != 1)}, {len(rows)} rows)")
    return EXIT_OK


def register(subparsers) -> argparse.ArgumentParser:
    """Add the `history` command to the CLI's subparsers."""
    parser = subparsers.add_parser(
        "history",
        help="a benchmark across result folders: one table, a chart per metric, each system's last significant change",
        description="A benchmark's results across runs: every run's system_scores in one table, and a page\n"
        "with a chart per metric of every system's score across the runs and its last significant change.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="result folders (local or URLs), oldest first")
    parser.add_argument("--output", required=True, metavar="DIR", help="where history.{csv,parquet} and report.html go")
    parser.add_argument("--by-start", action="store_true", help="order the runs by their start time, not as given")
    parser.add_argument("--measure", type=measure_name, default="f_measure", metavar="{F,R,P}",
                        help="F (f_measure, the default), R (recall) or P (precision), any case")
    parser.add_argument("--confidence", type=float, default=95.0, help="of the change's interval, percent (default 95)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    takes_store_options(parser)
    parser.set_defaults(handler=history_command)
    return parser
