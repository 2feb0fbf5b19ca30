"""`rouge-pipeline meta-eval`: its options, and what it prints and publishes."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import Optional

from pipeline.cli.common import STORE_OPTIONS_HELP, apply_store_options, takes_store_options
from pipeline.io import files
from pipeline.io.publish import output_taken
from pipeline.io.publish_url import publish_files
from pipeline.io.tables import csv_text, parquet_bytes
from pipeline.meta_eval import (
    COLUMNS,
    COMPARISON_COLUMNS,
    check_copies,
    check_systems,
    split_list,
    comparison_rows,
    correlation_rows,
    duplicate_systems,
    load_judgments,
    load_metric_scores,
    scored_metric,
    select_metrics,
    typed_columns,
)
from pipeline.progress import Progress
from pipeline.render.meta_eval import comparisons_markdown, human_upper_bound, markdown, report_html
from rouge_core import RougeConfigError, RougeInputError, __version__
from rouge_core import correlation as corr

EPILOG = """\
examples:
  rouge-pipeline meta-eval --run out/summeval --judgments human.jsonl.gz --output out/summeval-meta
      every metric of the run against every numeric column of the judgments.
  rouge-pipeline meta-eval --metric-scores scores.parquet --judgments human.jsonl.gz \\
      --judgment-columns litepyramid_recall --alpha 0.05 --duplicate-system ext/bart_out=bart_out_ext
      the REALSumm notebook: its duplicated system, per-document taus with p <= 0.05.
  rouge-pipeline meta-eval --run out/summeval --judgments human.jsonl.gz --compare ROUGE-2,ROUGE-1
      also test whether ROUGE-2 correlates better than ROUGE-1 (comparisons.csv).

