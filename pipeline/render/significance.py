"""The significance table for people (Markdown); its numbers are formatted by
pipeline.render.numbers."""

from __future__ import annotations

from pipeline.render import tables
from pipeline.render.numbers import p_value, points, statistic


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
    difference = points(r["difference"])
    if r["ci_low"] is not None:
        difference += f" ({points(r['ci_low'])} to {points(r['ci_high'])})"
    return [
        f"{r['profile']} {r['metric']}" if several_profiles else r["metric"],
        r["measure"],
        r["system_a"],
        r["system_b"],
        str(r["documents"]),
        points(r["mean_a"]),
        points(r["mean_b"]),
        difference,
        statistic(r["effect_size"]),
        statistic(r["statistic"]),
        p_value(r["p_value"], r["p_floor"]),
        r["method"] or "",
        p_value(r["p_adjusted"]),
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
