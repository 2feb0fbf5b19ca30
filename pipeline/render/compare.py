"""The comparison of two runs for people: Markdown tables of the changes and of the
documents that moved most."""

from __future__ import annotations

from collections import defaultdict

from pipeline.render.significance import as_points, format_p
from pipeline.render.tables import markdown_cell


def signed(x: float | None) -> str:
    return "" if x is None else f"{x:+.2f}"


def markdown_report(
    old,
    new,
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
        change = signed(r["delta_points"])
        if r["ci_low_points"] is not None:
            change += f" ({signed(r['ci_low_points'])} to {signed(r['ci_high_points'])})"
        verdict = r["verdict"] + (" **FAIL**" if r["fails"] else "")
        lines.append(
            f"| {markdown_cell(r['system'])} | {r['metric']} | {as_points(r['old'])} | {as_points(r['new'])} | "
            f"{change} | {r['documents']} | {format_p(r['p_adjusted'])} | {verdict} |"
        )
    for status, label in (("added", "Systems added"), ("removed", "Systems removed")):
        systems = sorted({r["system"] for r in rows if r["status"] == status})
        if systems:
            lines += ["", f"{label}: " + ", ".join(markdown_cell(s) for s in systems)]
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
                f"{markdown_cell(system)} ({', '.join(metrics)}): compared on the {shared} documents "
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
            f"{markdown_cell(system)} {metric}:",
            "",
            "| doc_id | old | new | change |",
            "|---|---:|---:|---:|",
        ]
        lines += [
            f"| {markdown_cell(m['doc_id'])} | {as_points(m['old'])} | {as_points(m['new'])} | "
            f"{signed(m['delta_points'])} |"
            for m in items
        ]
    return "\n".join(lines) + "\n"


def moved_markdown(moved: list[dict]) -> str:
    lines = ["| system | metric | doc_id | old | new | change |", "|---|---|---|---:|---:|---:|"]
    lines += [
        f"| {markdown_cell(m['system'])} | {m['metric']} | {markdown_cell(m['doc_id'])} | "
        f"{as_points(m['old'])} | {as_points(m['new'])} | {signed(m['delta_points'])} |"
        for m in moved
    ]
    return "\n".join(lines) + "\n"