inputs (JSONL, JSONL.gz or Parquet), keyed by system and doc_id:
  --run DIR            a result folder: per_document/*.parquet (system, doc_id, metric,
                       recall, precision, f_measure[, profile]).
  --metric-scores F    long (system, doc_id, metric, recall/precision/f_measure or score
                       [, profile]) or wide (system, doc_id, one numeric column per metric,
                       measure "score").
  --judgments F        system, doc_id and one or more numeric judgment columns.
A (system, doc_id) missing from either table, or whose value is null or NaN, is left out
of both (counted in meta_eval.json).  At the summary level a document whose scores are
constant over the systems has no correlation: it is left out and counted (`undefined`),
or counted as 0 with --undefined zero.

outputs: correlations.parquet and .csv (one row per profile, level, metric, measure,
judgment: the four coefficients, their bootstrap intervals and the counts),
correlations.md (Lin 2004 Table 1's shape: metrics as rows, profiles as columns),
meta_eval.json (inputs, options, counts); with --compare X,Y also comparisons.parquet and
.csv: delta = r(X) - r(Y) and the one-sided permutation p-value of "X correlates better"
(Deutsch et al. 2021's PERM tests, swapping the two metrics' standardized scores per
cell, system or document); report.html: all of it as a page for people (with the settings):
first the metrics ranked per judgment (the best marked) and a chart of the correlations
with their intervals.  Without --output every correlation, with its interval, and every
comparison is printed as Markdown, and nothing is saved.  While it works, stderr shows
each stage (correlations with bootstrap, permutation tests, report) with its total, rate
and time left (--quiet: nothing).

exit status: 0 done; 2 refused before any work (a usage error, an unreadable or
empty input, --output not empty: one line on stderr, nothing on stdout); 1 any
other failure.

""" + STORE_OPTIONS_HELP + "\n"


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


def _pairs(values: Optional[list[str]]) -> list[tuple[str, str]]:
    pairs = []
    for value in values or []:
        names = [part.strip() for part in value.split(",")]
        if len(names) != 2 or not all(names) or names[0] == names[1]:
            raise RougeConfigError(f"--compare takes two different metrics X,Y; got {value!r}")
        pairs.append(tuple(names))
    return pairs


def _copies(values: Optional[list[str]]) -> list[tuple[str, str]]:
    copies = []
    for value in values or []:
        source, sep, copy = value.partition("=")
        if not sep or not source or not copy:
            raise RougeConfigError(f"--duplicate-system takes SYSTEM=COPY; got {value!r}")
        copies.append((source, copy))
    return copies


MAX_REPLICATES = 100_000
MAX_SEED = (1 << 63) - 1


def check_options(args: argparse.Namespace) -> None:
    """Every numeric option in its range; NaN and infinities refused."""
    if not 0 <= args.replicates <= MAX_REPLICATES:
        raise RougeConfigError(f"--replicates must be from 0 (no intervals) to {MAX_REPLICATES:,}; got {args.replicates}")
    if not 0 <= args.seed <= MAX_SEED:
        raise RougeConfigError(f"--seed must be a whole number from 0 to {MAX_SEED:,}; got {args.seed}")
    if not (math.isfinite(args.confidence) and 0 < args.confidence < 100):
        raise RougeConfigError(f"--confidence must be a number between 0 and 100 (exclusive); got {args.confidence}")
    if args.alpha is not None and not (math.isfinite(args.alpha) and 0 < args.alpha <= 1):
        raise RougeConfigError(f"--alpha must be a number in (0, 1]; got {args.alpha}")


def meta_eval_command(args: argparse.Namespace, extra=None) -> int:
    started = time.time()
    options = args
    options.levels = split_list(args.levels) or list(corr.LEVELS)
    for level in options.levels:
        if level not in corr.LEVELS:
            raise RougeConfigError(f"--levels: {level!r} is not one of {corr.LEVELS}")
    check_options(args)
    apply_store_options(extra or [])
    taken = output_taken(args.output) if args.output else ""
    if taken:
        raise RougeConfigError(f"output folder {args.output} {taken}; choose another --output")
    pairs = _pairs(args.compare)
    if pairs and not args.replicates:
        raise RougeConfigError("--compare needs --replicates > 0 (the permutations)")
    judged, judgments = load_judgments(args.judgments, split_list(args.judgment_columns))
    scores, source = load_metric_scores(args.run, args.metric_scores, split_list(args.metric_columns), judgments)
    wanted = split_list(args.metrics)
    if wanted:
        scores = select_metrics(scores, wanted)
    pairs = [tuple(scored_metric(scores, name, "--compare") for name in pair) for pair in pairs]
    for (x, y), given in zip(pairs, args.compare or []):
        if x == y:
            raise RougeConfigError(f"--compare takes two different metrics X,Y; {given!r} names {x} twice")
    copies = _copies(args.duplicate_system)
    check_systems(judged, scores, args.judgments)
    check_copies(copies, judged, scores)
    duplicate_systems(judged, copies)
    for series in scores.values():
        duplicate_systems(series, copies)
    if not scores:
        raise RougeInputError("no metric scores to correlate")
    if not args.output and not args.quiet:
        print("rouge-pipeline: meta-eval without --output: every correlation and interval is printed, nothing is "
              "saved (--output DIR writes correlations.csv and report.html)", file=sys.stderr)
    progress = Progress(quiet=args.quiet)
    what = "correlations with bootstrap" if args.replicates else "correlations"
    with progress.stage(what, len(scores) * len(judgments) * len(options.levels), "series") as stage:
        rows = correlation_rows(scores, judged, judgments, options, step=stage.update)
    comparisons = []
    if pairs:
        tests = len({(p, m) for p, _, m in scores}) * len(pairs) * len(judgments) * len(options.levels)
        with progress.stage("permutation tests", tests, "tests") as stage:
            comparisons = comparison_rows(scores, judged, judgments, pairs, options, step=stage.update)
    if not rows or all(r["cells"] == 0 for r in rows):
        raise RougeInputError("no (system, doc_id) has both a metric score and a judgment")
    matched = {k for s in scores.values() for k in s if k in judged}
    record = {
        "inputs": dict(source, judgments=os.path.abspath(args.judgments)),
        "judgments": judgments,
        "options": {
            "levels": options.levels,
            "resample": args.resample,
            "replicates": args.replicates,
            "seed": args.seed,
            "confidence": args.confidence,
            "alpha": args.alpha,
            "undefined": args.undefined,
            "duplicate_systems": [f"{a}={b}" for a, b in copies],
            "metrics": wanted,
            "compare": [f"{a},{b}" for a, b in pairs],
            "permutation_unit": args.permutation_unit if pairs else None,
        },
        "counts": {
            "judged_pairs": len(judged),
            "matched_pairs": len(matched),
            "judged_pairs_without_scores": len(set(judged) - matched),
            "scored_pairs_without_judgments": len({k for s in scores.values() for k in s} - set(judged)),
            "series": len(scores),
        },
        "version": __version__,
        "seconds": round(time.time() - started, 3),
    }
    text = markdown(rows, options)
    if args.output:
        human = human_upper_bound(scores, judged, source.get("human"))
        with progress.stage("report", 1, "pages") as stage:
            page = report_html(rows, comparisons, record, human)
            stage.update(1)
        published = publish_files(
            args.output,
            {
                "correlations.parquet": parquet_bytes(rows, typed_columns(COLUMNS)),
                "correlations.csv": csv_text(rows, list(COLUMNS), None).encode("utf-8"),
                **(
                    {
                        "comparisons.parquet": parquet_bytes(comparisons, typed_columns(COMPARISON_COLUMNS)),
                        "comparisons.csv": csv_text(comparisons, COMPARISON_COLUMNS, None).encode("utf-8"),
                    }
                    if pairs
                    else {}
                ),
                "correlations.md": text.encode("utf-8"),
                "meta_eval.json": (json.dumps(record, indent=1) + "\n").encode("utf-8"),
                "report.html": page.encode("utf-8"),
            },
        )
        sys.stdout.write(text)
        print(f"results: {published} (report: {files.join(published, 'report.html')})")
    else:
        sys.stdout.write(markdown(rows, options, intervals=bool(args.replicates), saved=False))
        if comparisons:
            sys.stdout.write("\n" + comparisons_markdown(comparisons))
    counts = record["counts"]
    if counts["judged_pairs_without_scores"]:
        print(
            f"warning: {counts['judged_pairs_without_scores']} judged (system, doc_id) pairs "
            "have no metric score",
            file=sys.stderr,
        )
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    """Add the `meta-eval` command to the CLI's subparsers."""
    parser = subparsers.add_parser(
        "meta-eval",
        help="correlate metric scores with human judgments (system and summary level)",
        description="Correlate every metric's per-summary scores with human judgments: system-level and\n"
        "summary-level Pearson, Spearman, Kendall tau-b and tau-c, with bootstrap intervals\n"
        "over documents, systems or both (Deutsch, Dror and Roth 2021).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", metavar="RUN_DIR", help="a rouge-pipeline result folder")
    source.add_argument("--metric-scores", metavar="FILE", help="a long or wide table of per-summary scores")
    parser.add_argument(
        "--judgments", required=True, metavar="FILE", help="human judgments per (system, doc_id)"
    )
    parser.add_argument(
        "--judgment-columns", metavar="A,B", help="judgment columns (default: every numeric one)"
    )
    parser.add_argument(
        "--metric-columns",
        metavar="A,B",
        help="wide --metric-scores: metric columns (default: every numeric non-judgment one)",
    )
    parser.add_argument("--metrics", metavar="A,B", help="only these metrics (e.g. ROUGE-1,ROUGE-2,ROUGE-L)")
    parser.add_argument("--output", metavar="DIR", help="result folder (must not exist or be empty); without it "
                        "every correlation and interval is printed and nothing is saved")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    stats = parser.add_argument_group("statistics")
    stats.add_argument("--levels", default="system,summary", help="system, summary or both (default)")
    stats.add_argument(
        "--resample",
        choices=corr.RESAMPLING,
        default="both",
        help="bootstrap over documents, systems or both (default, Deutsch et al.'s BOOT-BOTH)",
    )
    stats.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates (0: no intervals)")
    stats.add_argument("--seed", type=int, default=0, help="seed of the counter-based draws")
    stats.add_argument("--confidence", type=float, default=95.0, help="interval level in percent")
    stats.add_argument(
        "--alpha",
        type=float,
        help="summary level: average only per-document correlations with p <= ALPHA (REALSumm)",
    )
    stats.add_argument(
        "--undefined",
        choices=("exclude", "zero"),
        default="exclude",
        help="summary level: documents whose correlation is undefined (constant scores) are "
        "excluded and counted (default) or counted as 0",
    )
    stats.add_argument(
        "--duplicate-system",
        action="append",
        metavar="SYSTEM=COPY",
        help="count SYSTEM twice, the copy named COPY (the REALSumm notebook's bart_out); repeatable",
    )
    stats.add_argument(
        "--compare",
        action="append",
        metavar="X,Y",
        help="permutation test: does metric X correlate better than metric Y? (repeatable; "
        "uses --replicates and --seed)",
    )
    stats.add_argument(
        "--permutation-unit",
        choices=corr.PERMUTATION_UNITS,
        default="both",
        help="swap X's and Y's scores per cell (both, the default), per system or per document",
    )
    takes_store_options(parser)
    parser.set_defaults(handler=meta_eval_command)
    return parser
