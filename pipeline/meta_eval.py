"""`rouge-pipeline meta-eval`: how well each ROUGE variant agrees with human judgments.

Lin (2004) section 6, SummEval, REALSumm: for every (profile, metric, measure,
judgment), system-level and summary-level Pearson, Spearman and Kendall tau-b
and tau-c, with bootstrap intervals (Deutsch et al. 2021) and counts.  The
statistics are rouge_core.correlation's; this module reads the tables, builds
the (systems x documents) matrices and writes the result folder.  It runs on
one machine (human judgments are thousands of rows, not millions).
"""

from __future__ import annotations

import math
import os
import re
from glob import escape as glob_escape
from glob import glob
from typing import Iterable, Optional

import numpy as np

from pipeline.io import files
from pipeline.config import InputConfig
from pipeline.io.names import clashes, describe_clashes, id_problem, seen_as, shown
from pipeline.io.result_folder import NUMBER, TEXT, ResultFolder
from pipeline.io.rows import HugeInteger, iter_rows
from pipeline.records import ErrorRecord
from rouge_core import RougeConfigError, RougeInputError, names
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

# The columns a result folder's per-document table gives meta-eval (pipeline.io.result_folder).
RUN_COLUMNS = {"system": TEXT, "doc_id": TEXT, "metric": TEXT, "profile": TEXT + "?",
               "recall": NUMBER + "?", "precision": NUMBER + "?", "f_measure": NUMBER + "?"}

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

def _regular(path: str) -> str:
    """`path`, a file of a result folder, unless it is a pipe or a device: read as a
    table it would wait for ever or never end (a user's own --judgments may be a pipe)."""
    kind = files.special_kind(path)
    if kind:
        raise RougeInputError(f"{path}: {kind}, not a regular file")
    return path


def read_table(path: str, max_rows: Optional[int] = None) -> list[dict]:
    """Rows of a JSONL / JSON / JSONL.gz / Parquet file (or a folder of Parquet parts),
    read by the project's one row reader with `run`'s bounds (pipeline.io.rows: a
    line over input.max_line_bytes, a cell over input.max_text_bytes, a Parquet page
    past its bound, whatever the footer says, a gzip that expands without end); more
    than `max_rows` rows are refused too.  A file that cannot be read (truncated,
    corrupt, not UTF-8) or a row past a bound is a RougeInputError naming it."""
    if os.path.isdir(path):
        parts = sorted(glob(os.path.join(glob_escape(path), "*.parquet")))
        if not parts:
            raise RougeInputError(f"{path}: a folder, but no *.parquet file in it")
        return [row for part in parts for row in read_table(_regular(part), max_rows)]
    if not path.endswith(".parquet") and not re.search(r"\.(jsonl|json)(\.gz)?$", path):
        raise RougeInputError(f"{path}: expected .jsonl, .json, .jsonl.gz or .parquet")
    rows = []
    for item in iter_rows(_regular(path), InputConfig(), None):
        if isinstance(item, ErrorRecord):
            if item.reason in ("unreadable_file", "invalid_parquet"):
                raise RougeInputError(f"{path}: cannot read it ({shown(item.message)})")
            raise RougeInputError(f"{path}:{item.position}: {shown(item.message)}")
        if max_rows is not None and len(rows) == max_rows:
            raise RougeInputError(f"{path}: more than {max_rows:,} rows, the bound of what meta-eval reads whole")
        rows.append(item.row)
    return rows


# Judgments are read whole (thousands of rows: SummEval has 1,600): a file of more is refused.
MAX_JUDGMENTS = 1_000_000

# Scores and judgments are finite numbers of at most this magnitude: correlations
# square and sum them (1e308 overflowed), so larger values are refused, not mangled.
MAX_MAGNITUDE = 1e100


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, (bool, HugeInteger))


def _keyed(rows: list[dict], path: str) -> None:
    for number, row in enumerate(rows, 1):
        for key in KEYS:
            value = row.get(key)
            if value is None:
                raise RougeInputError(f"{path}: row {number} has no {key!r}")
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise RougeInputError(
                    f"{path}: row {number}, column {key!r}: must be a string or an integer; got {type(value).__name__}"
                )
            row[key] = str(value)
            problem = id_problem(row[key])
            if problem:
                raise RougeInputError(f"{path}: row {number}, column {key!r}: {problem}")


