"""`rouge-pipeline compare OLD_RUN NEW_RUN`: what changed between two result folders.

For every (system, metric) of either run: the old and new value of a measure as
each run's table shows it (ROUGE-1.5.5's printed average where the run has one,
else the mean; `average` says which) and the means over each run's documents,
and on the documents both runs scored a paired test of new against old
(`rouge_core.significance`: the sign-flip test, exact up to 20 documents and by
Student's t beyond, with the t interval of the change; Holm-adjusted across all
the (system, metric) pairs compared, since one exit status answers for all of
them); systems added or
removed; the documents whose scores moved most.  Runs with different
signatures are not comparable: the differing settings are named and nothing
else is computed.

Exit status: 0 no significant drop beyond --fail-on-drop points; 1 a
significant (Holm-adjusted p < 0.05) drop of more than --fail-on-drop points;
2 usage error or invalid input (a folder missing or not a result folder, a
value that is not a score, names that print alike, an option out of range, an
existing output, or any other failure: 1 means only "a significant drop");
3 the runs are not comparable (signatures differ).

Result folders may be local paths or gs://, s3://, hdfs:// URLs, read through
pipeline.io.result_folder (complete, as their manifests list them).
The command line is pipeline/cli/compare.py; the Markdown, pipeline/render/compare.py.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable

import numpy as np

from pipeline.config import DEFAULT_PROFILE, parse_profiles_signature
from pipeline.io.names import clashes, control_character, describe_clashes, shown
from pipeline.io.result_folder import NUMBER, TEXT, ResultFolder
from rouge_core.resampling import SCORE_UNITS, units_of
from rouge_core.signature import Signature
from rouge_core.significance import holm, paired_significance

EXIT_OK, EXIT_DROP, EXIT_USAGE, EXIT_NOT_COMPARABLE = 0, 1, 2, 3
LEVEL = 0.05  # a drop counts when its Holm-adjusted p-value is below this
MOVED = 10  # documents listed per (system, metric)
# A score read from a result folder is at most this: recall, precision and F are
# at most 1, except ROUGE-W's with -w below 1 (ROUGE-1.5.5 prints those as they are).
MAX_SCORE = 1e6

class UsageError(Exception):
    """A folder is missing or not a result folder, or the output exists (exit 2)."""


# ------------------------------------------------------------------ reading


class ComparedRun:
    """The run record and one measure of the per-document scores of a result folder,
    and its own per-system table (read through pipeline.io.result_folder: complete, as
    its manifest lists it, and never half replaced).

    A result folder is untrusted input (it may be hand-edited, truncated, or not
    this tool's): every problem is an exit-2 error that names the file, and for a
    bad value its row and column.  Scores must be finite numbers >= 0; names must
    be non-empty strings without control characters, and no two may print alike
    (pipeline.io.names); a (system, metric, doc_id) appears once."""

    def __init__(self, path: str, measure: str):
        self.folder = ResultFolder.open(path)
        self.path, self.record, self.signature = self.folder.path, self.folder.record, self.folder.signature
        shards = self.folder.names("per_document/*.parquet")
        if not shards:
            raise UsageError(f"{path}: not a result folder (no per_document/*.parquet)")
        # (system, metric) -> {doc_id: score}; a run with profiles names its metrics
        # "<profile> <metric>" (the default profile: the metric alone)
        self.scores: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
        for shard in shards:
            self._read_shard(shard, measure)
        self._read_system_table(measure)
        unscored = sorted(key for key in self.table if key not in self.scores)
        if unscored:  # (its per-document rows gone, the system would be "removed" from a run that has it)
            system, metric = unscored[0]
            raise UsageError(f"{self.folder.location('system_scores.parquet')}: ({shown(system)}, {shown(metric)}) "
                             "has no row in the per-document table")
        for what, names in (("systems", {s for s, _ in self.scores}), ("metrics", {m for _, m in self.scores})):
            groups = clashes(names)
            if groups:
                raise UsageError(f"{path}: {describe_clashes(what, groups)}")

    def _rows(self, name: str, columns: dict[str, str]):
        """(row number, label, row) per row of the listed table `name` (its `columns`,
        and `profile` when it has one): the names among them checked (non-empty, no
        control character), the metric labelled as "<profile> <metric>" in a run with
        profiles (the default profile: the metric)."""
        where = self.folder.location(name)
        names = [n for n in ("system", "doc_id", "metric", "profile") if n in columns or n == "profile"]
        for number, row in self.folder.rows(name, {**columns, "profile": TEXT + "?"}):
            for key in names:
                text = row.get(key)
                if text is None and key == "profile":
                    continue
                if not text:
                    raise UsageError(f"{where}: row {number}, column {key!r}: empty or null")
                bad = control_character(text)
                if bad:
                    raise UsageError(f"{where}: row {number}, column {key!r}: holds a control character ({bad})")
            profile, metric = row.get("profile"), row["metric"]
            yield number, metric if profile in (None, DEFAULT_PROFILE) else f"{profile} {metric}", row

    def _read_shard(self, shard: str, measure: str) -> None:
        """A per-document file's scores into `scores`, read as columns and checked
        as `_rows` and `_check_score` check each row: the first problem in the
        file's row order is said, as reading it row by row would (which took most of
        compare's 53 CPU-s on two 1M-pair runs; a doc_id is one string object however
        many systems have it)."""
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.compute as pc  # noqa: PLC0415

        where = self.folder.location(shard)
        table = self.folder.column_table(shard, {"system": TEXT, "doc_id": TEXT, "metric": TEXT, measure: NUMBER,
                                                 "profile": TEXT + "?"})
        rows = table.num_rows
        if not rows:
            return
        names = [n for n in ("system", "doc_id", "metric", "profile") if n in table.column_names]
        problems = []  # (row index, check, message): checks in a row's order, names, score, repeated key
        for check, key in enumerate(names):
            column = table.column(key)
            empty = pc.fill_null(pc.equal(pc.binary_length(column), 0), key != "profile")  # (no profile: the default)
            bad = sorted(t for t in pc.unique(column).to_pylist() if t is not None and control_character(t))
            marked = pc.or_(empty, pc.is_in(column, pa.array(bad, pa.string()))).to_numpy(zero_copy_only=False)
            if marked.any():
                k = int(np.argmax(marked))
                text = column[k].as_py()
                problems.append((k, check, f"row {k + 1}, column {key!r}: " + (
                    f"holds a control character ({control_character(text)})" if text else "empty or null")))
        values = table.column(measure).to_numpy(zero_copy_only=False).astype(float)  # (a null: nan)
        unfit = ~np.isfinite(values) | (values < 0) | (values > MAX_SCORE)
        if unfit.any():
            k = int(np.argmax(unfit))
            problems.append((k, len(names), f"row {k + 1}, column {measure!r}: {table.column(measure)[k].as_py()!r} "
                                             f"is not a score (a finite number from 0 to {MAX_SCORE:g})"))
        profile = table.column("profile") if "profile" in names else pa.nulls(rows, pa.string())
        metric = pc.fill_null(table.column("metric"), "\x00")  # (a null name: refused at its row, before a repeat)
        label_column = pc.if_else(pc.fill_null(pc.equal(profile, DEFAULT_PROFILE), True), metric,
                                  pc.binary_join_element_wise(profile, metric, " "))
        encoded = [pc.dictionary_encode(pc.fill_null(c, "\x00")).combine_chunks()
                   for c in (table.column("system"), label_column, table.column("doc_id"))]
        (systems, labels, doc_ids), (s, m, d) = zip(*((e.dictionary.to_pylist(), e.indices.to_numpy().astype(np.int64))
                                                     for e in encoded))
        pair = s * len(labels) + m
        seen = np.zeros(rows, dtype=bool)
        seen[np.unique(pair * len(doc_ids) + d, return_index=True)[1]] = True
        repeated = [] if seen.all() else [int(np.argmin(seen))]  # (a key again in this file)
        order = np.argsort(pair, kind="stable")  # (each (system, metric)'s rows together, in the file's order)
        parts = np.split(order, np.flatnonzero(np.diff(pair[order])) + 1)
        for part in parts:  # (or of an earlier file)
            cell = self.scores.get((systems[s[part[0]]], labels[m[part[0]]]))
            again = next((int(i) for i in part if doc_ids[d[i]] in cell), None) if cell else None
            repeated += [] if again is None else [again]
        if repeated:
            k = min(repeated)
            problems.append((k, len(names) + 1, f"row {k + 1}: ({shown(systems[s[k]])}, {shown(labels[m[k]])}, "
                                                 f"{shown(doc_ids[d[k]])}) appears twice"))
        if problems:
            raise UsageError(f"{where}: {min(problems)[2]}")
        scores = table.column(measure).to_pylist()
        for part in parts:
            cell = self.scores[systems[s[part[0]]], labels[m[part[0]]]]
            cell.update((doc_ids[d[i]], scores[i]) for i in part.tolist())

    def _read_system_table(self, measure: str) -> None:
        """`table`: (system, metric label) -> (the run's own table value of `measure`,
        which average it is): ROUGE-1.5.5's printed average ("rouge155") where the
        run has one, else the mean over its documents ("mean"), from system_scores."""
        name = "system_scores.parquet"
        if name not in self.folder.manifest.files:
            raise UsageError(f"{self.path}: not a result folder (no system_scores.parquet)")
        where = self.folder.location(name)
        columns = {"system": TEXT, "metric": TEXT, measure: NUMBER, f"rouge155_{measure}": NUMBER}
        self.table: dict[tuple[str, str], tuple[float, str]] = {}
        for number, label, row in self._rows(name, columns):
            system, mean, printed = row["system"], row[measure], row[f"rouge155_{measure}"]
            value, average = (mean, "mean") if printed is None else (printed, "rouge155")
            self._check_score(where, number, measure if printed is None else f"rouge155_{measure}", value)
            if (system, label) in self.table:
                raise UsageError(f"{where}: row {number}: ({shown(system)}, {shown(label)}) appears twice")
            self.table[system, label] = (value, average)

    @staticmethod
    def _check_score(path: str, number: int, column: str, value) -> None:
        if value is None or not math.isfinite(value) or value < 0 or value > MAX_SCORE:
            raise UsageError(
                f"{path}: row {number}, column {column!r}: {value!r} is not a score "
                f"(a finite number from 0 to {MAX_SCORE:g})"
            )

    def table_value(self, system: str, metric: str) -> tuple[float, str]:
        """The run's own table value of (system, metric) and which average it is."""
        if (system, metric) not in self.table:
            raise UsageError(
                f"{self.folder.location('system_scores.parquet')}: no row for ({shown(system)}, {shown(metric)}), "
                "which the per-document table has"
            )
        return self.table[system, metric]


