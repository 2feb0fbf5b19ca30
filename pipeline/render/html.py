"""report.html: the result folder's page for people.

One self-contained HTML file (inline CSS and SVG, no script, nothing fetched
from the network) that shows at a glance: the run's signature and counts, every
system's score per metric with its confidence interval as a chart and as a
table, the paired-significance matrix, the errors by reason, and the versions.
`render_sections_page` renders a page of `Section`s alone (meta-eval's) in the same look.

The same input gives the same bytes: the page has no clock of its own (its date
is the run record's), the scores chart is SVG written with fixed decimals
(pipeline.render.chart), the sections' matplotlib charts SVG with a fixed hash
salt and no date, and every ordering is explicit.  Every text that comes from the
input (system names, metric tags, messages, paths) is escaped: by Jinja2's
autoescape, in the chart by markupsafe, in matplotlib's SVG by matplotlib with
mathtext parsing switched off.

jinja2 and matplotlib are imported inside the functions, so importing the
pipeline does not pay for them.
"""

from __future__ import annotations

import dataclasses
import io
import math
import re
from typing import Optional, Sequence

from pipeline.io import files
from pipeline.coverage import Coverage, docs_cell, text_warnings
from pipeline.io.tables import read_parquet_rows
from pipeline.config import parse_profiles_signature
from pipeline.records import REASONS
from pipeline.render.chart import scores_chart
from pipeline.render.numbers import general, points
from rouge_core.errors import RougeConfigError

REPORT_NAME = "report.html"
# The one colour of the chart's dots and whiskers (the report test looks for it).
MARKER_COLOUR = "#1d5fb4"
SVG_HASH_SALT = "rouge-pipeline-report"
CHART_LABEL_CHARS = 32  # longer system names are cut in the chart (the tables show them whole)
MAX_LISTED_INPUTS = 20
DIAGONAL = {"text": "\u00b7", "stars": "", "tone": "self", "title": ""}
MEASURE_NAMES = {"recall": "recall", "precision": "precision", "f_measure": "F-measure"}
# Systems per significance matrix: the best of each metric.  A matrix of every pair
# is S x S cells (9 matrices of 1,000,000 cells at 1,000 systems: gigabytes of HTML);
# every pair is in significance.parquet and significance.csv.
MATRIX_SYSTEMS = 30
CHART_SYSTEMS = 50  # systems per panel of the chart (the best); the table lists all
STARS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
CHART_STYLE = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.edgecolor": "#8c959f",
    "axes.linewidth": 0.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "xtick.color": "#57606a",
    "ytick.color": "#1f2328",
    "svg.fonttype": "none",  # text stays text: searchable, crisp, small
}


@dataclasses.dataclass(frozen=True)
class Section:
    """An extra part of the report, such as correlation with human judgments or a
    comparison with a previous run.

    title: the heading.  note: a paragraph of plain text under it.
    rows (and optionally columns, else the rows' keys in order): a table; every
    cell is escaped, floats are printed with 4 significant digits.
    html: markup the caller built and vouches for, e.g. `figure_svg(fig)`; it is
    inserted as is only when it is a `markupsafe.Markup`, a plain str is escaped
    and shows as text.
    """

    title: str
    note: str = ""
    rows: Sequence[dict] = ()
    columns: Optional[Sequence[str]] = None
    html: object = None


def figure_svg(fig) -> "Markup":  # noqa: F821 (markupsafe is imported lazily)
    """A matplotlib figure as inline SVG markup, the same bytes for the same figure."""
    import matplotlib
    from markupsafe import Markup

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": SVG_HASH_SALT, "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    # Drop the XML declaration and DOCTYPE: the <svg> element goes inside the HTML.
    return Markup(text[text.index("<svg") :].strip())