def _numeric_columns(rows: list[dict], exclude: Iterable[str]) -> list[str]:
    """Columns (in first-seen order) that hold a number; a column that also holds
    something else (a string, a boolean) is refused by `_value` when it is used."""
    seen: dict[str, bool] = {}
    for row in rows:
        for name, value in row.items():
            if value is not None and _is_number(value):
                seen[name] = True
    return [name for name in seen if name not in set(exclude)]


def _value(value, path: str, number: int, column: str) -> float:
    """A cell as a float: NaN when it is missing (null, or NaN as pandas writes a
    missing value); anything else but a finite number within MAX_MAGNITUDE is a
    RougeInputError naming the file, the row and the column."""
    if value is None:
        return math.nan
    if _is_number(value):
        value = float(value) if not isinstance(value, int) or abs(value) <= MAX_MAGNITUDE else math.inf
        if math.isnan(value):
            return math.nan
        if abs(value) <= MAX_MAGNITUDE:
            return value
        problem = f"{value!r} is not a finite number of magnitude at most {MAX_MAGNITUDE:g}"
    else:
        problem = f"{shown(repr(value))[:60]} is not a number (null marks a missing value)"
    raise RougeInputError(f"{path}: row {number}, column {shown(column)!r}: {problem}")


def _check_names(what: str, names: Iterable[str], path: str) -> None:
    """Column or metric names: no control characters, no two printing alike."""
    names = list(names)
    for name in names:
        problem = id_problem(name)
        if problem:
            raise RougeInputError(f"{path}: {what} {shown(name)!r} {problem}")
    groups = clashes(names)
    if groups:
        raise RougeInputError(f"{path}: {describe_clashes(what, groups)}")


def split_list(text: Optional[str]) -> Optional[list[str]]:
    return None if text is None else [part.strip() for part in text.split(",") if part.strip()]


def load_judgments(path: str, columns: Optional[list[str]]) -> tuple[dict, list[str]]:
    """{(system, doc_id): {judgment: value}} and the judgment names."""
    rows = read_table(path, MAX_JUDGMENTS)
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
    _check_names("judgment columns", chosen, path)
    judged: dict = {}
    for number, row in enumerate(rows, 1):
        key = (row["system"], row["doc_id"])
        if key in judged:
            raise RougeInputError(f"{path}: row {number}: (system, doc_id) = {key} appears twice")
        judged[key] = {c: _value(row.get(c), path, number, c) for c in chosen}
    return judged, chosen


def _scores_from_rows(rows: list[dict], path: str, metric_columns: Optional[list[str]], scores=None) -> dict:
    """{(profile, metric, measure): {(system, doc_id): score}} from a long or wide table
    (added to `scores` when given: the parts of a result folder)."""
    _keyed(rows, path)
    scores = {} if scores is None else scores

    def put(series, key, value, number, column):
        cells = scores.setdefault(series, {})
        if key in cells:
            raise RougeInputError(f"{path}: row {number}: {series} has two scores for (system, doc_id) = {key}")
        cells[key] = _value(value, path, number, column)

    long = rows and "metric" in rows[0]
    for number, row in enumerate(rows, 1):
        key = (row["system"], row["doc_id"])
        profile = str(row.get("profile") or DEFAULT_PROFILE)
        if long:
            metric = row.get("metric")
            if not isinstance(metric, str) or not metric:
                raise RougeInputError(f"{path}: row {number}, column 'metric': must be a non-empty string")
            for column, measure in MEASURES.items():
                if column in row:
                    put((profile, metric, measure), key, row[column], number, column)
        else:
            for column in metric_columns:
                put((profile, column, "score"), key, row.get(column), number, column)
    return scores


