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

Result folders may be local paths or gs://, s3://, hdfs:// URLs (pipeline.io.files).
The command line is pipeline/cli/compare.py; the Markdown, pipeline/render/compare.py.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict

from pipeline.config import DEFAULT_PROFILE
from pipeline.io import files
from rouge_core.resampling import SCORE_UNITS, to_units
from rouge_core.signature import ADDED_LATER
from rouge_core.significance import holm, paired_sums, paired_test

EXIT_OK, EXIT_DROP, EXIT_USAGE, EXIT_NOT_COMPARABLE = 0, 1, 2, 3
LEVEL = 0.05  # a drop counts when its Holm-adjusted p-value is below this
MOVED = 10  # documents listed per (system, metric)

class UsageError(Exception):
    """A folder is missing or not a result folder, or the output exists (exit 2)."""


# ------------------------------------------------------------------ reading


class ResultFolder:
    """The run record and one measure of the per-document scores of a result folder."""

    def __init__(self, path: str, measure: str):
        self.path = path.rstrip("/") or path
        if not files.exists(self.path):
            raise UsageError(f"{path}: no such result folder")
        run_json = files.join(self.path, "run.json")
        if not files.exists(run_json):
            raise UsageError(f"{path}: not a result folder (no run.json; was the run finished?)")
        try:
            self.record = json.loads(files.read_bytes(run_json).decode("utf-8"))
        except ValueError as err:
            raise UsageError(f"{run_json}: not valid JSON ({err})") from err
        self.signature = self.record.get("signature")
        if not isinstance(self.signature, str):
            raise UsageError(f"{run_json}: no signature")
        shards = files.match(files.join(self.path, "per_document", "*.parquet"))
        if not shards:
            raise UsageError(f"{path}: not a result folder (no per_document/*.parquet)")
        # (system, metric) -> {doc_id: score}; a run with profiles names its metrics
        # "<profile> <metric>" (the default profile: the metric alone)
        self.scores: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
        import pyarrow as pa  # noqa: PLC0415 (result folders are Parquet)
        import pyarrow.parquet as pq  # noqa: PLC0415

        for shard in sorted(shards):
            with files.open_read(shard) as fh:
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
    # A key added to the signature later stands for its default in an older run's signature.
    value = lambda f, k: f.get(k, ADDED_LATER.get(k))  # noqa: E731
    return [(k, a.get(k), b.get(k)) for k in keys if value(a, k) != value(b, k)]



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


