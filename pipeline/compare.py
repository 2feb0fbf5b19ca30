"""`rouge-pipeline compare OLD_RUN NEW_RUN`: what changed between two result folders.

For every (system, metric) of either run: the old and new mean of a measure,
and on the documents both runs scored a paired test of new against old
(`rouge_core.significance`: bootstrap interval of the change, approximate
randomization p-value, Holm-adjusted across all the (system, metric) pairs
compared, since one exit status answers for all of them); systems added or
removed; the documents whose scores moved most.  Runs with different
signatures are not comparable: the differing settings are named and nothing
else is computed.

Exit status: 0 no significant drop beyond --fail-on-drop points; 1 a
significant (Holm-adjusted p < 0.05) drop of more than --fail-on-drop points;
2 usage error (a folder missing or not a result folder, an existing output);
3 the runs are not comparable (signatures differ).

Result folders are read through Beam's FileSystems, so OLD_RUN and NEW_RUN may
be local paths or gs://, s3://, hdfs:// URLs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
import uuid
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from pipeline.config import DEFAULT_PROFILE
from pipeline.significance import MEASURES, as_points, format_p
from pipeline.tables import _markdown_cell, write_table
from rouge_core.errors import RougeConfigError
from rouge_core.resampling import SCORE_UNITS, to_units
from rouge_core.significance import check_replicates, holm, paired_sums, paired_test

EXIT_OK, EXIT_DROP, EXIT_USAGE, EXIT_NOT_COMPARABLE = 0, 1, 2, 3
LEVEL = 0.05  # a drop counts when its Holm-adjusted p-value is below this
MOVED = 10  # documents listed per (system, metric)

COMPARISON_SCHEMA = pa.schema(
    [
        ("system", pa.string()),
        ("metric", pa.string()),
        ("measure", pa.string()),
        ("status", pa.string()),  # both, added, removed
        ("old_documents", pa.int64()),
        ("new_documents", pa.int64()),
        ("documents", pa.int64()),  # scored by both runs: the paired test's
        ("old", pa.float64()),  # mean over the old run's documents (0-1)
        ("new", pa.float64()),  # mean over the new run's documents (0-1)
        ("delta_points", pa.float64()),  # 100 x (new - old) on the shared documents
        ("ci_low_points", pa.float64()),
        ("ci_high_points", pa.float64()),
        ("p_bootstrap", pa.float64()),
        ("p_permutation", pa.float64()),
        ("p_adjusted", pa.float64()),  # Holm across every row with status "both"
        ("verdict", pa.string()),  # better, worse, no significant change, added, removed
        ("fails", pa.bool_()),  # worse by more than --fail-on-drop points
    ]
)
MOVED_SCHEMA = pa.schema(
    [
        ("system", pa.string()),
        ("metric", pa.string()),
        ("measure", pa.string()),
        ("doc_id", pa.string()),
        ("old", pa.float64()),
        ("new", pa.float64()),
        ("delta_points", pa.float64()),
    ]
)


class UsageError(Exception):
    """A folder is missing or not a result folder, or the output exists (exit 2)."""


# ------------------------------------------------------------------ reading


class ResultFolder:
    """The run record and one measure of the per-document scores of a result folder."""

    def __init__(self, path: str, measure: str):
        self.path = path.rstrip("/") or path
        if not FileSystems.exists(self.path):
            raise UsageError(f"{path}: no such result folder")
        run_json = FileSystems.join(self.path, "run.json")
        if not FileSystems.exists(run_json):
            raise UsageError(f"{path}: not a result folder (no run.json; was the run finished?)")
        with FileSystems.open(run_json) as fh:
            try:
                self.record = json.loads(fh.read().decode("utf-8"))
            except ValueError as err:
                raise UsageError(f"{run_json}: not valid JSON ({err})") from err
        self.signature = self.record.get("signature")
        if not isinstance(self.signature, str):
            raise UsageError(f"{run_json}: no signature")
        shards = FileSystems.match([FileSystems.join(self.path, "per_document", "*.parquet")])[
            0
        ].metadata_list
        if not shards:
            raise UsageError(f"{path}: not a result folder (no per_document/*.parquet)")
        # (system, metric) -> {doc_id: score}; a run with profiles names its metrics
        # "<profile> <metric>" (the default profile: the metric alone)
        self.scores: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
        for shard in sorted(m.path for m in shards):
            with FileSystems.open(shard, compression_type="uncompressed") as fh:
                try:
                    shard_file = pq.ParquetFile(io.BytesIO(fh.read()))
                    wanted = ["system", "doc_id", "metric", measure]
                    table = shard_file.read(columns=wanted + ["profile"] * ("profile" in shard_file.schema_arrow.names))
                    columns = [table.column(name).to_pylist() for name in ("system", "doc_id", "metric", measure)]
                except (pa.ArrowException, KeyError) as err:
                    raise UsageError(f"{shard}: not a per-document table ({err})") from err
            profiles = table.column("profile").to_pylist() if "profile" in table.column_names else [None] * len(table)
            for profile, system, doc_id, metric, value in zip(profiles, *columns):
                label = metric if profile in (None, DEFAULT_PROFILE) else f"{profile} {metric}"
                self.scores[system, label][doc_id] = value


def settings_differences(old: str, new: str) -> list[tuple[str, str | None, str | None]]:
    """The fields of two `|`-separated `key:value` signatures that differ, as
    (key, old value, new value); a field without a key is named by its position
    ("preset" for the first).

    Example:
        >>> settings_differences("rouge155|n:2|stem:no|v:0.1.0", "rouge155|n:4|stem:no|v:0.1.0")
        [('n', '2', '4')]
    """

    def fields(signature: str) -> dict[str, str]:
        out = {}
        for i, field in enumerate(signature.split("|")):
            key, sep, value = field.partition(":")
            if not sep:
                key, value = ("preset" if i == 0 else f"field {i + 1}"), field
            out[key] = value
        return out

    a, b = fields(old), fields(new)
    keys = list(a) + [k for k in b if k not in a]
    return [(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)]


# ------------------------------------------------------------------ comparing


def _mean(values) -> float:
    """The exact mean of five-decimal scores, as the pipeline's SystemCombineFn forms it."""
    values = list(values)
    return sum(to_units(v) for v in values) / (len(values) * SCORE_UNITS)


