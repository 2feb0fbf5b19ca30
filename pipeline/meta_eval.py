"""`rouge-pipeline meta-eval`: how well each ROUGE variant agrees with human judgments.

Lin (2004) section 6, SummEval, REALSumm: for every (profile, metric, measure,
judgment), system-level and summary-level Pearson, Spearman and Kendall tau-b
and tau-c, with bootstrap intervals (Deutsch et al. 2021) and counts.  The
statistics are rouge_core.correlation's; this module reads the tables, builds
the (systems x documents) matrices and writes the result folder.  It runs on
one machine (human judgments are thousands of rows, not millions).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from glob import glob
from typing import Iterable, Optional

import numpy as np

from rouge_core import RougeInputError
from rouge_core import correlation as corr

KEYS = ("system", "doc_id")
DEFAULT_PROFILE = "default"
MEASURES = {"recall": "R", "precision": "P", "f_measure": "F", "score": "score"}
COLUMNS = (
    ["profile", "level", "metric", "measure", "judgment"]
    + list(corr.METHODS)
    + [f"{m}_{end}" for m in corr.METHODS for end in ("low", "high")]
    + ["systems", "documents", "cells", "undefined"]
    + [f"{m}_n" for m in corr.METHODS]
    + ["resample", "replicates", "confidence", "alpha"]
    + [f"{m}_replicates" for m in corr.METHODS]
)

COMPARISON_COLUMNS = [
    "profile", "level", "measure", "judgment", "metric_x", "metric_y", "method",
    "delta", "p_value", "unit", "replicates", "seed", "alpha",
]  # fmt: skip
_STRINGS = {
    "profile",
    "level",
    "metric",
    "measure",
    "judgment",
    "resample",
    "metric_x",
    "metric_y",
    "method",
    "unit",
}
_INTEGERS = {"systems", "documents", "cells", "undefined", "replicates", "seed"} | {
    f"{m}_{end}" for m in corr.METHODS for end in ("n", "replicates")
}

def read_table(path: str) -> list[dict]:
    """Rows of a JSONL / JSON / JSONL.gz / Parquet file (or a folder of Parquet parts)."""
    if os.path.isdir(path):
        parts = sorted(glob(os.path.join(path, "*.parquet")))
        if not parts:
            raise RougeInputError(f"{path}: a folder, but no *.parquet file in it")
        return [row for part in parts for row in read_table(part)]
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    if not re.search(r"\.(jsonl|json)(\.gz)?$", path):
        raise RougeInputError(f"{path}: expected .jsonl, .json, .jsonl.gz or .parquet")
    rows = []
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise RougeInputError(f"{path}:{number}: not valid JSON ({err.msg})") from err
            if not isinstance(row, dict):
                raise RougeInputError(f"{path}:{number}: expected a JSON object")
            rows.append(row)
    return rows


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _keyed(rows: list[dict], path: str) -> None:
    for number, row in enumerate(rows, 1):
        for key in KEYS:
            if row.get(key) is None:
                raise RougeInputError(f"{path}: row {number} has no {key!r}")
            row[key] = str(row[key])


def _numeric_columns(rows: list[dict], exclude: Iterable[str]) -> list[str]:
    """Columns (in first-seen order) whose non-null values are all numbers."""
    seen: dict[str, bool] = {}
    for row in rows:
        for name, value in row.items():
            if value is not None:
                seen[name] = seen.get(name, True) and _is_number(value)
    return [name for name, numeric in seen.items() if numeric and name not in set(exclude)]


def split_list(text: Optional[str]) -> Optional[list[str]]:
    return None if text is None else [part.strip() for part in text.split(",") if part.strip()]


def load_judgments(path: str, columns: Optional[list[str]]) -> tuple[dict, list[str]]:
    """{(system, doc_id): {judgment: value}} and the judgment names."""
    rows = read_table(path)
    _keyed(rows, path)
    available = _numeric_columns(rows, KEYS)
    chosen = columns or available
    missing = [c for c in chosen if c not in available]
    if missing:
        raise RougeInputError(
            f"{path}: no numeric judgment column {', '.join(map(repr, missing))}; "
            f"numeric columns: {available}"
        )
    if not chosen:
        raise RougeInputError(f"{path}: no numeric judgment column")
    judged: dict = {}
    for row in rows:
        key = (row["system"], row["doc_id"])
        if key in judged:
            raise RougeInputError(f"{path}: (system, doc_id) = {key} appears twice")
        judged[key] = {c: _float(row.get(c)) for c in chosen}
    return judged, chosen


def _float(value) -> float:
    return float(value) if _is_number(value) else math.nan


def _scores_from_rows(rows: list[dict], path: str, metric_columns: Optional[list[str]]) -> dict:
    """{(profile, metric, measure): {(system, doc_id): score}} from a long or wide table."""
    _keyed(rows, path)
    scores: dict = {}

    def put(series, key, value):
        cells = scores.setdefault(series, {})
        if key in cells:
            raise RougeInputError(f"{path}: {series} has two scores for (system, doc_id) = {key}")
        cells[key] = _float(value)

    long = rows and "metric" in rows[0]
    for row in rows:
        key = (row["system"], row["doc_id"])
        profile = str(row.get("profile") or DEFAULT_PROFILE)
        if long:
            for column, measure in MEASURES.items():
                if column in row:
                    put((profile, str(row["metric"]), measure), key, row[column])
        else:
            for column in metric_columns:
                put((profile, column, "score"), key, row.get(column))
    return scores


def load_metric_scores(
    run: Optional[str], metric_scores: Optional[str], metric_columns: Optional[list[str]], exclude
) -> tuple[dict, dict]:
    """The metric series and a description of where they came from."""
    if run:
        parts = sorted(glob(os.path.join(run, "per_document", "*.parquet")))
        if not parts:
            raise RougeInputError(f"{run}: no per_document/*.parquet (is it a rouge-pipeline result folder?)")
        rows = [row for part in parts for row in read_table(part)]
        source = {"run": os.path.abspath(run), "parts": len(parts)}
        record = os.path.join(run, "run.json")
        if os.path.exists(record):
            with open(record, encoding="utf-8") as fh:
                run_record = json.load(fh)
            source["signature"] = run_record.get("signature")
            human = (run_record.get("config") or {}).get("human") or {}
            if human.get("enabled"):
                source["human"] = human.get("name")
        return _scores_from_rows(rows, run, None), source
    rows = read_table(metric_scores)
    if rows and "metric" not in rows[0]:
        available = _numeric_columns(rows, list(KEYS) + ["profile"] + list(exclude))
        chosen = metric_columns or available
        missing = [c for c in chosen if c not in available]
        if missing:
            raise RougeInputError(
                f"{metric_scores}: no numeric metric column {missing}; numeric: {available}"
            )
        metric_columns = chosen
    return _scores_from_rows(rows, metric_scores, metric_columns), {
        "metric_scores": os.path.abspath(metric_scores)
    }


def duplicate_systems(table: dict, copies: list[tuple[str, str]]) -> None:
    """Add each (system, copy): every cell of `system` again under the name `copy`."""
    for source, copy in copies:
        for key in [k for k in table if k[0] == source]:
            table[(copy, key[1])] = table[key]


# --------------------------------------------------------------------------
# Computing
# --------------------------------------------------------------------------

_ROUGE_TAG = re.compile(r"ROUGE-(?:(\d+)|(L)|W-(.+)|(SU|S)(\*|\d+))$")


def metric_order(name: str):
    """ROUGE-1..N, L, W, S*, S4, S9, SU*, SU4, SU9 (Lin's Table 1 order), then others by name."""
    match = _ROUGE_TAG.match(name)
    if not match:
        return (1, 0, 0, name)
    n, lcs, weight, skip, gap = match.groups()
    if n:
        return (0, 0, int(n), name)
    if lcs:
        return (0, 1, 0, name)
    if weight:
        return (0, 2, 0, name)
    return (0, 3 if skip == "S" else 4, -1 if gap == "*" else int(gap), name)


def matrices(series: dict, judged: dict, judgment: str, systems: list, documents: list):
    """The (systems x documents) metric and judgment matrices, NaN where a cell is missing."""
    x = np.full((len(systems), len(documents)), np.nan)
    z = np.full_like(x, np.nan)
    row = {s: i for i, s in enumerate(systems)}
    col = {d: j for j, d in enumerate(documents)}
    for (system, doc_id), value in series.items():
        if system in row and doc_id in col:
            x[row[system], col[doc_id]] = value
    for (system, doc_id), values in judged.items():
        z[row[system], col[doc_id]] = values[judgment]
    return x, z


def grid(scores: dict, judged: dict) -> tuple[list, list, dict]:
    """The systems and documents (sorted) that have a score and a judgment, and their judgments."""
    keys = {k for s in scores.values() for k in s if k in judged}
    judged_here = {k: v for k, v in judged.items() if k in keys}
    return sorted({k[0] for k in keys}), sorted({k[1] for k in keys}), judged_here


def correlation_rows(scores: dict, judged: dict, judgments: list[str], options, step=None) -> list[dict]:
    """One row per (profile, level, metric, measure, judgment); `step()` is called
    after each (the command's progress: len(scores) x len(judgments) x len(levels))."""
    systems, documents, judged_here = grid(scores, judged)
    measure_rank = {m: i for i, m in enumerate(MEASURES.values())}
    order = sorted(scores, key=lambda s: (s[0], metric_order(s[1]), measure_rank.get(s[2], 9), s[2]))
    rows = []
    for profile, metric, measure in order:
        series = scores[(profile, metric, measure)]
        for judgment in judgments:
            x, z = matrices(series, judged_here, judgment, systems, documents)
            present = ~(np.isnan(x) | np.isnan(z))
            used_x = np.where(present, x, np.nan)
            for level in options.levels:
                result = corr.correlate(
                    used_x, z, level, corr.METHODS, alpha=_alpha(options, level), undefined=options.undefined
                )
                row = {
                    "profile": profile,
                    "level": level,
                    "metric": metric,
                    "measure": measure,
                    "judgment": judgment,
                }
                row.update({m: _finite(result[m].value) for m in corr.METHODS})
                intervals = _intervals(used_x, z, level, options)
                for m in corr.METHODS:
                    low, high, replicates = intervals.get(m, (None, None, 0))
                    row[f"{m}_low"], row[f"{m}_high"] = _finite(low), _finite(high)
                    row[f"{m}_replicates"] = replicates
                row.update(
                    systems=int(present.any(axis=1).sum()),
                    documents=int(present.any(axis=0).sum()),
                    cells=int(present.sum()),
                    undefined=result[corr.METHODS[0]].undefined,
                    resample=options.resample if options.replicates else None,
                    replicates=options.replicates,
                    confidence=options.confidence,
                    alpha=_alpha(options, level),
                )
                row.update({f"{m}_n": result[m].n for m in corr.METHODS})
                rows.append({c: row[c] for c in COLUMNS})
                if step is not None:
                    step()
    return rows


def comparison_rows(scores: dict, judged: dict, judgments: list[str], pairs: list, options, step=None) -> list[dict]:
    """One row per (profile, level, measure, judgment, compared pair, method); `step()`
    after each permutation test (of every method at once)."""
    systems, documents, judged_here = grid(scores, judged)
    rows = []
    for profile, measure in dict.fromkeys((p, m) for p, _, m in scores):
        for metric_x, metric_y in pairs:
            if (profile, metric_x, measure) not in scores or (profile, metric_y, measure) not in scores:
                continue
            for judgment in judgments:
                x, z = matrices(
                    scores[(profile, metric_x, measure)], judged_here, judgment, systems, documents
                )
                y, _ = matrices(
                    scores[(profile, metric_y, measure)], judged_here, judgment, systems, documents
                )
                for level in options.levels:
                    tests = corr.permutation_test(
                        x, y, z, level, corr.METHODS, unit=options.permutation_unit,
                        replicates=options.replicates, seed=options.seed,
                        alpha=_alpha(options, level), undefined=options.undefined,
                    )  # fmt: skip
                    for method, test in tests.items():
                        rows.append(
                            {
                                "profile": profile, "level": level, "measure": measure, "judgment": judgment,
                                "metric_x": metric_x, "metric_y": metric_y, "method": method,
                                "delta": _finite(test.delta), "p_value": _finite(test.p_value),
                                "unit": options.permutation_unit, "replicates": test.replicates,
                                "seed": options.seed, "alpha": _alpha(options, level),
                            }
                        )  # fmt: skip
                    if step is not None:
                        step()
    return rows


def _alpha(options, level: str) -> Optional[float]:
    return options.alpha if level == "summary" else None


def _finite(value) -> Optional[float]:
    return None if value is None or math.isnan(value) else float(value)


def _intervals(x, z, level, options) -> dict:
    if not options.replicates:
        return {}
    return corr.bootstrap_intervals(
        x,
        z,
        level,
        corr.METHODS,
        confidence=options.confidence,
        resample=options.resample,
        replicates=options.replicates,
        seed=options.seed,
        alpha=_alpha(options, level),
        undefined=options.undefined,
    )



def typed_columns(columns) -> list[tuple[str, str]]:
    """meta-eval's columns with their table types (pipeline.io.tables)."""
    return [(c, "string" if c in _STRINGS else "int64" if c in _INTEGERS else "float64") for c in columns]