def load_metric_scores(
    run: Optional[str], metric_scores: Optional[str], metric_columns: Optional[list[str]], exclude
) -> tuple[dict, dict]:
    """The metric series and a description of where they came from."""
    if run:
        folder = ResultFolder.open(run)  # complete, as its manifest lists it, never half replaced
        parts = folder.names("per_document/*.parquet")
        if not parts:
            raise RougeInputError(f"{run}: no per_document/*.parquet (is it a rouge-pipeline result folder?)")
        scores: dict = {}
        for part in parts:
            rows = [row for _, row in folder.rows(part, RUN_COLUMNS)]
            _scores_from_rows(rows, folder.location(part), None, scores)
        source = {"run": run if files.is_url(run) else os.path.abspath(run), "parts": len(parts),
                  "signature": folder.signature}
        config = folder.record.get("config")
        human = config.get("human") if isinstance(config, dict) else None
        if isinstance(human, dict) and human.get("enabled"):
            source["human"] = human.get("name")
        _check_names("metrics", {k[1] for k in scores}, run)
        return scores, source
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
    scores = _scores_from_rows(rows, metric_scores, metric_columns)
    _check_names("metrics", {k[1] for k in scores}, metric_scores)
    return scores, {"metric_scores": os.path.abspath(metric_scores)}


def check_copies(copies: list[tuple[str, str]], judged: dict, scores: dict) -> None:
    """--duplicate-system SYSTEM=COPY: SYSTEM must exist and COPY must not (a copy
    never silently replaces a real system, nor one that prints like it)."""
    systems = {k[0] for k in judged} | {k[0] for series in scores.values() for k in series}
    for source, copy in copies:
        problem = id_problem(copy)
        if problem:
            raise RougeConfigError(f"--duplicate-system {source}={shown(copy)}: the copy's name {problem}")
        if source not in systems:
            raise RougeConfigError(f"--duplicate-system {source}={copy}: there is no system {source!r}")
        alike = [s for s in systems if seen_as(s) == seen_as(copy)]
        if alike:
            raise RougeConfigError(
                f"--duplicate-system {source}={copy}: {copy!r} would replace the existing system {alike[0]!r}; "
                "choose a new name for the copy"
            )
        systems.add(copy)


def check_systems(judged: dict, scores: dict, path: str) -> None:
    """Systems, and doc_ids, of the judgments and of the scores: none two that print
    alike (two spellings of one document would silently never meet)."""
    for what, index in (("systems", 0), ("doc_ids", 1)):
        names = {k[index] for k in judged} | {k[index] for series in scores.values() for k in series}
        groups = clashes(names)
        if groups:
            raise RougeInputError(f"{path} and the metric scores: {describe_clashes(what, groups)}")


def duplicate_systems(table: dict, copies: list[tuple[str, str]]) -> None:
    """Add each (system, copy): every cell of `system` again under the name `copy`."""
    for source, copy in copies:
        for key in [k for k in table if k[0] == source]:
            table[(copy, key[1])] = table[key]


# --------------------------------------------------------------------------
# Computing
# --------------------------------------------------------------------------

def scored_metric(scores: dict, name: str, option: str) -> str:
    """The metric of `scores` that `name` names (meta-eval's --metrics and --compare):
    as the scores name it, or in the other style (rouge2 for ROUGE-2, rouge_core.names.find).
    A name that is no scored metric is refused, with the metrics the scores have.

    Example:
        >>> scored_metric({("default", "ROUGE-2", "F"): {}, ("default", "ROUGE-L", "F"): {}}, "rouge2", "--metrics")
        'ROUGE-2'
    """
    available = names.ordered({metric for _, metric, _ in scores})
    if name in available:
        return name
    rouge = [metric for metric in available if names.is_metric_name(metric)]
    try:
        return names.find(name, rouge)
    except RougeConfigError as err:
        reason = str(err) if names.is_metric_name(name) and rouge else "no such metric among the scores"
        raise RougeConfigError(
            f"{option} {shown(name)}: {reason}; the metrics scored are {', '.join(map(shown, available))}"
        ) from None


def select_metrics(scores: dict, wanted: list[str]) -> dict:
    """The series of the metrics `wanted` (--metrics), each found by `scored_metric`."""
    chosen = {scored_metric(scores, name, "--metrics") for name in wanted}
    return {key: series for key, series in scores.items() if key[1] in chosen}


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
    order = sorted(scores, key=lambda s: (s[0], names.sort_key(s[1]), measure_rank.get(s[2], 9), s[2]))
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
