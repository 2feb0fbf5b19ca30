"""`rouge-pipeline meta-eval`: how well each ROUGE variant agrees with human judgments.

Lin (2004) section 6, SummEval, REALSumm: for every (profile, metric, measure,
judgment), system-level and summary-level Pearson, Spearman and Kendall tau-b
and tau-c, with bootstrap intervals (Deutsch et al. 2021) and counts.  The
statistics are rouge_core.correlation's; this module reads the tables, builds
the (systems x documents) matrices and writes the result folder.  It runs on
one machine (human judgments are thousands of rows, not millions).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import math
import os
import re
import shutil
import sys
import time
import uuid
from glob import glob
from typing import Iterable, Optional

import numpy as np

from rouge_core import RougeConfigError, RougeInputError, __version__
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
cell, system or document); report.html: all of it as a page for people (with the settings).
Without --output the Markdown is printed.
"""


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


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


def _split(text: Optional[str]) -> Optional[list[str]]:
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


def correlation_rows(scores: dict, judged: dict, judgments: list[str], options) -> list[dict]:
    """One row per (profile, level, metric, measure, judgment)."""
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
    return rows


def comparison_rows(scores: dict, judged: dict, judgments: list[str], pairs: list, options) -> list[dict]:
    """One row per (profile, level, measure, judgment, compared pair, method)."""
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


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def lin_tables(rows: list[dict]) -> tuple[list[str], dict]:
    """The profiles (the columns) and, per (level, judgment, measure) in first-seen order,
    the cells {(metric, profile): row}: Lin (2004) Table 1's shape."""
    tables: dict = {}
    for r in rows:
        tables.setdefault((r["level"], r["judgment"], r["measure"]), {})[r["metric"], r["profile"]] = r
    return list(dict.fromkeys(r["profile"] for r in rows)), tables


def markdown(rows: list[dict], options) -> str:
    """Lin (2004) Table 1's shape: per level, judgment and measure, metrics as rows and
    profiles as columns; each cell Pearson / Spearman / Kendall tau-b.  Names from the
    input (metrics, profiles, judgments) are escaped, never markup."""
    from pipeline.tables import _markdown_cell as cell

    profiles, tables = lin_tables(rows)
    out = []
    for (level, judgment, measure), cells in tables.items():
        metrics = list(dict.fromkeys(metric for metric, _ in cells))
        any_row = next(iter(cells.values()))
        note = f"{any_row['systems']} systems, {any_row['documents']} documents"
        if level == "summary" and options.alpha is not None:
            note += f", per-document correlations with p <= {options.alpha} only"
        out += [
            f"### {level}-level correlation with {cell(judgment)}, {measure} ({note})",
            "",
            "Pearson r / Spearman rho / Kendall tau-b.",
            "",
            "| metric | " + " | ".join(map(cell, profiles)) + " |",
            "|---|" + "---|" * len(profiles),
        ]
        for metric in metrics:
            line = [cell(metric)]
            for profile in profiles:
                r = cells.get((metric, profile))
                line.append(
                    "" if r is None else " / ".join(_two(r[m]) for m in ("pearson", "spearman", "kendall_b"))
                )
            out.append("| " + " | ".join(line) + " |")
        out.append("")
    if options.replicates:
        out.append(
            f"Bootstrap intervals ({options.confidence:g}%, {options.replicates} replicates over "
            f"{options.resample}, seed {options.seed}) and counts: correlations.csv."
        )
    return "\n".join(out) + "\n"


def _two(value) -> str:
    return "n/a" if value is None else "%.3f" % value


# --------------------------------------------------------------------------
# report.html
# --------------------------------------------------------------------------

COEFFICIENTS = {"pearson": "Pearson r", "spearman": "Spearman \u03c1", "kendall_b": "Kendall \u03c4b"}
MEASURE_NAMES = {"R": "recall", "P": "precision", "F": "F-measure"}
LEVEL_NOTES = {
    "system": "System level: each system's mean score over its documents against its mean judgment, "
    "one point per system (does the metric rank systems as people do?).",
    "summary": "Summary level: for each document, the systems' scores against their judgments, averaged "
    "over the documents where that correlation is defined (does the metric rank the summaries of one "
    "input as people do?).",
}
SWAPPED = {"documents": "document", "systems": "system", "both": "cell"}
RESAMPLED = {"documents": "documents", "systems": "systems", "both": "systems and documents (BOOT-BOTH)"}


