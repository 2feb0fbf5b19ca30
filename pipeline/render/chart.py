"""report.html's chart, written as SVG here: small multiples, one panel per metric,
a dot per system at its score x 100 and a whisker over its confidence interval,
systems best first.

A run's report is drawn in every run; matplotlib took 0.6 CPU-s to import and draw
it (a sixth of a night that changed nothing, docs/nightly.md), this takes
milliseconds.  The same input gives the same bytes (every coordinate printed with
two decimals); every text is escaped (markupsafe) and stays text (searchable, and a
'$' in a system name is a '$').  The other charts (history, meta-eval) are
matplotlib's.

Lengths are points (1/72 in), as matplotlib's SVG has them: a panel is 5.6 in wide
and 0.75 + 0.24 in a system high, two panels a row, and the page scales the whole.
"""

from __future__ import annotations

import math

from pipeline.render.numbers import points

FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"
PANEL_WIDTH = 403.2  # 5.6 in
PANEL_HEIGHT = 54.0  # 0.75 in, and per system:
ROW_HEIGHT = 17.28  # 0.24 in
TOP, BOTTOM, RIGHT = 24.0, 36.0, 12.0  # a panel's margins around its plot: the title, the x axis
CHAR_WIDTH = 5.2  # of a 9 pt label, about (DejaVu Sans' mean): the room left of the plot for the names
AXIS, GRID, LABEL, TEXT = "#8c959f", "#e4e7eb", "#57606a", "#1f2328"


def scores_chart(metrics: list[dict], confidence: str, colour: str, label_chars: int) -> str:
    """The chart's SVG element: `metrics` as pipeline.render.html makes them (per metric
    its "metric", "score_name" and "systems", best first, each with its "system",
    "f", "low" and "high", or None), system names cut at `label_chars`."""
    from markupsafe import Markup

    columns = 1 if len(metrics) == 1 else 2
    rows = math.ceil(len(metrics) / columns)
    slots = max(len(m["systems"]) for m in metrics)
    height = PANEL_HEIGHT + ROW_HEIGHT * slots
    names = [_short(s["system"], label_chars) for m in metrics for s in m["systems"]]
    left = 10 + CHAR_WIDTH * max((len(n) for n in names), default=0)
    width = PANEL_WIDTH * columns
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.2f} {height * rows:.2f}" '
           f'width="{width:.2f}pt" height="{height * rows:.2f}pt" font-family="{FONT}" font-size="9">']
    for k, metric in enumerate(metrics):
        x0, y0 = PANEL_WIDTH * (k % columns), height * (k // columns)
        out += _panel(metric, confidence, colour, label_chars, (x0 + left, y0 + TOP, x0 + PANEL_WIDTH - RIGHT,
                                                                 y0 + height - BOTTOM), slots)
    out.append("</svg>")
    return Markup("\n".join(out))


def _panel(metric: dict, confidence: str, colour: str, label_chars: int, plot: tuple, slots: int) -> list[str]:
    from markupsafe import escape

    left, top, right, bottom = plot
    systems = metric["systems"]
    values = [_scaled(s["f"]) for s in systems]
    intervals = [(low, high) if (low := _scaled(s["low"])) is not None and (high := _scaled(s["high"])) is not None
                 else None for s in systems]
    finite = [v for v in values if v is not None] + [v for i in intervals if i is not None for v in i]
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    span = max(high - low, 1.0)
    start, stop = low - 0.05 * span, high + 0.18 * span  # room on the right for the value labels

    def x(v: float) -> float:
        return left + (v - start) / (stop - start) * (right - left)

    row = (bottom - top) / slots
    out = ['<g class="panel">']
    ticks, decimals = _ticks(start, stop)
    for tick in ticks:
        out.append(f'<line x1="{x(tick):.2f}" y1="{top:.2f}" x2="{x(tick):.2f}" y2="{bottom:.2f}" stroke="{GRID}" '
                   f'stroke-width="0.8"/>')
        out.append(f'<text x="{x(tick):.2f}" y="{bottom + 12:.2f}" text-anchor="middle" fill="{LABEL}">'
                   f'{tick:.{decimals}f}</text>')
    out.append(f'<path d="M{left:.2f} {top:.2f}V{bottom:.2f}H{right:.2f}" fill="none" stroke="{AXIS}" '
               f'stroke-width="1" shape-rendering="crispEdges"/>')
    out.append(f'<text class="title" x="{left:.2f}" y="{top - 9:.2f}" font-size="10" font-weight="bold" '
               f'fill="{TEXT}">{escape(metric["metric"])}</text>')
    for i, (s, value, interval) in enumerate(zip(systems, values, intervals)):
        y = top + (i + 0.5) * row
        out.append(f'<text class="system" x="{left - 6:.2f}" y="{y + 3:.2f}" text-anchor="end" fill="{TEXT}">'
                   f'{escape(_short(s["system"], label_chars))}</text>')
        if interval is not None:
            out.append(f'<line x1="{x(interval[0]):.2f}" y1="{y:.2f}" x2="{x(interval[1]):.2f}" y2="{y:.2f}" '
                       f'stroke="{colour}" stroke-width="2"/>')
        if value is not None:
            out.append(f'<circle cx="{x(value):.2f}" cy="{y:.2f}" r="3" fill="{colour}"/>')
            end = interval[1] if interval is not None else value
            out.append(f'<text class="value" x="{x(end) + 5:.2f}" y="{y + 3:.2f}" font-size="8" fill="{LABEL}">'
                       f'{points(s["f"])}</text>')
    interval = f"{confidence} CI" if confidence else "CI"
    out.append(f'<text x="{(left + right) / 2:.2f}" y="{bottom + 28:.2f}" text-anchor="middle" fill="{LABEL}">'
               f'{escape(metric["score_name"])} \u00d7 100 with its {escape(interval)}</text>')
    out.append("</g>")
    return out


def _ticks(start: float, stop: float) -> tuple[list[float], int]:
    """Round values inside [start, stop], 3 to 7 of them (a step of 1, 2, 2.5 or 5 x
    10^k), and the decimals that print them."""
    rough = (stop - start) / 5
    power = 10.0 ** math.floor(math.log10(rough))
    multiple = next(m for m in (1, 2, 2.5, 5, 10) if m * power >= rough)
    step = multiple * power
    ticks = [k * step for k in range(math.ceil(start / step), math.floor(stop / step) + 1)]
    return ticks, max(0, -math.floor(math.log10(step)) + (multiple == 2.5))


def _scaled(value) -> float | None:
    """A score x 100, or None when it is absent or not finite (drawn as nothing)."""
    return 100 * value if value is not None and math.isfinite(value) else None


def _short(name: str, chars: int) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "\u2026"
