"""`rouge-pipeline compare OLD_RUN NEW_RUN`: its options, what it prints and
publishes, and its exit status (the comparison itself: pipeline/compare.py)."""

from __future__ import annotations

import argparse
import math
import sys

from pipeline.compare import EXIT_DROP, EXIT_NOT_COMPARABLE, EXIT_OK, EXIT_USAGE, ComparedRun, UsageError, compare_runs, settings_differences
from pipeline.cli import one_line
from pipeline.cli.common import STORE_OPTIONS_HELP, apply_store_options, measure_name, takes_store_options
from pipeline.io import files
from pipeline.io.document_texts import find_texts, input_files
from pipeline.io.names import clashes, describe_clashes, shown
from pipeline.io.publish import output_taken
from pipeline.io.publish_url import publish_files
from pipeline.io.tables import COMPARISON_COLUMNS, MOVED_COLUMNS, table_files
from pipeline.progress import Progress
from pipeline.render.compare import markdown_report, moved_markdown, page_context, terminal_text, verdict
from pipeline.render.html import render_comparison_page
from rouge_core.errors import RougeConfigError, RougeInputError


def publish(output: str, rows: list[dict], moved: list[dict], markdown: str, page: str | None = None) -> None:
    """comparison.{parquet,csv,md}, moved_documents.{parquet,csv,md} and report.html
    (the comparison's own page, `page`), published whole."""
    contents = {
        **table_files(rows, COMPARISON_COLUMNS, markdown, "comparison"),
        **table_files(moved, MOVED_COLUMNS, moved_markdown(moved), "moved_documents"),
    }
    if page is not None:
        contents["report.html"] = page.encode("utf-8")
    publish_files(output, contents)


def comparison_page(old, new, rows: list[dict], moved: list[dict], options: str, fail_on_drop: float,
                    progress: Progress) -> str:
    """report.html: the verdict, the changes by size, the documents that moved most
    with both runs' candidate texts (read back from the runs' inputs) and the reference."""
    context = page_context(old, new, rows, moved, options, fail_on_drop, {}, {})
    wanted = {(d["system"], d["doc_id"]) for d in context["documents"]}
    texts = []
    if wanted:
        runs = [(run.record, input_files(run.record)) for run in (old, new)]
        with progress.stage("texts", sum(len(c) + len(r) for _, (c, r) in runs), "files") as stage:
            texts = [find_texts(record, wanted, on_file=stage.update) for record, _ in runs]
    if texts:
        context = page_context(old, new, rows, moved, options, fail_on_drop, *texts)
    return render_comparison_page(context)


EPILOG = """\
prints: the verdict first (OK or FAIL, what the exit status says), then only the
(system, metric) pairs that changed, in the runs' metric order (--all: every pair),
systems added and removed, and the documents that moved most.  --output DIR also
writes report.html, the comparison for people (verdict banner, changes by size,
moved documents with their texts, links to both runs' reports).

exit status:
  0  no significant drop of more than --fail-on-drop points
  1  a significant drop (Holm-adjusted p < 0.05) of more than --fail-on-drop points
  2  the runs could not be compared: a folder is missing, not a result folder or holds
     a value that is not a score (the file, row and column are named), an option is out
     of range, --output is not empty, or any other failure
  3  not comparable: the runs' signatures differ (the differing settings are named)

example (nightly, after tonight's run):
  rouge-pipeline run --config configs/nightly.toml --output /results/today && \\
    rouge-pipeline compare /results/yesterday /results/today --fail-on-drop 0.5

""" + STORE_OPTIONS_HELP + "\n"


def check_options(args: argparse.Namespace) -> None:
    """Every numeric option in its range (NaN and infinities refused)."""
    if not (math.isfinite(args.confidence) and 0 < args.confidence < 100):
        raise RougeConfigError(f"--confidence must be a number between 0 and 100 (exclusive), got {args.confidence}")
    if not (math.isfinite(args.fail_on_drop) and 0 <= args.fail_on_drop <= 100):
        raise RougeConfigError(f"--fail-on-drop must be a number of points from 0 to 100, got {args.fail_on_drop}")


def compare_command(args: argparse.Namespace, extra: list[str]) -> int:
    """Exit 1 means only "a significant drop": any failure to compare is 2, in one line."""
    try:
        return _compare_command(args, extra)
    except (UsageError, RougeConfigError, RougeInputError) as err:
        print(f"rouge-pipeline compare: error: {shown(str(err))}", file=sys.stderr)
    except Exception as err:  # a folder that breaks the comparison in a way not checked above
        print(f"rouge-pipeline compare: error: {shown(one_line(err))}", file=sys.stderr)
    return EXIT_USAGE