def render_report(
    system_rows: list[dict],
    significance_rows: list[dict],
    errors_by_reason: dict[str, int],
    run_record: dict,
    extra_sections: Optional[list[Section]] = None,
    significance_totals: Optional[dict] = None,
) -> str:
    """The report as HTML text.

    system_rows: the per-system table (pipeline.tables.SYSTEM_COLUMNS), any order.
    significance_rows: metric, measure, system_a, system_b, documents, mean_a,
    mean_b, difference, ci_low, ci_high, effect_size, statistic, p_value, p_floor,
    method, p_adjusted (empty when there is one system or significance was not asked for).
    errors_by_reason: error rows per reason code (pipeline.records.REASONS).
    run_record: run.json (signature, counts, versions, ...); missing keys are shown as absent.
    significance_totals: (metric, measure) -> (systems, pairs, significant pairs, smallest
    p floor) of the whole table, when significance_rows hold only the pairs the matrices show.
    """
    signature = run_record.get("signature") or next((r["signature"] for r in system_rows), "")
    confidence = confidence_level(signature)
    coverage = Coverage.from_counts(run_record.get("counts") or {})
    metrics = _metric_views([dict(r, documents_had=coverage.had(r["system"])) for r in system_rows])
    rank = {m["metric"]: [s["system"] for s in m["systems"]] for m in metrics}
    significance = _significance_views(significance_rows, rank, significance_totals or {})
    counts = run_record.get("counts") or {}
    systems = sorted({r["system"] for r in system_rows})
    context = {
        "signature": signature,
        "confidence": confidence,
        "started": run_record.get("started", ""),
        "counts": counts,
        "systems": systems,
        "metrics": metrics,
        "chart": scores_chart([dict(m, systems=m["systems"][:CHART_SYSTEMS]) for m in metrics], confidence,
                              MARKER_COLOUR, CHART_LABEL_CHARS) if metrics else "",
        "chart_systems": CHART_SYSTEMS if len(systems) > CHART_SYSTEMS else 0,
        "marker_colour": MARKER_COLOUR,
        "significance": significance,
        "significance_note": _significance_note(significance_rows, systems),
        "significance_floor": _floor_note(significance, run_record.get("significance_signature")),
        "errors": _error_views(errors_by_reason),
        "errors_total": sum(errors_by_reason.values()),
        "missing_documents": sorted((counts.get("systems_missing_documents") or {}).items()),
        "rejected_warning": (run_record.get("rejected") or {}).get("warning"),
        "text_warnings": [line.removeprefix("warning: ") for line in text_warnings(counts.get("text_checks") or {})],
        "run": _run_view(run_record),
        "sections": [_section_view(s) for s in extra_sections or ()],
    }
    return _environment().get_template("report.html").render(context)


def render_sections_page(
    title: str, subtitle: str, cards: Sequence[tuple[str, object]], sections: list[Section], footer: str,
    nav: Optional[Sequence[tuple[int, str]]] = None,
) -> str:
    """A page of sections only, in the report's look: the title, `cards` (label, value)
    as the header's counts, the navigation, the sections, and `footer`.  `nav`:
    (section index, label) of the few links the header shows (default: one per
    section).  meta-eval's report.html is one."""
    context = {
        "title": title,
        "subtitle": subtitle,
        "cards": list(cards),
        "sections": [_section_view(s) for s in sections],
        "nav": [(i + 1, label) for i, label in nav] if nav is not None else
        [(i + 1, s.title) for i, s in enumerate(sections)],
        "footer": footer,
    }
    return _environment().get_template("sections.html").render(context)


def render_history_page(context: dict) -> str:
    """history's report.html from `pipeline.render.history.history_page`'s context, in
    the report's look."""
    return _environment().get_template("history.html").render(dict(context, sections=[]))


def render_comparison_page(context: dict) -> str:
    """compare's report.html from `pipeline.render.compare.page_context`: the verdict
    first, then the changes, the documents that moved most and the systems added
    and removed, in the report's look."""
    return _environment().get_template("compare.html").render(dict(context, sections=[]))


