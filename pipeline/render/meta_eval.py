"""meta-eval's tables and report.html for people: Lin (2004)-shaped tables per
level, judgment and measure, the human upper bound and the metric comparisons."""

from __future__ import annotations

import math
from typing import Optional


from pipeline.render.html import MARKER_COLOUR, Section, figure_svg, render_sections_page
from pipeline.render.numbers import coefficient, interval, p_value
from pipeline.render.tables import Markdown, markdown_cell, markdown_table
from rouge_core import names


def lin_tables(rows: list[dict]) -> tuple[list[str], dict]:
    """The profiles (the columns) and, per (level, judgment, measure) in first-seen order,
    the cells {(metric, profile): row}: Lin (2004) Table 1's shape."""
    tables: dict = {}
    for r in rows:
        tables.setdefault((r["level"], r["judgment"], r["measure"]), {})[r["metric"], r["profile"]] = r
    return list(dict.fromkeys(r["profile"] for r in rows)), tables


def markdown(rows: list[dict], options, intervals: bool = False, saved: bool = True) -> str:
    """Lin (2004) Table 1's shape: per level, judgment and measure, metrics as rows and
    profiles as columns; each cell Pearson / Spearman / Kendall tau-b, with
    `intervals` each followed by its bootstrap interval.  `saved`: the tables were
    written (the last line points at them), else it says how to keep them.  Names
    from the input (metrics, profiles, judgments) are escaped, never markup."""
    cell = markdown_cell

    profiles, tables = lin_tables(rows)
    groups = list(dict.fromkeys((level, judgment) for level, judgment, _ in tables))
    out = []
    ordered = sorted(tables.items(), key=lambda t: (groups.index(t[0][:2]), MEASURE_ORDER.get(t[0][2], 9)))
    for (level, judgment, measure), cells in ordered:  # F first, then R and P
        metrics = list(dict.fromkeys(metric for metric, _ in cells))
        any_row = next(iter(cells.values()))
        note = f"{any_row['systems']} systems, {any_row['documents']} documents"
        if level == "summary" and options.alpha is not None:
            note += f", per-document correlations with p <= {options.alpha} only"
        out += [
            f"### {level}-level correlation with {cell(judgment)}, {measure} ({note})",
            "",
            "Pearson r / Spearman rho / Kendall tau-b" + (", each [its bootstrap interval]." if intervals else "."),
            "",
        ]
        shown = _coefficient if intervals else (lambda r, m: coefficient(r[m]))
        body = [
            [metric] + [
                "" if (r := cells.get((metric, profile))) is None
                else Markdown(" / ".join(shown(r, m) for m in ("pearson", "spearman", "kendall_b")))
                for profile in profiles
            ]
            for metric in metrics
        ]
        out.append(markdown_table(["metric", *profiles], body, "l" + "r" * len(profiles)))
    if options.replicates:
        where = "correlations.csv" if saved else "shown above; --output DIR keeps them, with the counts, in correlations.csv"
        out.append(
            f"Bootstrap intervals ({options.confidence:g}%, {options.replicates} replicates over "
            f"{options.resample}, seed {options.seed}): {where}."
        )
    elif not saved:
        out.append("Not saved: --output DIR writes correlations.csv (with the counts) and report.html.")
    return "\n".join(out) + "\n"


def comparisons_markdown(comparisons: list[dict]) -> str:
    """The permutation tests as Markdown: per test, which metric leads, by how much, and p."""
    if not comparisons:
        return ""
    tests: dict = {}
    for c in comparisons:
        key = (c["profile"], c["level"], c["judgment"], c["measure"], c["metric_x"], c["metric_y"])
        tests.setdefault(key, {})[c["method"]] = c
    head = ["profile", "level", "judgment", "measure", "X", "Y", *COEFFICIENTS.values()]
    body = [
        [profile, level, judgment, measure, x, y] + [_verdict(by_method.get(m), x, y) for m in COEFFICIENTS]
        for (profile, level, judgment, measure, x, y), by_method in tests.items()
    ]
    return "### Does X correlate better than Y? (one-sided permutation tests)\n\n" + markdown_table(
        head, body, "l" * len(head)
    )


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
    options = record["options"]
    profiles, tables = lin_tables(rows)
    sections, explained = ranking_sections(rows, options), set()
    nav = [(0, "Ranking")]
    chart = correlation_chart(rows, options)
    if chart is not None:
        nav.append((len(sections), "Chart"))
        sections.append(chart)
    by_level = sorted(tables.items(), key=lambda table: (options["levels"].index(table[0][0]),
                                                          MEASURE_ORDER.get(table[0][2], 9)))
    for (level, judgment, measure), cells in by_level:
        if level not in explained:
            nav.append((len(sections), f"{level.capitalize()} level"))
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
    if human_sections:
        nav.append((len(sections), "Human upper bound"))
    sections += human_sections
    if comparisons:
        nav.append((len(sections), "Metric against metric"))
        sections.append(_comparisons_section(comparisons, profiles, options))
    nav.append((len(sections), "Settings"))
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
        nav=nav,
    )


# --------------------------------------------------------------------------
# the ranking and the chart: which metric agrees best with each judgment
# --------------------------------------------------------------------------

MEASURE_ORDER = {"F": 0, "score": 0, "R": 1, "P": 2}  # F first
RANKED_BY = "kendall_b"
BEST = "\u2605 best"


