"""The significance table for people (Markdown), and the number formats of
significance and comparison tables."""

from __future__ import annotations

from pipeline.render.tables import markdown_cell


def as_points(x: float | None) -> str:
    """A 0-1 score for people: x 100, two decimals."""
    return "" if x is None else f"{100 * x:.2f}"


def format_p(p: float | None, floor: float | None = None) -> str:
    """A p-value for people: four decimals, or two significant digits below 0.001;
    "≤ floor" when p is at its floor (the smallest p these documents allow: the
    true p may be smaller).

    Example:
        >>> format_p(0.01234), format_p(2.5e-7), format_p(2.2250738585072014e-308, 2.2250738585072014e-308)
        ('0.0123', '2.5e-07', '≤2.2e-308')
    """
    if p is None:
        return ""
    text = f"{p:.1e}" if p < 0.001 else f"{p:.4f}"
    return "≤" + text if floor is not None and p <= floor else text


def _number(x: float | None, digits: int = 2) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def markdown_header(description: str = "") -> str:
    """The legend and column heads of the significance table."""
    lines = [description, ""] if description else []
    lines += [
        (
            "Scores x 100; difference = mean A - mean B on the documents both scored; d_z = the "
            "difference over the standard deviation of the per-document differences; t = d_z sqrt(docs)."
        ),
        "",
        (
            "| metric | measure | system A | system B | docs | A | B | difference (CI) | d_z | t | p | method "
            "| p adjusted |"
        ),
        "|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---|---:|",
    ]
    return "\n".join(lines) + "\n"


def markdown_rows(rows: list[dict], several_profiles: bool) -> str:
    """Table lines of significance rows (SIGNIFICANCE_COLUMNS)."""
    lines = []
    for r in rows:
        difference = as_points(r["difference"])
        if r["ci_low"] is not None:
            difference += f" ({as_points(r['ci_low'])} to {as_points(r['ci_high'])})"
        cells = [
            f"{r['profile']} {r['metric']}" if several_profiles else r["metric"],
            r["measure"],
            markdown_cell(r["system_a"]),
            markdown_cell(r["system_b"]),
            str(r["documents"]),
            as_points(r["mean_a"]),
            as_points(r["mean_b"]),
            difference,
            _number(r["effect_size"]),
            _number(r["statistic"]),
            format_p(r["p_value"], r["p_floor"]),
            r["method"] or "",
            format_p(r["p_adjusted"]),
        ]
        lines.append("| " + " | ".join(cells) + " |\n")
    return "".join(lines)


def markdown_table(rows: list[dict], description: str = "") -> str:
    """The whole significance table (legend, heads, rows)."""
    several = len({r["profile"] for r in rows}) > 1
    return markdown_header(description) + markdown_rows(rows, several)
