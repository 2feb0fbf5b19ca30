"""Reading the numbers back from every view of a result, as a person sees them, to
check them against the official script's digits (tests/test_one_number.py and the
CNN/DM run of tests/pipeline/test_cnndm.py): its printed averages, the report's
chart labels and table cells, the terminal and Markdown tables, and where
Chromium draws the report's first chart."""

from __future__ import annotations

import html as html_module
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np

from pipeline.render.html import MARKER_COLOUR
from tests.pipeline.render.test_report import Page, blobs, browse, cells, chromium

PRINTED = r"^(\S+) (\S+) Average_([RPF]): ([0-9.]+) \(95%-conf\.int\. ([0-9.]+) - ([0-9.]+)\)$"


def as_paper(printed: str) -> str:
    """A printed five-decimal score x 100, two decimals, half up, as papers round it."""
    return str((Decimal(printed) * 100).quantize(Decimal("0.01"), ROUND_HALF_UP))


def official(report: str, system=lambda name: name) -> dict[tuple[str, str], tuple[str, str]]:
    """{(metric, system): (Average_F as printed, as a paper prints it x 100)} of a ROUGE-1.5.5
    report (`system` maps the report's system names to the run's)."""
    return {
        (m[2], system(m[1])): (m[4], as_paper(m[4]))
        for m in re.finditer(PRINTED, report, flags=re.M)
        if m[3] == "F"
    }


def chart_labels(page: str) -> dict[tuple[str, str], str]:
    """{(metric, system): the value label} of report.html's chart: in each panel (a
    group of the SVG), each value label belongs to the system label at its height."""
    svg = page[page.index("<svg") : page.index("</svg>")]
    found = {}
    for panel in re.split(r'<g class="panel">', svg)[1:]:
        texts = [(kind, float(y), html_module.unescape(text))
                 for kind, y, text in re.findall(r'<text class="(\w+)"[^>]* y="([-0-9.]+)"[^>]*>([^<]*)</text>', panel)]
        title = next(text for kind, _, text in texts if kind == "title")
        names = [(y, text) for kind, y, text in texts if kind == "system"]
        for kind, y, text in texts:
            if kind == "value":
                _, system = min(names, key=lambda name: abs(name[0] - y))
                found[title, system] = text
    return found


def report_f_cells(page: str, metrics) -> dict[tuple[str, str], str]:
    """{(metric, system): the F cell} of report.html's per-metric tables."""
    parsed = Page(page)
    out = {}
    for metric in metrics:
        table = [cells(row) for row in parsed.table_after(metric)]
        f = table[0].index("F")
        out.update({(metric, row[1]): row[f] for row in table[1:]})
    return out


def wide_table_f(text: str) -> dict[tuple[str, str], str]:
    """{(metric, system): the value} of the wide table as the terminal (or, with its
    pipes and escapes, Markdown) shows it: the number before the interval."""
    lines = [line.replace("\\", "").strip(" |") for line in text.splitlines()]
    head = next(i for i, line in enumerate(lines) if re.match(r"#\s+\|?\s*system", line))
    metrics = re.split(r"\s*\|\s*|\s{2,}", lines[head])[3:]
    out = {}
    for line in lines[head + 1 :]:
        if not re.match(r"\d+\s", line):
            if out:
                break
            continue
        parts = re.split(r"\s*\|\s*", line) if "|" in line else re.split(r"\s{2,}", line)
        system, values = parts[1], parts[3:]
        out.update({(metric, system): value.split(" (")[0] for metric, value in zip(metrics, values)})
    return out


def first_chart_rows(page: Path, tmp_path: Path, width: int = 1400, height: int = 900) -> list[int]:
    """The heights (px) of the chart's dots and whiskers on the first screen of `page`
    in Chromium at `width` x `height`: one blob per system of each panel in view."""
    from PIL import Image

    shot = tmp_path / "first-screen.png"
    browse(chromium(), page, tmp_path, f"--screenshot={shot}", f"--window-size={width},{height}")
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    marker = np.array([int(MARKER_COLOUR[i : i + 2], 16) for i in (1, 3, 5)])
    return sorted(y for _, y, _ in blobs(np.all(np.abs(pixels - marker) <= 8, axis=2)))