def write_run_report(folder: str, run_record: dict, significance_table: str = "significance.parquet") -> str:
    """Write `report.html` of a finished result folder (local or a URL) from its own
    tables: system_scores.parquet, the significance table when the folder has one, and
    the run record's counts; returns its path."""
    errors_by_reason = (run_record.get("counts") or {}).get("errors_by_reason") or {}
    system_rows = read_parquet_rows(files.join(folder, "system_scores.parquet"))
    several = len({r.get("profile") for r in system_rows}) > 1
    if several:  # several profiles: "stem ROUGE-1", ...
        system_rows = [{**r, "metric": f"{r['profile']} {r['metric']}"} for r in system_rows]
    significance_path = files.join(folder, significance_table)
    significance, totals = [], {}
    if files.exists(significance_path):
        significance, totals = _matrix_pairs(significance_path, system_rows, several)
    path = files.join(folder, REPORT_NAME)
    html = render_report(system_rows, significance, errors_by_reason, run_record, significance_totals=totals)
    files.write_bytes(path, html.encode("utf-8"))
    return path


def _matrix_pairs(path: str, system_rows: list[dict], several: bool) -> tuple[list[dict], dict]:
    """The significance rows the report's matrices show (both systems among the
    MATRIX_SYSTEMS best of the row's metric), read column-wise so that a table of
    millions of pairs never becomes millions of dicts, and (metric, measure) ->
    (systems, pairs, significant pairs, smallest p floor) of the whole table."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(files.read_bytes(path)))
    if several:
        table = table.set_column(
            table.schema.get_field_index("metric"),
            "metric",
            pc.binary_join_element_wise(table["profile"], table["metric"], " "),
        )
    level = max(level for level, _ in STARS)
    significant = pc.fill_null(pc.less(table["p_adjusted"], level), False)
    grouped = (
        pa.table({"metric": table["metric"], "measure": table["measure"], "significant": significant.cast(pa.int64()),
                  "p_floor": table["p_floor"]})
        .group_by(["metric", "measure"])
        .aggregate([("significant", "count"), ("significant", "sum"), ("p_floor", "min")])
    )
    systems = {}
    for metric in pc.unique(table["metric"]).to_pylist():
        part = table.filter(pc.equal(table["metric"], metric))
        systems[metric] = {s for name in ("system_a", "system_b") for s in pc.unique(part[name]).to_pylist()}
    totals = {
        (row["metric"], row["measure"]): (
            len(systems[row["metric"]]), row["significant_count"], row["significant_sum"], row["p_floor_min"]
        )
        for row in grouped.to_pylist()
    }
    best = {view["metric"]: [s["system"] for s in view["systems"][:MATRIX_SYSTEMS]] for view in _metric_views(system_rows)}
    keep = pc.is_null(table["metric"])  # all false: the column has no null
    for metric, shown in best.items():
        both = pc.and_(pc.is_in(table["system_a"], pa.array(shown)), pc.is_in(table["system_b"], pa.array(shown)))
        keep = pc.or_(keep, pc.and_(pc.equal(table["metric"], metric), both))
    return table.filter(keep).to_pylist(), totals


def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipeline.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = _pct
    env.filters["cell"] = _cell
    return env


# ----------------------------------------------------------------- formatting


def _number(value) -> Optional[float]:
    if value is None or isinstance(value, bool):
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _pct(value, signed: bool = False) -> str:
    """A 0-1 score as x100 with two decimals (`numbers.points`); absent as an en dash."""
    return points(value, signed) or "\u2013"


def _cell(value) -> str:
    if isinstance(value, float):
        return general(value)
    return "" if value is None else str(value)


def confidence_level(signature: str) -> str:
    """The intervals' level from the signature's `ci` fields ("95%@1000" -> "95%"), or ""
    when the run's settings disagree or say none."""
    try:
        levels = {s.as_dict().get("ci", "").partition("@")[0] for _, ss in parse_profiles_signature(signature or "") for s in ss}
    except RougeConfigError:
        return ""
    return levels.pop() if len(levels) == 1 else ""


def _stars(p) -> str:
    p = _number(p)
    return next((stars for level, stars in STARS if p is not None and p < level), "")


# ----------------------------------------------------------------- views


