"""The significance table for people (Markdown), and the number formats of
significance and comparison tables."""

from __future__ import annotations

from pipeline.render import tables


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


HEAD = ["metric", "measure", "system A", "system B", "docs", "A", "B", "difference (CI)", "d_z", "t", "p", "method",
        "p adjusted"]
ALIGN = "llllrrrlrrrlr"
PADDED_ROWS = 10_000  # up to this many rows the Markdown table is laid out (padded) whole


def legend(description: str = "") -> str:
    """What the significance table's numbers are."""
    lines = [description, ""] if description else []
    lines.append(
        "Scores x 100; difference = mean A - mean B on the documents both scored; d_z = the "
        "difference over the standard deviation of the per-document differences; t = d_z sqrt(docs)."
    )
    return "\n".join(lines) + "\n\n"


def cells(r: dict, several_profiles: bool) -> list[str]:
    """A significance row (SIGNIFICANCE_COLUMNS) as the table's cells."""
    difference = as_points(r["difference"])
    if r["ci_low"] is not None:
        difference += f" ({as_points(r['ci_low'])} to {as_points(r['ci_high'])})"
    return [
        f"{r['profile']} {r['metric']}" if several_profiles else r["metric"],
        r["measure"],
        r["system_a"],
        r["system_b"],
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


def markdown_table(rows: list[dict], description: str = "") -> str:
    """The whole significance table (legend, heads, rows), laid out by tabulate."""
    several = len({r["profile"] for r in rows}) > 1
    return legend(description) + tables.markdown_table(HEAD, [cells(r, several) for r in rows], ALIGN)


def markdown_header(description: str = "") -> str:
    """The legend and column heads of a significance table written a block of rows at a
    time (`markdown_rows`): too long to lay out whole (tabulate pads every column to its
    widest cell, so it needs every row at once, and lays out about 10,000 rows a second)."""
    return legend(description) + tables.markdown_row(HEAD) + tables.markdown_rule(ALIGN)


def markdown_rows(rows: list[dict], several_profiles: bool) -> str:
    """Table lines of significance rows, unpadded, for `markdown_header`'s table."""
    return "".join(tables.markdown_row(cells(r, several_profiles)) for r in rows)
