"""`rouge-pipeline compare OLD_RUN NEW_RUN`: its options, what it prints and
publishes, and its exit status (the comparison itself: pipeline/compare.py)."""

from __future__ import annotations

import argparse
import os
import sys

from pipeline.compare import EXIT_DROP, EXIT_NOT_COMPARABLE, EXIT_OK, EXIT_USAGE, ResultFolder, UsageError, compare_runs, settings_differences
from pipeline.io import files
from pipeline.io.publish import publish_files
from pipeline.io.tables import COMPARISON_COLUMNS, MOVED_COLUMNS, names, read_parquet_rows, read_system_rows, table_files
from rouge_core.types import MEASURES
from pipeline.render.compare import markdown_report, moved_markdown, signed
from pipeline.render.html import Section, render_report
from rouge_core.errors import RougeConfigError
from rouge_core.significance import check_replicates


def output_is_empty(path: str) -> bool:
    if files.is_url(path):
        return not files.match(files.join(path, "*"))
    return not os.path.exists(path) or (os.path.isdir(path) and not os.listdir(path))


def publish(output: str, rows: list[dict], moved: list[dict], markdown: str, new=None, note: str = "") -> None:
    """comparison.{parquet,csv,md}, moved_documents.{parquet,csv,md} and report.html (the
    new run's report with the comparison as its first sections), published whole."""
    contents = {
        **table_files(rows, COMPARISON_COLUMNS, markdown, "comparison"),
        **table_files(moved, MOVED_COLUMNS, moved_markdown(moved), "moved_documents"),
    }
    if new is not None:
        contents["report.html"] = comparison_report(new, rows, moved, note).encode("utf-8")
    publish_files(output, contents)


def comparison_report(new, rows: list[dict], moved: list[dict], note: str) -> str:
    """report.html: the new run's page, headed by what changed since the old run."""
    columns = [c for c in names(COMPARISON_COLUMNS) if c in (rows[0] if rows else {})] or None
    sections = [
        Section("Changes since the previous run", note=note, rows=rows, columns=columns),
        Section("Documents that moved most", rows=moved[:100]),
    ]
    significance_path = files.join(new.path, "significance.parquet")
    significance = read_parquet_rows(significance_path) if files.exists(significance_path) else []
    errors = (new.record.get("counts") or {}).get("errors_by_reason") or {}
    return render_report(read_system_rows(new.path), significance, errors, new.record, sections)


EPILOG = """\
exit status:
  0  no significant drop of more than --fail-on-drop points
  1  a significant drop (Holm-adjusted p < 0.05) of more than --fail-on-drop points
  2  usage error: a folder is missing or not a result folder, or --output is not empty
  3  not comparable: the runs' signatures differ (the differing settings are named)

example (nightly, after tonight's run):
  rouge-pipeline run --config configs/nightly.toml --output /results/today && \\
    rouge-pipeline compare /results/yesterday /results/today --fail-on-drop 0.5
"""


def compare_command(args: argparse.Namespace, extra: list[str]) -> int:
    try:
        check_replicates(args.replicates)
        if not 0 < args.confidence < 100:
            raise RougeConfigError(f"--confidence must be between 0 and 100, got {args.confidence}")
        if args.fail_on_drop < 0:
            raise RougeConfigError(f"--fail-on-drop must be at least 0 points, got {args.fail_on_drop}")
        if args.output and not output_is_empty(args.output):
            raise UsageError(f"output folder {args.output} exists and is not empty; choose another --output")
        old = ResultFolder(args.old_run, args.measure)
        new = ResultFolder(args.new_run, args.measure)
    except (UsageError, RougeConfigError) as err:
        print(f"rouge-pipeline compare: error: {err}", file=sys.stderr)
        return EXIT_USAGE

    differences = settings_differences(old.signature, new.signature)
    if differences:
        print("not comparable: the runs were scored with different settings:")
        for key, before, after in differences:
            print(
                f"  {key}: {before if before is not None else '(absent)'} (old) -> "
                f"{after if after is not None else '(absent)'} (new)"
            )
        print(f"old signature: {old.signature}\nnew signature: {new.signature}")
        return EXIT_NOT_COMPARABLE

    rows, moved = compare_runs(
        old,
        new,
        measure=args.measure,
        fail_on_drop=args.fail_on_drop,
        replicates=args.replicates,
        seed=args.seed,
        confidence=args.confidence,
    )
    options = (
        f"Measure: {args.measure}; change = new - old on the documents both runs scored, with its "
        f"{args.confidence:g}% bootstrap interval; p adjusted: approximate randomization "
        f"({args.replicates} sign flips, seed {args.seed}), Holm across the {sum(r['status'] == 'both' for r in rows)} "
        f"comparisons; fail on a significant drop of more than {args.fail_on_drop:g} points."
    )
    if args.output:
        publish(args.output, rows, moved, markdown_report(old, new, rows, moved, options), new, options)
    print(markdown_report(old, new, rows, moved, options, all_moved=False))
    failing = [r for r in rows if r["fails"]]
    changed = [r for r in rows if r["verdict"] in ("better", "worse")]
    if failing:
        print(
            f"FAIL: significant drop of more than {args.fail_on_drop:g} points: "
            + ", ".join(f"{r['system']} {r['metric']} {signed(r['delta_points'])}" for r in failing)
        )
        return EXIT_DROP
    print(
        f"OK: no significant drop of more than {args.fail_on_drop:g} points"
        + (f" ({len(changed)} significant change(s))" if changed else "; no significant change")
    )
    if args.output:
        print(f"results: {args.output}")
    return EXIT_OK


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
        help="write comparison.{parquet,csv,md} and "
        "moved_documents.{parquet,csv,md} here (must not exist or be empty)",
    )
    parser.add_argument(
        "--fail-on-drop",
        type=float,
        default=0.0,
        metavar="POINTS",
        help="exit 1 when a score drops significantly by more than this many points "
        "(x 100 scale; default 0: any significant drop)",
    )
    parser.add_argument("--measure", choices=MEASURES, default="f_measure", help="default: f_measure")
    parser.add_argument(
        "--replicates",
        type=int,
        default=10_000,
        help="bootstrap replicates and sign flips, at most 100,000 (default 10,000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the counter-based draws (default 0)")
    parser.add_argument(
        "--confidence", type=float, default=95.0, help="of the interval, percent (default 95)"
    )
    parser.set_defaults(handler=compare_command)
    return parser