def settings_differences(old: str, new: str, ignore: tuple = ()) -> list[tuple[str, str | None, str | None]]:
    """The settings of two runs' signatures that differ, as (key, old value, new value),
    by `Signature.differences` per setting; with profiles the key is "<profile> <key>"
    (and "<profile> #2 <key>" for a profile's second setting), and different profiles
    are one difference, "profiles".  A field this version does not know (a later
    version's) is compared too; the fields in `ignore` are not (history passes
    rouge_core.signature.RUN_FIELDS: what a run adds about its data, not settings).

    Example:
        >>> settings_differences("rouge155|n:2|stem:no|v:0.1.0", "rouge155|n:4|stem:no|v:0.1.0")
        [('n', '2', '4')]
    """

    def settings(signature: str) -> dict[str, Signature]:
        return {
            " ".join(filter(None, [name, f"#{i}" if i > 1 else ""])): setting
            for name, settings in parse_profiles_signature(signature)
            for i, setting in enumerate(settings, 1)
        }

    before, after = settings(old), settings(new)
    out = []
    names = [[name or "(one)" for name, _ in parse_profiles_signature(s)] for s in (old, new)]
    if names[0] != names[1]:
        out.append(("profiles", ", ".join(names[0]), ", ".join(names[1])))
    for label in (label for label in before if label in after):
        out += [(f"{label} {key}" if label else key, a, b)
                for key, (a, b) in before[label].differences(after[label]).items() if key not in ignore]
    return out


