"""The comparison of two runs for people: Markdown tables of the changes and of the
documents that moved most."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from pipeline.io.names import shown
from pipeline.render.numbers import in_points, p_value, points
from pipeline.render.tables import Markdown, code_span, markdown_cell, markdown_table, text_table
from rouge_core import names


def markdown_report(
    old,
    new,
    rows: list[dict],
    moved: list[dict],
    options: str,
    all_moved: bool = True,
) -> str:
    """The comparison for people: scores x 100, the change with its interval."""
    lines = [  # (paths and the signature are untrusted: code spans with control characters escaped)
        f"Old: {code_span(old.path)}  ",
        f"New: {code_span(new.path)}  ",
        f"Signature: {code_span(new.signature)}  ",
        options,
        "",
        averages_note(rows) + ".",
        "",
    ]
    body = []
    for r in rows:
        change = in_points(r["delta_points"])
        if r["ci_low_points"] is not None:
            change += f" ({in_points(r['ci_low_points'])} to {in_points(r['ci_high_points'])})"
        verdict = Markdown(markdown_cell(r["verdict"]) + (" **FAIL**" if r["fails"] else ""))
        body.append([r["system"], r["metric"], points(r["old"]), points(r["new"]), change, str(r["documents"]),
                     p_value(r["p_adjusted"]), verdict])
    lines.append(markdown_table(["system", "metric", "old", "new", "mean change (CI)", "docs", "p adjusted", "verdict"],
                                body, "llrrlrrl").rstrip("\n"))
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
    listed_pairs = {(r["system"], r["metric"]) for r in rows if all_moved or r["verdict"] in ("better", "worse")}
    groups = defaultdict(list)
    for m in moved:
        if (m["system"], m["metric"]) in listed_pairs:
            groups[m["system"], m["metric"]].append(m)
    if groups:
        lines += ["", f"Documents whose {rows[0]['measure']} moved most (x 100):"]
    for (system, metric), items in groups.items():
        lines += [
            "",
            f"{markdown_cell(system)} {markdown_cell(metric)}:",
            "",
            markdown_table(["doc_id", "old", "new", "change"],
                           [[m["doc_id"], points(m["old"]), points(m["new"]), in_points(m["delta_points"])]
                            for m in items], "lrrr").rstrip("\n"),
        ]
    return "\n".join(lines) + "\n"


def moved_markdown(moved: list[dict]) -> str:
    return markdown_table(
        ["system", "metric", "doc_id", "old", "new", "change"],
        [[m["system"], m["metric"], m["doc_id"], points(m["old"]), points(m["new"]), in_points(m["delta_points"])]
         for m in moved],
        "lllrrr",
    )


# ----------------------------------------------------------------- for people: what changed first

MEASURE_WORDS = {"recall": "recall", "precision": "precision", "f_measure": "F-measure"}
AVERAGE_WORDS = {
    "rouge155": "ROUGE-1.5.5's average (its bootstrap over documents), as each run's table prints it",
    "mean": "the mean over each run's documents, as its table prints it",
}


def averages_note(rows: list[dict]) -> str:
    """What a comparison's old, new and change are: the two averages named.

    Example:
        >>> averages_note([{"average": "rouge155"}])
        "old, new: ROUGE-1.5.5's average (its bootstrap over documents), as each run's table prints it; mean change: new - old of the mean over the documents both runs scored"
    """
    kinds = [AVERAGE_WORDS[k] for k in dict.fromkeys(r.get("average") for r in rows) if k in AVERAGE_WORDS]
    kinds = kinds or ["each run's table value"]
    return f"old, new: {' or '.join(kinds)}; mean change: new - old of the mean over the documents both runs scored"
CHANGED = ("worse", "better", "added", "removed")
TEXT_CHARS = 280  # a candidate or reference shown in the report, at most


def verdict(rows: list[dict], fail_on_drop: float, order=None) -> tuple[int, str]:
    """(exit status, the one line that says it): 1 on a significant drop of more
    than `fail_on_drop` points, else 0.  The failing pairs are named per system in
    `order` of the metrics (metric_order: the runs' own), else as `rows` has them."""
    failing = [r for r in rows if r["fails"]]
    if order is not None:
        failing.sort(key=lambda r: (r["system"], order(r["metric"])))
    if failing:
        return 1, (
            f"FAIL: significant drop of more than {fail_on_drop:g} points: "
            + ", ".join(f"{r['system']} {r['metric']} {in_points(r['delta_points'])}" for r in failing)
        )
    changed = [r for r in rows if r["verdict"] in ("better", "worse")]
    return 0, (
        f"OK: no significant drop of more than {fail_on_drop:g} points"
        + (f" ({len(changed)} significant change(s))" if changed else "; no significant change")
    )


def metric_order(*records: dict):
    """A sort key of metric labels ("ROUGE-1", or "<profile> <metric>" in a run with
    profiles): the profiles in the runs' own order (run.json), then the metrics in
    the one order of every table (`rouge_core.names.sort_key`)."""
    profiles: dict[str, int] = {}
    for record in records:
        for profile in record.get("profiles") or []:
            profiles.setdefault(str(profile.get("name")), len(profiles))

    def key(label: str):
        profile, space, metric = label.partition(" ")
        if not space or profile not in profiles:
            profile, metric = "", label
        return (profiles.get(profile, -1), names.sort_key(metric))

    return key


def by_size_of_change(rows: list[dict]) -> list[dict]:
    """Failing rows first, then by the size of the change, largest first; rows
    without a change (added, removed) last."""
    return sorted(rows, key=lambda r: (not r["fails"], r["delta_points"] is None, -abs(r["delta_points"] or 0)))


def verdict_words(row: dict) -> str:
    """The row's verdict in words: booleans never show as True/False."""
    words = {"worse": "worse", "better": "better", "added": "added (new run only)",
             "removed": "removed (old run only)", "no significant change": "no significant change"}
    text = words.get(row["verdict"], row["verdict"])
    return text + ", fails the check" if row["fails"] else text


def _interval(row: dict) -> str:
    if row["ci_low_points"] is None:
        return ""
    return f"{in_points(row['ci_low_points'])} to {in_points(row['ci_high_points'])}"


def partial_notes(rows: list[dict]) -> list[str]:
    """Systems compared on fewer documents than a run scored, one line each."""
    partial: dict = {}
    for r in rows:
        if r["status"] == "both" and r["documents"] < max(r["old_documents"], r["new_documents"]):
            key = (r["system"], r["documents"], r["old_documents"], r["new_documents"])
            partial.setdefault(key, []).append(r["metric"])
    return [
        f"{system} ({', '.join(metrics)}): compared on the {shared} documents both runs scored "
        f"(old run {before}, new run {after})"
        for (system, shared, before, after), metrics in partial.items()
    ]


def terminal_text(old, new, rows: list[dict], moved: list[dict], options: str, fail_on_drop: float,
                  show_all: bool = False, moved_per_metric: int = 3) -> str:
    """What `compare` prints: the verdict first, then only what changed (`show_all`:
    every row), in the runs' metric order, as plain aligned text (no Markdown)."""
    order = metric_order(old.record, new.record)
    _, line = verdict(rows, fail_on_drop, order)
    listed = [r for r in rows if show_all or r["verdict"] in CHANGED]
    listed.sort(key=lambda r: (r["system"], order(r["metric"])))
    measure = MEASURE_WORDS.get(rows[0]["measure"], rows[0]["measure"]) if rows else ""
    out = [line, ""]
    if listed:
        out.append(("Every (system, metric)" if show_all else "What changed") + f", {measure} x 100:")
        out.append(f"  {averages_note(rows)}.")
        head = ["system", "metric", "old", "new", "mean change", "interval", "docs", "p adjusted", "verdict"]
        body = [
            [r["system"], r["metric"], points(r["old"]), points(r["new"]), in_points(r["delta_points"]),
             _interval(r), str(r["documents"]) if r["status"] == "both" else "", p_value(r["p_adjusted"]),
             verdict_words(r)]
            for r in listed
        ]
        out.append(text_table(head, body, "llrrrlrrl", indent="  ").rstrip("\n"))
    else:
        out.append("Nothing changed significantly.")
    hidden = len(rows) - len(listed)
    if hidden:
        out.append(f"{hidden} (system, metric) pair(s) without a significant change are not listed; --all lists them.")
    for status, label in (("added", "Systems added"), ("removed", "Systems removed")):
        systems = sorted({r["system"] for r in rows if r["status"] == status})
        if systems:
            out.append(f"{label}: {', '.join(systems)}")
    out += partial_notes(rows)
    listed_pairs = {(r["system"], r["metric"]) for r in listed if r["verdict"] in ("better", "worse")}
    groups: dict = defaultdict(list)
    for m in moved:
        if (m["system"], m["metric"]) in listed_pairs and len(groups[m["system"], m["metric"]]) < moved_per_metric:
            groups[m["system"], m["metric"]].append(m)
    if groups:
        out += ["", f"Documents whose {measure} moved most (x 100):"]
        for (system, metric), items in sorted(groups.items(), key=lambda g: (g[0][0], order(g[0][1]))):
            out.append(f"  {system} {metric}: " + ", ".join(
                f"{m['doc_id']} {points(m['old'])} -> {points(m['new'])} ({in_points(m['delta_points'])})"
                for m in items))
    out += ["", f"old: {shown(old.path)}", f"new: {shown(new.path)}", f"signature: {shown(new.signature)}", options]
    return "\n".join(out) + "\n"


def shorten(text: str | None, limit: int = TEXT_CHARS) -> str:
    """A text cut at a word boundary to about `limit` characters, with an ellipsis."""
    if text is None:
        return ""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit] + " \u2026"