def compare_runs(
    old: ResultFolder,
    new: ResultFolder,
    *,
    measure: str,
    fail_on_drop: float,
    replicates: int,
    seed: int,
    confidence: float,
) -> tuple[list[dict], list[dict]]:
    """(comparison rows, most-moved document rows), sorted by system and metric."""
    rows, moved = [], []
    by_documents = defaultdict(list)  # shared doc_ids -> [(row, new scores, old scores)]
    for system, metric in sorted(old.scores.keys() | new.scores.keys()):
        before, after = old.scores.get((system, metric), {}), new.scores.get((system, metric), {})
        row = {
            "system": system,
            "metric": metric,
            "measure": measure,
            "status": "both" if before and after else "removed" if before else "added",
            "old_documents": len(before),
            "new_documents": len(after),
            "documents": 0,
            "old": _mean(before.values()) if before else None,
            "new": _mean(after.values()) if after else None,
        }
        row.update(
            dict.fromkeys(
                [
                    "delta_points",
                    "ci_low_points",
                    "ci_high_points",
                    "p_bootstrap",
                    "p_permutation",
                    "p_adjusted",
                ]
            )
        )
        rows.append(row)
        shared = tuple(sorted(before.keys() & after.keys()))
        if shared:
            by_documents[shared].append((row, after, before))
            change = {d: to_units(after[d]) - to_units(before[d]) for d in shared}
            largest = sorted(shared, key=lambda d: (-abs(change[d]), d))[:MOVED]
            moved += [
                {
                    "system": system,
                    "metric": metric,
                    "measure": measure,
                    "doc_id": d,
                    "old": before[d],
                    "new": after[d],
                    "delta_points": 100 * change[d] / SCORE_UNITS,
                }
                for d in largest
                if change[d]
            ]
    # The weights and signs of a document are drawn once for every comparison over the same documents.
    for shared, tests in by_documents.items():
        columns = [
            ([to_units(after[d]) for d in shared], [to_units(before[d]) for d in shared])
            for _, after, before in tests
        ]
        for (row, _, _), sums in zip(tests, paired_sums(list(shared), columns, replicates, seed)):
            result = paired_test(sums, confidence)
            row.update(
                documents=result.documents,
                delta_points=100 * result.difference,
                ci_low_points=None if result.ci_low is None else 100 * result.ci_low,
                ci_high_points=None if result.ci_high is None else 100 * result.ci_high,
                p_bootstrap=result.p_bootstrap,
                p_permutation=result.p_permutation,
            )
    tested = [r for r in rows if r["p_permutation"] is not None]
    for row, p in zip(tested, holm(r["p_permutation"] for r in tested)):
        row["p_adjusted"] = p
    for row in rows:
        if row["status"] != "both":
            row["verdict"] = row["status"]
        elif row["p_adjusted"] is not None and row["p_adjusted"] < LEVEL and row["delta_points"] != 0:
            row["verdict"] = "better" if row["delta_points"] > 0 else "worse"
        else:
            row["verdict"] = "no significant change"
        row["fails"] = row["verdict"] == "worse" and -row["delta_points"] > fail_on_drop
    return rows, moved


# ------------------------------------------------------------------ reporting


def _signed(x: float | None) -> str:
    return "" if x is None else f"{x:+.2f}"