def _metric_views(system_rows: list[dict]) -> list[dict]:
    """Per metric (in the table's metric order), the systems best first, with the score
    the chart shows: ROUGE-1.5.5's average F and CI when every system has them, else the
    mean F and its Poisson-bootstrap CI."""
    by_metric: dict[str, list[dict]] = {}
    for row in system_rows:
        by_metric.setdefault(row["metric"], []).append(row)
    views = []
    for metric, rows in by_metric.items():
        perl = all(_number(r.get("rouge155_f_measure")) is not None for r in rows)
        prefix, low, high = (
            ("rouge155_", "rouge155_f_measure_low", "rouge155_f_measure_high")
            if perl
            else ("", "bootstrap_f_measure_low", "bootstrap_f_measure_high")
        )
        systems = [
            {
                "system": r["system"],
                "documents": docs_cell(r.get("documents"), r.get("documents_had") or None),
                "recall": r.get(prefix + "recall"),
                "precision": r.get(prefix + "precision"),
                "f": _number(r.get(prefix + "f_measure")),
                "low": _number(r.get(low)),
                "high": _number(r.get(high)),
                "mean_f": r.get("f_measure"),
                "micro_f": r.get("micro_f_measure"),
                "bootstrap_low": r.get("bootstrap_f_measure_low"),
                "bootstrap_high": r.get("bootstrap_f_measure_high"),
                "jackknife_se": r.get("jackknife_se_f_measure"),
            }
            for r in rows
        ]
        systems.sort(key=lambda s: (-s["f"] if s["f"] is not None else math.inf, s["system"]))
        views.append(
            {
                "metric": metric,
                "rouge155": perl,
                "score_name": "ROUGE-1.5.5 average F" if perl else "mean F",
                "systems": systems,
            }
        )
    return views