def report_html(rows: list[dict], comparisons: list[dict], record: dict, human_sections: list) -> str:
    """The page for people: Lin's tables per level, judgment and measure, the human
    upper bound (human_upper_bound's section, if any), the permutation tests and the
    settings, in pipeline.report's look."""
    from pipeline.report import Section, render_sections_page

    options = record["options"]
    profiles, tables = lin_tables(rows)
    sections, explained = [], set()
    by_level = sorted(tables.items(), key=lambda table: options["levels"].index(table[0][0]))
    for (level, judgment, measure), cells in by_level:
        lines = []
        for metric in dict.fromkeys(metric for metric, _ in cells):
            line = {"metric": metric}
            for profile in profiles:
                r = cells.get((metric, profile))
                for method, name in COEFFICIENTS.items():
                    line[_label(name, profile, profiles)] = _coefficient(r, method)
                if level == "summary":
                    line[_label("undefined", profile, profiles)] = None if r is None else r["undefined"]
            lines.append(line)
        title = f"{level.capitalize()} level: {judgment}, {MEASURE_NAMES.get(measure, measure)}"
        sections.append(
            Section(title, note=_table_note(level, cells, options, level not in explained), rows=lines)
        )
        explained.add(level)
    sections += human_sections
    if comparisons:
        sections.append(_comparisons_section(comparisons, profiles, options))
    sections.append(Section("Settings", rows=_settings(record), columns=["setting", "value"]))
    counts = record["counts"]
    cards = [
        ("systems", max(r["systems"] for r in rows)),
        ("documents", max(r["documents"] for r in rows)),
        ("metrics", len({r["metric"] for r in rows})),
        ("judgments", len(record["judgments"])),
        ("judged and scored", counts["matched_pairs"]),
        ("judged, not scored", counts["judged_pairs_without_scores"]),
    ]
    return render_sections_page(
        "ROUGE meta-evaluation",
        f"How well each metric agrees with the human judgments: {', '.join(record['judgments'])}",
        cards,
        sections,
        "Written by rouge-pipeline meta-eval. Every number, with Kendall tau-c and the counts per "
        "coefficient, is in correlations.parquet / .csv; the settings and inputs in meta_eval.json.",
    )


def _table_note(level: str, cells: dict, options: dict, explain: bool) -> str:
    """The counts; `explain`: the first table of a level also says what the level means."""
    note = f"{LEVEL_NOTES[level]} " if explain else ""
    note += f"{_span(cells, 'systems')} systems, {_span(cells, 'documents')} documents."
    if explain and options["replicates"]:
        note += f" Each cell: the coefficient [its {options['confidence']:g}% bootstrap interval]."
    if explain and level == "summary":
        note += " Undefined: documents without a correlation (scores or judgments equal for every system), "
        note += "counted as 0." if options["undefined"] == "zero" else "left out."
        if options["alpha"] is not None:
            note += f" Only per-document correlations with p <= {options['alpha']:g} are averaged."
    return note


def _label(name: str, profile: str, profiles: list[str]) -> str:
    return name if len(profiles) == 1 else f"{profile}: {name}"


def _coefficient(row: Optional[dict], method: str) -> str:
    if row is None:
        return ""
    low, high = row[f"{method}_low"], row[f"{method}_high"]
    interval = "" if low is None or high is None else " [%.2f, %.2f]" % (low, high)
    return _two(row[method]) + interval


def _span(cells: dict, count: str) -> str:
    values = sorted({r[count] for r in cells.values()})
    return str(values[0]) if len(values) == 1 else f"{values[0]}\u2013{values[-1]}"