def markdown_report(
    old: ResultFolder,
    new: ResultFolder,
    rows: list[dict],
    moved: list[dict],
    options: str,
    all_moved: bool = True,
) -> str:
    """The comparison for people: scores x 100, the change with its interval."""
    lines = [
        f"Old: `{old.path}`  ",
        f"New: `{new.path}`  ",
        f"Signature: `{new.signature}`  ",
        options,
        "",
        "| system | metric | old | new | change (CI) | docs | p adjusted | verdict |",
        "|---|---|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        change = _signed(r["delta_points"])
        if r["ci_low_points"] is not None:
            change += f" ({_signed(r['ci_low_points'])} to {_signed(r['ci_high_points'])})"
        verdict = r["verdict"] + (" **FAIL**" if r["fails"] else "")
        lines.append(
            f"| {_markdown_cell(r['system'])} | {r['metric']} | {as_points(r['old'])} | {as_points(r['new'])} | "
            f"{change} | {r['documents']} | {format_p(r['p_adjusted'])} | {verdict} |"
        )
    for status, label in (("added", "Systems added"), ("removed", "Systems removed")):
        systems = sorted({r["system"] for r in rows if r["status"] == status})
        if systems:
            lines += ["", f"{label}: " + ", ".join(_markdown_cell(s) for s in systems)]
    partial = {}
    for r in rows:
        if r["status"] == "both" and r["documents"] < max(r["old_documents"], r["new_documents"]):
            partial.setdefault(
                (r["system"], r["documents"], r["old_documents"], r["new_documents"]), []
            ).append(r["metric"])
    for (system, shared, before, after), metrics in partial.items():
        lines += [
            "",
            (
                f"{_markdown_cell(system)} ({', '.join(metrics)}): compared on the {shared} documents "
                f"both runs scored (old run {before}, new run {after})"
            ),
        ]
    shown = {(r["system"], r["metric"]) for r in rows if all_moved or r["verdict"] in ("better", "worse")}
    groups = defaultdict(list)
    for m in moved:
        if (m["system"], m["metric"]) in shown:
            groups[m["system"], m["metric"]].append(m)
    if groups:
        lines += ["", f"Documents whose {rows[0]['measure']} moved most (x 100):"]
    for (system, metric), items in groups.items():
        lines += [
            "",
            f"{_markdown_cell(system)} {metric}:",
            "",
            "| doc_id | old | new | change |",
            "|---|---:|---:|---:|",
        ]
        lines += [
            f"| {_markdown_cell(m['doc_id'])} | {as_points(m['old'])} | {as_points(m['new'])} | "
            f"{_signed(m['delta_points'])} |"
            for m in items
        ]
    return "\n".join(lines) + "\n"


def _output_is_empty(path: str) -> bool:
    if "://" not in path:
        return not os.path.exists(path) or (os.path.isdir(path) and not os.listdir(path))
    return not FileSystems.match([FileSystems.join(path, "*")])[0].metadata_list


def publish(output: str, rows: list[dict], moved: list[dict], markdown: str, new=None, note: str = "") -> None:
    """comparison.{parquet,csv,md}, moved_documents.{parquet,csv,md} and report.html (the
    new run's report with the comparison as its first sections) in `output`: written
    into a staging folder and renamed into place (locally), or written with a _SUCCESS
    marker last (object stores, where a folder cannot be renamed)."""
    local = "://" not in output
    staging = f"{os.path.abspath(output)}.staging-{uuid.uuid4().hex[:12]}" if local else output
    try:
        write_table(staging, "comparison", rows, COMPARISON_SCHEMA, markdown)
        write_table(staging, "moved_documents", moved, MOVED_SCHEMA, _moved_markdown(moved))
        if new is not None:
            _write_comparison_report(staging, new, rows, moved, note)
        with FileSystems.create(FileSystems.join(staging, "_SUCCESS")) as fh:
            fh.write(b"")
    except BaseException:
        if local:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    if local:
        if os.path.isdir(output):
            os.rmdir(output)  # empty, checked before comparing
        os.rename(staging, output)


def _write_comparison_report(folder: str, new, rows: list[dict], moved: list[dict], note: str) -> None:
    """report.html: the new run's page, headed by what changed since the old run."""
    from pipeline.report import Section, write_report
    from pipeline.tables import read_system_rows

    columns = [c for c in COMPARISON_SCHEMA.names if c in (rows[0] if rows else {})] or None
    sections = [
        Section("Changes since the previous run", note=note, rows=rows, columns=columns),
        Section("Documents that moved most", rows=moved[:100]),
    ]
    significance = []
    if FileSystems.exists(FileSystems.join(new.path, "significance.parquet")):
        with FileSystems.open(FileSystems.join(new.path, "significance.parquet")) as fh:
            significance = pq.read_table(io.BytesIO(fh.read())).to_pylist()
    errors = (new.record.get("counts") or {}).get("errors_by_reason") or {}
    write_report(folder, read_system_rows(new.path), significance, errors, new.record, sections)


def _moved_markdown(moved: list[dict]) -> str:
    lines = ["| system | metric | doc_id | old | new | change |", "|---|---|---|---:|---:|---:|"]
    lines += [
        f"| {_markdown_cell(m['system'])} | {m['metric']} | {_markdown_cell(m['doc_id'])} | "
        f"{as_points(m['old'])} | {as_points(m['new'])} | {_signed(m['delta_points'])} |"
        for m in moved
    ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the command

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
        if args.output and not _output_is_empty(args.output):
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
            + ", ".join(f"{r['system']} {r['metric']} {_signed(r['delta_points'])}" for r in failing)
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