def report_link(path: str) -> str:
    """A link to a run's report.html: a file: URI for a local folder, else the URL."""
    if "://" in path:
        return path.rstrip("/") + "/report.html"
    return (Path(os.path.abspath(path)) / "report.html").as_uri()


def page_context(old, new, rows: list[dict], moved: list[dict], options: str, fail_on_drop: float,
                 old_texts: dict, new_texts: dict, moved_per_metric: int = 3, metrics_with_texts: int = 12) -> dict:
    """Everything report.html of a comparison shows, formatted for people (the
    template only lays it out): the verdict, the rows by size of change, the
    documents that moved most with their texts, systems added and removed."""
    status, line = verdict(rows, fail_on_drop, metric_order(old.record, new.record))
    measure = MEASURE_WORDS.get(rows[0]["measure"], rows[0]["measure"]) if rows else ""
    table = [
        {
            "system": r["system"], "metric": r["metric"], "old": points(r["old"]), "new": points(r["new"]),
            "change": in_points(r["delta_points"]), "interval": _interval(r),
            "documents": str(r["documents"]) if r["status"] == "both" else "",
            "p": p_value(r["p_adjusted"]), "verdict": verdict_words(r),
            "tone": "fail" if r["fails"] else "worse" if r["verdict"] == "worse" else
            "better" if r["verdict"] == "better" else "",
        }
        for r in by_size_of_change(rows)
    ]
    changed = [r for r in by_size_of_change(rows) if r["verdict"] in ("better", "worse")]
    groups: dict = defaultdict(list)
    for m in moved:
        groups[m["system"], m["metric"]].append(m)
    documents = []
    for r in (changed or by_size_of_change([r for r in rows if r["status"] == "both"]))[:metrics_with_texts]:
        for m in groups.get((r["system"], r["metric"]), [])[:moved_per_metric]:
            references = new_texts.get("references", {}).get(m["doc_id"]) or old_texts.get("references", {}).get(m["doc_id"]) or []
            documents.append({
                "system": m["system"], "metric": m["metric"], "doc_id": m["doc_id"],
                "old": points(m["old"]), "new": points(m["new"]), "change": in_points(m["delta_points"]),
                "tone": "better" if m["delta_points"] > 0 else "worse",
                "old_text": shorten(old_texts.get("candidates", {}).get((m["system"], m["doc_id"]))),
                "new_text": shorten(new_texts.get("candidates", {}).get((m["system"], m["doc_id"]))),
                "reference": shorten(references[0]) if references else "",
                "more_references": max(0, len(references) - 1),
            })
    return {
        "status": status,
        "verdict": line,
        "status_words": "exit status 1: a significant drop" if status else "exit status 0: no significant drop beyond the threshold",
        "measure": measure,
        "options": options,
        "averages": averages_note(rows),
        "old": {"path": shown(old.path), "link": report_link(old.path), "signature": shown(old.signature)},
        "new": {"path": shown(new.path), "link": report_link(new.path), "signature": shown(new.signature)},
        "rows": table,
        "counts": {
            "compared": sum(r["status"] == "both" for r in rows),
            "better": sum(r["verdict"] == "better" for r in rows),
            "worse": sum(r["verdict"] == "worse" for r in rows),
            "failing": sum(bool(r["fails"]) for r in rows),
        },
        "documents": documents,
        "texts_found": any(d["old_text"] or d["new_text"] for d in documents),
        "added": sorted({r["system"] for r in rows if r["status"] == "added"}),
        "removed": sorted({r["system"] for r in rows if r["status"] == "removed"}),
        "partial": partial_notes(rows),
    }