def human_upper_bound(scores: dict, judged: dict, human: Optional[str]) -> list:
    """The report's section on the run's human pseudo-system (Lin 2004 section 2.1), if
    the scores have it: per (profile, metric), its mean score per measure next to the
    best system's."""
    from pipeline.report import Section

    lines: dict = {}
    for profile, metric, measure in sorted(scores, key=lambda s: (s[0], metric_order(s[1]))):
        values: dict = {}
        for (system, _), value in scores[profile, metric, measure].items():
            if not math.isnan(value):
                values.setdefault(system, []).append(value)
        if human not in values:
            continue
        means = {system: math.fsum(v) / len(v) for system, v in values.items()}
        line = lines.setdefault((profile, metric), {"profile": profile, "metric": metric})
        line[f"{human} {measure}"] = means.pop(human)
        line[f"best system {measure}"] = max(means.values(), default=None)
    if not lines:
        return []
    if len({profile for profile, _ in lines}) == 1:
        for line in lines.values():
            del line["profile"]
    note = (
        f"{human}: the run's human pseudo-system, each reference scored against the others (Lin 2004, "
        "section 2.1), the score a system reaches by writing like the people who wrote the references. "
        "Means over the documents each has; best system: the highest mean of the other systems. "
        + (
            f"The judgments rate {human}: it is one of the systems correlated above."
            if any(system == human for system, _ in judged)
            else f"The judgments do not rate {human}: it is not in the correlations."
        )
    )
    return [Section("Human upper bound", note=note, rows=list(lines.values()))]


def _comparisons_section(comparisons: list[dict], profiles: list[str], options: dict):
    from pipeline.report import Section

    tests: dict = {}
    for c in comparisons:
        key = (c["profile"], c["level"], c["judgment"], c["measure"], c["metric_x"], c["metric_y"])
        tests.setdefault(key, {})[c["method"]] = c
    lines = []
    by_level = sorted(tests.items(), key=lambda test: options["levels"].index(test[0][1]))
    for (profile, level, judgment, measure, x, y), by_method in by_level:
        line = {"profile": profile} if len(profiles) > 1 else {}
        line.update(level=level, judgment=judgment, measure=MEASURE_NAMES.get(measure, measure), X=x, Y=y)
        for method, name in COEFFICIENTS.items():
            line[name] = _verdict(by_method.get(method), x, y)
        lines.append(line)
    note = (
        "Does X correlate better than Y?  Each cell: the metric with the higher correlation, by how much, "
        'and the one-sided permutation p-value of "X correlates better than Y" (Deutsch, Dror and Roth '
        f"2021; {options['replicates']} permutations swapping X's and Y's scores per "
        f"{SWAPPED[options['permutation_unit']]}, seed {options['seed']}): a small p says X's lead is "
        "not chance; when Y leads, p is large."
    )
    return Section("Metric against metric", note=note, rows=lines)


def _verdict(test: Optional[dict], x: str, y: str) -> str:
    if test is None or test["delta"] is None:
        return "n/a"
    delta = test["delta"]
    leader = x if delta > 0 else y if delta < 0 else "tie"
    p = "n/a" if test["p_value"] is None else "%.3f" % test["p_value"]
    return f"{leader} by {abs(delta):.3f}, p {p}"


def _settings(record: dict) -> list[dict]:
    options, inputs = record["options"], record["inputs"]
    source = inputs.get("run") or inputs.get("metric_scores")
    if inputs.get("signature"):
        source += f" (signature {inputs['signature']})"
    intervals = "none (--replicates 0)"
    if options["replicates"]:
        intervals = (
            f"{options['confidence']:g}%, {options['replicates']} bootstrap replicates resampling "
            f"{RESAMPLED[options['resample']]}, seed {options['seed']}"
        )
    alpha = options["alpha"]
    settings = {
        "metric scores": source,
        "judgments": f"{inputs['judgments']} (columns {', '.join(record['judgments'])})",
        "levels": ", ".join(options["levels"]),
        "intervals": intervals,
        "summary-level filter": "none" if alpha is None else f"per-document correlations with p <= {alpha:g}",
        "undefined documents": {"exclude": "left out", "zero": "counted as 0"}[options["undefined"]],
        "metrics": ", ".join(options["metrics"] or ["all"]),
        "duplicated systems": ", ".join(options["duplicate_systems"]) or "none",
        "rouge-pipeline": record["version"],
    }
    return [{"setting": k, "value": v} for k, v in settings.items()]