def _significance_views(rows: list[dict], rank: dict[str, list[str]], totals: dict) -> list[dict]:
    """Per (metric, measure): a systems x systems matrix of the MATRIX_SYSTEMS best
    systems (the metric's order); the cell of row A, column B is mean(A) - mean(B) x
    100, starred and coloured by the adjusted p-value.  The counts of systems, pairs
    and significant pairs are of every pair (`totals` when rows are a part)."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["metric"], row["measure"]), []).append(row)
    metric_order = {metric: i for i, metric in enumerate(rank)}
    views = []
    for (metric, measure), pairs in sorted(
        groups.items(), key=lambda g: (metric_order.get(g[0][0], len(metric_order)), g[0][0], g[0][1])
    ):
        present = {p["system_a"] for p in pairs} | {p["system_b"] for p in pairs}
        order = [s for s in rank.get(metric, []) if s in present]
        order += sorted(present - set(order))
        shown = set(order[:MATRIX_SYSTEMS])
        cells = {}
        for p in pairs:
            a, b = p["system_a"], p["system_b"]
            if a in shown and b in shown:
                cells[a, b] = _pair_cell(a, b, p, 1)
                cells[b, a] = _pair_cell(b, a, p, -1)
        floors = [f for f in (_number(p.get("p_floor")) for p in pairs) if f is not None]
        systems_total, pair_total, significant, floor = totals.get(
            (metric, measure),
            (len(present), len(pairs), sum(1 for p in pairs if _stars(p.get("p_adjusted"))), min(floors, default=None)),
        )
        order = order[:MATRIX_SYSTEMS]
        views.append(
            {
                "metric": metric,
                "measure": measure,
                "measure_name": MEASURE_NAMES.get(measure, measure),
                "systems": order,
                "matrix": [[cells.get((a, b)) if a != b else DIAGONAL for b in order] for a in order],
                "pairs": pair_total,
                "significant": significant,
                "systems_total": systems_total,
                "p_floor": _number(floor),
            }
        )
    return views


def _pair_cell(a: str, b: str, pair: dict, sign: int) -> dict:
    difference = _number(pair.get("difference"))
    low, high = _number(pair.get("ci_low")), _number(pair.get("ci_high"))
    effect = _number(pair.get("effect_size"))
    if sign < 0:
        difference = None if difference is None else -difference
        low, high = (None if high is None else -high), (None if low is None else -low)
        effect = None if effect is None else -effect
    raw, floor = _number(pair.get("p_value")), _number(pair.get("p_floor"))
    at_floor = "\u2264" if raw is not None and floor is not None and raw <= floor else ""
    p = _number(pair.get("p_adjusted"))
    stars = _stars(p)
    tone = ""
    if stars and difference is not None and difference != 0:
        tone = ("better" if difference > 0 else "worse") + str(len(stars))
    title = (
        f"{a} \u2212 {b}: {_pct(difference, True)} ({_pct(low, True)} to {_pct(high, True)}); "
        f"adjusted p {_cell(p) or 'n/a'}, p {at_floor}{_cell(raw) or 'n/a'} "
        f"({_cell(pair.get('method')) or 'n/a'}), effect size d_z {_cell(effect) or 'n/a'}; "
        f"{_cell(pair.get('documents'))} documents"
    )
    return {"text": _pct(difference, True), "stars": stars, "tone": tone, "title": title}


def _signature_field(signature: Optional[str], name: str) -> Optional[str]:
    """A field of a significance signature ("signflip:exact<=20+t|pairs:all|adjust:holm")."""
    fields = dict(part.partition(":")[::2] for part in (signature or "").split("|"))
    return fields.get(name) or None


def _floor_note(views: list[dict], signature: Optional[str]) -> str:
    """The run's test, the smallest p these documents allow (2^(1-n) on n documents)
    and the smallest adjusted p it gives: no star is finer than that."""
    floors = [v["p_floor"] for v in views if v["p_floor"] is not None]
    if not floors:
        return ""
    floor, pairs = min(floors), max(v["pairs"] for v in views)
    exact = re.fullmatch(r"exact<=(\d+)\+t", _signature_field(signature, "signflip") or "")
    note = (
        f"p: paired sign-flip test, exact over all 2^n sign patterns up to {exact[1]} documents, Student's t "
        "with n\u22121 degrees of freedom beyond. " if exact else ""
    )
    adjust = _signature_field(signature, "adjust")
    note += f"The smallest p these documents allow is {floor:.2g} (2^(1\u2212n) on n documents)"
    if adjust == "holm":
        note += f"; after Holm over {pairs} pairs, the smallest adjusted p is {min(1.0, pairs * floor):.2g}"
    elif adjust == "bh":
        note += f"; after Benjamini-Hochberg over {pairs} pairs it is still {floor:.2g} at best"
    return note + ". A p at its floor shows as \u2264 floor: the data's p may be smaller."


def _significance_note(rows: list[dict], systems: list[str]) -> str:
    if rows:
        return ""
    if len(systems) < 2:
        return "One system: there is no pair to compare."
    return "Paired significance was not computed for this run."


def _error_views(errors_by_reason: dict[str, int]) -> list[dict]:
    return [
        {"reason": reason, "count": count, "meaning": REASONS.get(reason, "")}
        for reason, count in sorted(errors_by_reason.items(), key=lambda e: (-e[1], e[0]))
    ]


def _run_view(record: dict) -> dict:
    inputs = record.get("inputs") or {}
    listed = [dict(f, kind=kind) for kind in ("candidates", "references") for f in inputs.get(kind) or ()]
    return {
        "run_id": record.get("run_id", ""),
        "runner": record.get("runner", ""),
        "mode": record.get("direct_running_mode") or "",
        "seconds": record.get("seconds"),
        "flags": record.get("rouge155_flags") or "",
        "config_file": record.get("config_file", ""),
        "versions": sorted((record.get("versions") or {}).items()),
        "inputs": listed[:MAX_LISTED_INPUTS],
        "more_inputs": max(0, len(listed) - MAX_LISTED_INPUTS),
        "unmatched_globs": inputs.get("unmatched_globs") or [],
    }


def _section_view(section: Section) -> dict:
    from markupsafe import Markup

    rows = list(section.rows or ())
    columns = list(section.columns or dict.fromkeys(k for row in rows for k in row))
    return {
        "title": section.title,
        "note": section.note,
        "columns": columns,
        "rows": [[row.get(c) for c in columns] for row in rows],
        "html": section.html if isinstance(section.html, Markup) else (section.html or ""),
    }
