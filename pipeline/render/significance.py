"""The significance table for people (Markdown), and the number formats of
significance and comparison tables."""

from __future__ import annotations

from pipeline.render.tables import markdown_cell


def as_points(x: float | None) -> str:
    """A 0-1 score for people: x 100, two decimals."""
    return "" if x is None else f"{100 * x:.2f}"


def format_p(p: float | None) -> str:
    """A p-value for people: four decimals, or two significant digits below 0.001."""
    if p is None:
        return ""
    return f"{p:.1e}" if p < 0.001 else f"{p:.4f}"


def markdown_table(rows: list[dict], description: str = "") -> str:
    lines = [description, ""] if description else []
    lines += [
        "Scores x 100; difference = mean A - mean B on the documents both scored.",
        "",
        (
            "| metric | measure | system A | system B | docs | A | B | difference (CI) | p bootstrap "
            "| p permutation | p adjusted |"
        ),
        "|---|---|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    several = len({r["profile"] for r in rows}) > 1
    for r in rows:
        difference = as_points(r["difference"])
        if r["ci_low"] is not None:
            difference += f" ({as_points(r['ci_low'])} to {as_points(r['ci_high'])})"
        cells = [
            f"{r['profile']} {r['metric']}" if several else r["metric"],
            r["measure"],
            markdown_cell(r["system_a"]),
            markdown_cell(r["system_b"]),
            str(r["documents"]),
            as_points(r["mean_a"]),
            as_points(r["mean_b"]),
            difference,
            format_p(r["p_bootstrap"]),
            format_p(r["p_permutation"]),
            format_p(r["p_adjusted"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
