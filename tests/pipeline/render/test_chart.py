"""report.html's chart as SVG written by pipeline.render.chart (the page's own tests,
test_report.py, look at it in Chromium): its axis, its marks and its texts."""

from __future__ import annotations

import re

from pipeline.render.chart import _ticks, scores_chart

COLOUR = "#1d5fb4"


def system(name, f, low=None, high=None):
    return {"system": name, "f": f, "low": low, "high": high}


def metric(name, systems):
    return {"metric": name, "score_name": "mean F", "systems": systems}


def test_ticks_are_round_steps_inside_the_range():
    assert _ticks(7.5, 31.2) == ([10, 15, 20, 25, 30], 0)  # (31.2 - 7.5) / 5 = 4.74: a step of 5
    ticks, decimals = _ticks(-0.05, 1.18)  # 0.246: a step of 0.25, printed with two decimals
    assert ticks == [0, 0.25, 0.5, 0.75, 1.0] and decimals == 2
    ticks, decimals = _ticks(40.1, 41.3)  # 0.24: 0.25 again
    assert [f"{t:.{decimals}f}" for t in ticks] == ["40.25", "40.50", "40.75", "41.00", "41.25"]
    ticks, decimals = _ticks(0.0, 1.0)  # 0.2
    assert [f"{t:.{decimals}f}" for t in ticks] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]


def test_marks_texts_and_their_places():
    chart = scores_chart([
        metric("ROUGE-1", [system("a<b>", 0.4, 0.35, 0.45), system("$x$", 0.3), system("none", None)]),
        metric("ROUGE-2", [system("a<b>", 0.2, 0.1, 0.3)]),
        metric("ROUGE-L", [system("long" * 20, 0.1, 0.05, 0.15)]),
    ], "95%", COLOUR, 32)
    assert chart.count('<g class="panel">') == 3  # two a row: the fourth place of the grid is left empty
    # a dot per system with a score, a whisker per system with an interval
    assert chart.count("<circle") == 4 and len(re.findall(f'<line [^>]*stroke="{COLOUR}"', chart)) == 3
    texts = re.findall(r'<text class="(\w+)"[^>]*>([^<]*)</text>', chart)
    assert [t for k, t in texts if k == "title"] == ["ROUGE-1", "ROUGE-2", "ROUGE-L"]
    assert [t for k, t in texts if k == "system"] == ["a&lt;b&gt;", "$x$", "none", "a&lt;b&gt;", "long" * 7 + "lon\u2026"]
    assert [t for k, t in texts if k == "value"] == ["40.00", "30.00", "20.00", "10.00"]
    assert "95% CI" in chart and "<script" not in chart
    # best first, top down; the value label right of the whisker's end
    first = re.search(r'<g class="panel">(.*?)</g>', chart, re.S).group(1)
    ys = [float(y) for y in re.findall(r'class="system" x="[-0-9.]+" y="([-0-9.]+)"', first)]
    assert ys == sorted(ys) and len(ys) == 3
    whisker_end = float(re.search(f'x2="([-0-9.]+)"[^>]*stroke="{COLOUR}"', first).group(1))
    assert float(re.search(r'class="value" x="([-0-9.]+)"', first).group(1)) == round(whisker_end + 5, 2)
    again = scores_chart([metric("ROUGE-1", [system("a<b>", 0.4, 0.35, 0.45)])], "", COLOUR, 32)
    assert "with its CI" in again and again.count('<g class="panel">') == 1