def _ranked(rows: list[dict], options: dict) -> dict:
    """Per judgment: (the measure shown, the levels, the series ranked best first,
    {(level, series): row}).  A series is (profile, metric); the measure is F (or a
    wide table's "score", else the first seen); ranked by the first level's Kendall
    tau-b, a series without a value last."""
    out: dict = {}
    for judgment in dict.fromkeys(r["judgment"] for r in rows):
        mine = [r for r in rows if r["judgment"] == judgment]
        measure = min((r["measure"] for r in mine), key=lambda m: MEASURE_ORDER.get(m, 9))
        cells = {(r["level"], (r["profile"], r["metric"])): r for r in mine if r["measure"] == measure}
        levels = [level for level in options["levels"] if any(k[0] == level for k in cells)]
        series = list(dict.fromkeys(key[1] for key in cells))

        def value(s, level):
            r = cells.get((level, s))
            return None if r is None else r[RANKED_BY]

        series.sort(key=lambda s: (value(s, levels[0]) is None, -(value(s, levels[0]) or 0)))
        out[judgment] = (measure, levels, series, cells)
    return out


def _series_label(series: tuple, several_profiles: bool) -> str:
    profile, metric = series
    return f"{profile} {metric}" if several_profiles else metric


def ranking_sections(rows: list[dict], options: dict) -> list:
    """One short table per judgment: the metrics ranked by how well they agree with it
    (Kendall tau-b of F, with its interval), the best of each level marked."""
    several = len({r["profile"] for r in rows}) > 1
    sections = []
    for judgment, (measure, levels, series, cells) in _ranked(rows, options).items():
        best = {}
        for level in levels:
            values = [(cells[level, s][RANKED_BY], s) for s in series
                      if (level, s) in cells and cells[level, s][RANKED_BY] is not None]
            if values:
                best[level] = max(values, key=lambda v: v[0])[1]
        lines = []
        for rank, s in enumerate(series, 1):
            line = {"#": rank, "metric": _series_label(s, several)}
            for level in levels:
                text = _coefficient(cells.get((level, s)), RANKED_BY)
                line[f"{level} level"] = f"{text}  {BEST}" if best.get(level) == s else text
            lines.append(line)
        name = MEASURE_NAMES.get(measure, measure)
        note = (
            f"Kendall \u03c4b of each metric's {name} with {judgment}"
            + (f" [its {options['confidence']:g}% bootstrap interval]" if options["replicates"] else "")
            + f", ranked by the {levels[0]} level, best first; {BEST} marks the best of each level. "
            "The other coefficients and measures are in the tables below."
        )
        sections.append(Section(f"Ranking for {judgment}", note=note, rows=lines))
    return sections


def correlation_chart(rows: list[dict], options: dict):
    """The ranking as a chart: per judgment (rows) and level (columns), each metric's
    Kendall tau-b with its interval as a dot and whisker, best at the top."""
    import matplotlib  # noqa: PLC0415 (only when a report is written)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ranked = _ranked(rows, options)
    levels = list(dict.fromkeys(level for _, ls, _, _ in ranked.values() for level in ls))
    if not ranked or not levels:
        return None
    several = len({r["profile"] for r in rows}) > 1
    most = max(len(series) for _, _, series, _ in ranked.values())
    with matplotlib.rc_context({"font.size": 9, "svg.fonttype": "none", "axes.spines.top": False,
                                "axes.spines.right": False, "text.usetex": False}):
        fig, axes = plt.subplots(len(ranked), len(levels), squeeze=False,
                                 figsize=(5.2 * len(levels), 0.9 + 0.28 * most * len(ranked)))
        for i, (judgment, (measure, _, series, cells)) in enumerate(ranked.items()):
            for j, level in enumerate(levels):
                ax = axes[i][j]
                for k, s in enumerate(series):
                    r = cells.get((level, s))
                    if r is None or r[RANKED_BY] is None:
                        continue
                    y = len(series) - 1 - k
                    low, high = r[f"{RANKED_BY}_low"], r[f"{RANKED_BY}_high"]
                    if low is not None and high is not None:
                        ax.plot([low, high], [y, y], color=MARKER_COLOUR, linewidth=1.6)
                    ax.plot([r[RANKED_BY]], [y], "o", color=MARKER_COLOUR, markersize=4.5)
                ax.set_yticks(range(len(series)))
                ax.set_yticklabels([_series_label(s, several)[:32] for s in reversed(series)])
                ax.axvline(0, color="#d0d7de", linewidth=0.8)
                ax.grid(axis="x", color="#eaeef2", linewidth=0.6)
                ax.set_xlim(-1.05, 1.05)
                ax.set_title(f"{judgment}: {level} level ({MEASURE_NAMES.get(measure, measure)})", fontsize=9,
                             loc="left")
                for text in ax.get_yticklabels() + [ax.title]:
                    text.set_parse_math(False)
        fig.supxlabel("Kendall \u03c4b" + (" with its bootstrap interval" if options["replicates"] else ""), fontsize=9)
        fig.tight_layout()
        svg = figure_svg(fig)
        plt.close(fig)
    return Section("Chart", note="Kendall \u03c4b of each metric with each judgment, best at the top of each panel.",
                   html=svg)


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
    bounds = interval(row[f"{method}_low"], row[f"{method}_high"])
    return coefficient(row[method]) + (f" {bounds}" if bounds else "")


def _span(cells: dict, count: str) -> str:
    values = sorted({r[count] for r in cells.values()})
    return str(values[0]) if len(values) == 1 else f"{values[0]}\u2013{values[-1]}"


def human_upper_bound(scores: dict, judged: dict, human: Optional[str]) -> list:
    """The report's section on the run's human pseudo-system (Lin 2004 section 2.1), if
    the scores have it: per (profile, metric), its mean score per measure next to the
    best system's."""
    lines: dict = {}
    for profile, metric, measure in sorted(scores, key=lambda s: (s[0], names.sort_key(s[1]))):
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
    return f"{leader} by {coefficient(abs(delta))}, p {p_value(test['p_value']) or 'n/a'}"


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