def _csv(rows: list[dict], columns: list[str]) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: "" if v is None else repr(v) if isinstance(v, float) else v for k, v in row.items()}
        )
    return text.getvalue()


def _parquet(rows: list[dict], columns: list[str]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def kind(column):
        return pa.string() if column in _STRINGS else pa.int64() if column in _INTEGERS else pa.float64()

    schema = pa.schema([(c, kind(c)) for c in columns])
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    return sink.getvalue()


def publish(folder: str, files: dict[str, bytes]) -> None:
    """Write the files into a fresh folder next to `folder`, then rename it into place.

    An existing non-empty `folder` is refused: nothing is overwritten.
    """
    final = os.path.abspath(folder)
    if os.path.exists(final) and (not os.path.isdir(final) or os.listdir(final)):
        raise RougeConfigError(f"output folder {final} exists and is not empty; choose another --output")
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(final)}.staging-{uuid.uuid4().hex[:12]}")
    os.mkdir(staging)
    try:
        for name, data in files.items():
            with open(os.path.join(staging, name), "wb") as fh:
                fh.write(data)
        os.rename(staging, final)  # onto nothing, or onto an empty folder
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# --------------------------------------------------------------------------
# The command
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


def meta_eval_command(args: argparse.Namespace, extra=None) -> int:
    started = time.time()
    options = args
    options.levels = _split(args.levels) or list(corr.LEVELS)
    for level in options.levels:
        if level not in corr.LEVELS:
            raise RougeConfigError(f"--levels: {level!r} is not one of {corr.LEVELS}")
    if args.replicates < 0:
        raise RougeConfigError("--replicates must be >= 0 (0: no intervals)")
    if args.alpha is not None and not 0 < args.alpha <= 1:
        raise RougeConfigError("--alpha must be in (0, 1]")
    if args.output and os.path.exists(args.output) and os.listdir(args.output):
        raise RougeConfigError(
            f"output folder {args.output} exists and is not empty; choose another --output"
        )
    pairs = _pairs(args.compare)
    if pairs and not args.replicates:
        raise RougeConfigError("--compare needs --replicates > 0 (the permutations)")
    judged, judgments = load_judgments(args.judgments, _split(args.judgment_columns))
    scores, source = load_metric_scores(args.run, args.metric_scores, _split(args.metric_columns), judgments)
    wanted = _split(args.metrics)
    if wanted:
        scores = {k: v for k, v in scores.items() if k[1] in wanted}
    copies = _copies(args.duplicate_system)
    duplicate_systems(judged, copies)
    for series in scores.values():
        duplicate_systems(series, copies)
    if not scores:
        raise RougeInputError("no metric scores to correlate")
    rows = correlation_rows(scores, judged, judgments, options)
    comparisons = comparison_rows(scores, judged, judgments, pairs, options) if pairs else []
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
        publish(
            args.output,
            {
                "correlations.parquet": _parquet(rows, COLUMNS),
                "correlations.csv": _csv(rows, COLUMNS).encode("utf-8"),
                **(
                    {
                        "comparisons.parquet": _parquet(comparisons, COMPARISON_COLUMNS),
                        "comparisons.csv": _csv(comparisons, COMPARISON_COLUMNS).encode("utf-8"),
                    }
                    if pairs
                    else {}
                ),
                "correlations.md": text.encode("utf-8"),
                "meta_eval.json": (json.dumps(record, indent=1) + "\n").encode("utf-8"),
                "report.html": report_html(rows, comparisons, record, human).encode("utf-8"),
            },
        )
        print(f"results: {os.path.abspath(args.output)}")
    sys.stdout.write(text)
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
    parser.add_argument("--output", metavar="DIR", help="result folder (must not exist or be empty)")
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
    parser.set_defaults(handler=meta_eval_command)
    return parser