def _compare_command(args: argparse.Namespace, extra: list[str]) -> int:
    try:
        check_options(args)
        apply_store_options(extra)
        taken = output_taken(args.output) if args.output else ""
        if taken:
            raise UsageError(f"output folder {args.output} {taken}; choose another --output")
        with Progress(quiet=args.quiet).stage("reading runs", 2, "runs") as stage:  # per-document tables: seconds
            old = ComparedRun(args.old_run, args.measure)
            stage.update(1)
            new = ComparedRun(args.new_run, args.measure)
            stage.update(1)
        doc_ids = {d for run in (old, new) for by_doc in run.scores.values() for d in by_doc}
        for what, names in (("systems", {k[0] for k in old.scores} | {k[0] for k in new.scores}),
                            ("metrics", {k[1] for k in old.scores} | {k[1] for k in new.scores}),
                            ("doc_ids", doc_ids)):  # two spellings of one document would never be paired
            groups = clashes(names)
            if groups:
                raise UsageError(f"{args.old_run} and {args.new_run}: {describe_clashes(what, groups)}")
    except (UsageError, RougeConfigError) as err:
        print(f"rouge-pipeline compare: error: {shown(str(err))}", file=sys.stderr)
        return EXIT_USAGE

    differences = settings_differences(old.signature, new.signature)
    if differences:
        print("not comparable: the runs were scored with different settings:")
        for key, before, after in differences:  # (read from the folders: escaped, never raw on the terminal)
            print(
                f"  {shown(key)}: {shown(before) if before is not None else '(absent)'} (old) -> "
                f"{shown(after) if after is not None else '(absent)'} (new)"
            )
        print(f"old signature: {shown(old.signature)}\nnew signature: {shown(new.signature)}")
        return EXIT_NOT_COMPARABLE

    progress = Progress(quiet=args.quiet)
    pairs = len(old.scores.keys() | new.scores.keys())
    with progress.stage("paired tests", pairs, "(system, metric) pairs") as stage:
        rows, moved = compare_runs(
            old,
            new,
            measure=args.measure,
            fail_on_drop=args.fail_on_drop,
            confidence=args.confidence,
            on_pair=stage.update,
        )
    compared = sum(r["status"] == "both" for r in rows)
    floor = min((r["p_floor"] for r in rows if r["p_floor"] is not None), default=None)
    options = (
        f"Measure: {args.measure}; change = new - old on the documents both runs scored, with its "
        f"{args.confidence:g}% t interval; p: paired sign-flip test (exact up to 20 documents, Student's t "
        f"beyond); p adjusted: Holm across the {compared} comparisons"
        + ("" if floor is None else f" (the smallest p these documents allow is {floor:.2g}, "
           f"{min(1.0, compared * floor):.2g} adjusted)")
        + f"; fail on a significant drop of more than {args.fail_on_drop:g} points."
    )
    if args.output:
        page = comparison_page(old, new, rows, moved, options, args.fail_on_drop, progress)
        with progress.stage("report", 1, "pages") as stage:
            publish(args.output, rows, moved, markdown_report(old, new, rows, moved, options), page)
            stage.update(1)
    sys.stdout.write(terminal_text(old, new, rows, moved, options, args.fail_on_drop, show_all=args.all))
    if args.output:
        print(f"results: {args.output} (report: {files.join(args.output, 'report.html')})")
    status, _ = verdict(rows, args.fail_on_drop)
    return EXIT_DROP if status else EXIT_OK


def register(subparsers) -> argparse.ArgumentParser:
    """Add the `compare` command to the CLI's subparsers."""
    parser = subparsers.add_parser(
        "compare",
        help="compare two result folders: deltas, significance, an exit status for schedulers",
        description="Compare two runs' result folders: per (system, metric) the old and new scores,\n"
        "the change on the documents both runs scored with a paired significance test,\n"
        "systems added or removed, and the documents that moved most.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "old_run", metavar="OLD_RUN", help="the earlier result folder (local or a Beam filesystem URL)"
    )
    parser.add_argument("new_run", metavar="NEW_RUN", help="the later result folder")
    parser.add_argument(
        "--output",
        metavar="DIR",
        help="write report.html (the comparison for people: the verdict first), comparison.{parquet,csv,md} "
        "and moved_documents.{parquet,csv,md} here (must not exist or be empty)",
    )
    parser.add_argument(
        "--fail-on-drop",
        type=float,
        default=0.0,
        metavar="POINTS",
        help="exit 1 when a score drops significantly by more than this many points "
        "(x 100 scale; default 0: any significant drop)",
    )
    parser.add_argument("--measure", type=measure_name, default="f_measure", metavar="{F,R,P}",
                        help="F (f_measure, the default), R (recall) or P (precision), any case")
    parser.add_argument(
        "--confidence", type=float, default=95.0, help="of the interval, percent (default 95)"
    )
    parser.add_argument("--all", action="store_true",
                        help="list every (system, metric), not only what changed")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    takes_store_options(parser)
    parser.set_defaults(handler=compare_command)
    return parser
