"""The history of a benchmark for people (report.html of `rouge-pipeline history`):
per group of runs of one signature, a chart per metric of every system's score
across the runs with its interval, each system's last significant change marked,
and the table of those changes.  The logic (reading, grouping, the paired tests)
is pipeline/history.py; this formats and draws."""

from __future__ import annotations

import math

from pipeline.history import Group, metric_label
from pipeline.render.html import CHART_LABEL_CHARS, CHART_STYLE, MARKER_COLOUR, figure_svg, render_history_page
from pipeline.render.compare import MEASURE_WORDS
from pipeline.render.numbers import in_points, p_value

CHART_SYSTEMS = 20  # lines per panel (the best in the last run); the tables and history.csv hold every system
COLOURS = ["#1d5fb4", "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#b7950b", "#2c3e50",
           "#e84393", "#00838f", "#6d4c41", "#5e35b1", "#43a047", "#f4511e", "#3949ab", "#757575", "#c2185b",
           "#00897b", "#827717"]


def score_of(row: dict, measure: str) -> tuple:
    """(score, low, high) a row shows: ROUGE-1.5.5's printed average and interval
    where the run has them, else the mean and (F only) its bootstrap interval."""
    if row.get(f"rouge155_{measure}") is not None:
        return row[f"rouge155_{measure}"], row.get(f"rouge155_{measure}_low"), row.get(f"rouge155_{measure}_high")
    if measure == "f_measure":
        return row.get("f_measure"), row.get("bootstrap_f_measure_low"), row.get("bootstrap_f_measure_high")
    return row.get(measure), None, None


def run_label(run, index: int) -> str:
    return (run.started[:16].replace("T", " ") if run.started else "") or f"run {index + 1}"


def series(group: Group, measure: str) -> dict:
    """{metric label: {system: [(score, low, high) or None per run]}}, metrics and
    systems in the order the runs' tables give them."""
    out: dict = {}
    for k, run in enumerate(group.runs):
        for row in run.rows:
            per_system = out.setdefault(metric_label(row.get("profile"), row["metric"]), {})
            per_system.setdefault(row["system"], [None] * len(group.runs))[k] = score_of(row, measure)
    return out


def group_chart(group: Group, measure: str, changes: dict, confidence: str):
    """Small multiples, one panel per metric: a line per system across the runs, a
    whisker over each interval, a ring on its last significant change."""
    import matplotlib
    from matplotlib.figure import Figure

    lines = series(group, measure)
    columns = 1 if len(lines) == 1 else 2
    rows = math.ceil(len(lines) / columns)
    width = max(5.6, min(11.0, 2.6 + 0.55 * len(group.runs)))
    with matplotlib.rc_context(CHART_STYLE):
        fig = Figure(figsize=(width * columns, 3.4 * rows), layout="constrained")
        axes = list(fig.subplots(rows, columns, squeeze=False).flat)
        for ax, (metric, systems) in zip(axes, lines.items()):
            _draw_metric(ax, group, metric, systems, changes, measure, confidence)
        for ax in axes[len(lines):]:
            ax.set_visible(False)
        return figure_svg(fig)


def _draw_metric(ax, group: Group, metric: str, systems: dict, changes: dict, measure: str, confidence: str) -> None:
    last = {s: next((v[0] for v in reversed(points) if v and v[0] is not None), -1.0) for s, points in systems.items()}
    shown = sorted(systems, key=lambda s: (-last[s], s))[:CHART_SYSTEMS]
    x = list(range(len(group.runs)))
    for k, system in enumerate(shown):
        colour = COLOURS[k % len(COLOURS)]
        points = systems[system]
        dodge = 0.3 * ((k + 0.5) / len(shown) - 0.5)  # (side by side: the intervals do not hide each other)
        xs = [i for i in x if points[i] and points[i][0] is not None]
        ys = [100 * points[i][0] for i in xs]
        ax.plot([i + dodge for i in xs], ys, "-o", color=colour, markersize=4, linewidth=1.2, label=system[:CHART_LABEL_CHARS])
        whiskers = [(i + dodge, 100 * points[i][1], 100 * points[i][2]) for i in xs if None not in points[i][1:]]
        if whiskers:
            ax.vlines([w[0] for w in whiskers], [w[1] for w in whiskers], [w[2] for w in whiskers], color=colour,
                      linewidth=1.0, alpha=0.6)
        change = changes.get((system, metric))
        if change and points[change["run"]] and points[change["run"]][0] is not None:
            ax.plot([change["run"] + dodge], [100 * points[change["run"]][0]], "o", markersize=11, markerfacecolor="none",
                    markeredgecolor=colour, markeredgewidth=1.6)
    ax.set_xticks(x, [run_label(run, i) for i, run in enumerate(group.runs)], rotation=30, ha="right")
    for label in ax.get_xticklabels():
        label.set_parse_math(False)
    ax.grid(axis="y", color="#e4e7eb", linewidth=0.8)
    ax.set_axisbelow(True)
    ax.set_title(metric, loc="left", fontweight="bold", color="#1f2328", parse_math=False)
    interval = f"{confidence} CI" if confidence else "CI"
    ax.set_ylabel(f"{MEASURE_WORDS.get(measure, measure)} \u00d7 100 ({interval})", color="#57606a")
    if shown:
        legend = ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
        for text in legend.get_texts():
            text.set_parse_math(False)


def history_page(groups: list[Group], changes: list[dict], measure: str, options: str, confidence: str) -> str:
    """report.html of a history: the runs, then per group of one signature its chart
    and its last significant changes."""
    views = []
    for number, (group, found) in enumerate(zip(groups, changes), 1):
        runs = [{"label": run_label(run, i), "run_id": run.run_id, "path": run.path} for i, run in enumerate(group.runs)]
        rows = [
            {"system": system, "metric": metric, "run": runs[change["run"]]["label"], "verdict": change["verdict"],
             "change": in_points(change["delta_points"]), "p": p_value(change["p_adjusted"]),
             "documents": str(change["documents"])}
            for (system, metric), change in sorted(found.items())
        ]
        views.append({
            "number": number, "signature": group.signature, "runs": runs, "changes": rows,
            "differences": [f"{key}: {before if before is not None else '(absent)'} \u2192 {after if after is not None else '(absent)'}"
                            for key, before, after in group.differences],
            "chart": group_chart(group, measure, found, confidence),
        })
    return render_history_page({
        "groups": views, "measure": MEASURE_WORDS.get(measure, measure), "options": options,
        "runs": sum(len(g.runs) for g in groups), "marker_colour": MARKER_COLOUR,
    })