# ------------------------------------------------------------------ comparing


def _mean(values) -> float:
    """The exact mean of five-decimal scores, as the pipeline's SystemCombineFn forms it."""
    values = list(values)
    return int(units_of(values).sum()) / (len(values) * SCORE_UNITS)


def compare_runs(
    old: ComparedRun,
    new: ComparedRun,
    *,
    measure: str,
    fail_on_drop: float,
    confidence: float,
    on_pair: Callable[[], None] = lambda: None,
) -> tuple[list[dict], list[dict]]:
    """(comparison rows, most-moved document rows), sorted by system and metric;
    `on_pair` is called after each (system, metric) pair (for progress).

    A row's `old` and `new` are each run's own table value (`average` says which:
    ROUGE-1.5.5's printed average, "rouge155", or the mean over documents, "mean"),
    so a run compared with itself shows its table's numbers; `old_mean` and
    `new_mean` are the means over each run's documents; the change, its interval
    and p are of the mean over the documents both runs scored."""
    rows, moved = [], []
    for system, metric in sorted(old.scores.keys() | new.scores.keys()):
        before, after = old.scores.get((system, metric), {}), new.scores.get((system, metric), {})
        old_value, old_average = old.table_value(system, metric) if before else (None, None)
        new_value, new_average = new.table_value(system, metric) if after else (None, None)
        row = {
            "system": system,
            "metric": metric,
            "measure": measure,
            "average": new_average or old_average,
            "status": "both" if before and after else "removed" if before else "added",
            "old_documents": len(before),
            "new_documents": len(after),
            "documents": 0,
            "old": old_value,
            "new": new_value,
            "old_mean": _mean(before.values()) if before else None,
            "new_mean": _mean(after.values()) if after else None,
        }
        row.update(
            dict.fromkeys(
                [
                    "delta_points",
                    "ci_low_points",
                    "ci_high_points",
                    "p_value",
                    "p_floor",
                    "method",
                    "p_adjusted",
                ]
            )
        )
        rows.append(row)
        shared = tuple(sorted(before.keys() & after.keys()))
        if shared:
            new_scores, old_scores = [after[d] for d in shared], [before[d] for d in shared]
            result = paired_significance(shared, new_scores, old_scores, confidence=confidence)
            row.update(
                documents=result.documents,
                delta_points=100 * result.difference,
                ci_low_points=None if result.ci_low is None else 100 * result.ci_low,
                ci_high_points=None if result.ci_high is None else 100 * result.ci_high,
                p_value=result.p_value,
                p_floor=result.p_floor,
                method=result.method,
            )
            change = (units_of(new_scores) - units_of(old_scores)).tolist()
            largest = np.argsort(-np.abs(change), kind="stable")[:MOVED].tolist()  # (ties: shared is in doc order)
            moved += [
                {
                    "system": system,
                    "metric": metric,
                    "measure": measure,
                    "doc_id": shared[i],
                    "old": old_scores[i],
                    "new": new_scores[i],
                    "delta_points": 100 * change[i] / SCORE_UNITS,
                }
                for i in largest
                if change[i]
            ]
        on_pair()
    tested = [r for r in rows if r["p_value"] is not None]
    for row, p in zip(tested, holm(r["p_value"] for r in tested)):
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


