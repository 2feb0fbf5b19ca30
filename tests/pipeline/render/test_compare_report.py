"""`compare` for people: the terminal output leads with the verdict and lists only
what changed, in the runs' metric order, without Markdown; report.html is about the
comparison (verdict banner first, rows by size of change, failing rows marked,
booleans as words, the moved documents with their texts, systems added and
removed, the runs' reports linked), and fits a 1,400-px window: checked in
headless Chromium through the DOM and a screenshot."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.pipeline.runs import run_pipeline, write_jsonl
from tests.pipeline.test_compare import corpus
from tests.pipeline.render.test_report import browse, chromium

ROOT = Path(__file__).resolve().parents[3]
LONG = "a-system-with-a-very-long-name-that-could-push-the-table-past-the-window_" * 2


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Old: good and weak_model.  New: good much worse after document 4, weak_model
    without two documents, and a new system with a very long name."""
    base = tmp_path_factory.mktemp("cmp")
    old_rows = [dict(r, system=r["system"].replace("weak", "weak_model")) for r in corpus(False)]
    new_rows = [dict(r, system=r["system"].replace("weak", "weak_model")) for r in corpus(True)
                if not (r["system"] == "weak" and r["doc_id"] < "doc-02")]
    new_rows += [dict(r, system=LONG) for r in corpus(False) if r["system"] == "weak"]
    run_pipeline(base / "old", [write_jsonl(base / "old.jsonl", old_rows)], flags="-n 2 -2 4 -U")
    run_pipeline(base / "new", [write_jsonl(base / "new.jsonl", new_rows)], flags="-n 2 -2 4 -U")
    return base


def compare(*args):
    return subprocess.run([sys.executable, "-m", "pipeline", "compare", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def compared(runs):
    done = compare(runs / "old", runs / "new", "--output", runs / "cmp", "--fail-on-drop", 1)
    assert done.returncode == 1, done.stderr
    return done


def test_the_terminal_leads_with_the_verdict_and_lists_only_what_changed(runs, compared):
    lines = compared.stdout.splitlines()
    assert lines[0].startswith("FAIL: significant drop of more than 1 points: good ROUGE-1 -")
    # what changed: good (worse) and the added system; weak_model is unchanged, so not listed;
    # the metrics in the run's order (ROUGE-1, ROUGE-2, ROUGE-L, ROUGE-S4, ROUGE-SU4), not alphabetical
    order = ["ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-S4", "ROUGE-SU4"]
    listed = [line.split()[:2] for line in lines if line.startswith("  ") and line.split()[1] in order]
    assert listed == [[LONG, m] for m in order] + [["good", m] for m in order]
    assert "5 (system, metric) pair(s) without a significant change are not listed; --all lists them." in lines
    assert "\\_" not in compared.stdout and "|---" not in compared.stdout and "`" not in compared.stdout
    assert "worse, fails the check" in compared.stdout and "True" not in compared.stdout
    every = compare(runs / "old", runs / "new", "--fail-on-drop", 1, "--all", "--quiet")
    assert every.returncode == 1
    assert sum(line.startswith("  ") and line.split()[0] == "weak_model" for line in every.stdout.splitlines()) == 5
    assert every.stdout.splitlines()[0] == lines[0]


def test_the_report_is_about_the_comparison(runs, compared):
    html = (runs / "cmp" / "report.html").read_text(encoding="utf-8")
    # the verdict banner comes before any table, and says the exit status in words
    assert html.index('id="verdict"') < html.index("<table")
    assert "exit status 1: a significant drop" in html
    # rows by the size of the change, failing rows first and marked
    body = html[html.index('class="changes"'):]
    rows = re.findall(r'<tr(?: class="(\w+)")?><td class="name">([^<]*)</td><td>([^<]*)</td>'
                      r'(?:<td class="num">([^<]*)</td>){3}', body)
    changes = [float(m) for m in re.findall(r'<td class="num">([+-]\d+\.\d\d)</td><td class="num">[^<]*</td>'
                                              r'<td class="num">', body)]
    assert [r[0] for r in rows[:5]] == ["fail"] * 5 and all(r[1] == "good" for r in rows[:5])
    assert [abs(c) for c in changes] == sorted((abs(c) for c in changes), reverse=True)
    assert "True" not in html and "False" not in html and "old_documents" not in html
    # the documents that moved most, with both candidates and the reference, shortened
    old = {json.loads(line)["doc_id"]: json.loads(line) for line in (runs / "old.jsonl").read_text().splitlines()
           if json.loads(line)["system"] == "good"}
    doc = re.search(r"good &middot; ROUGE-\w+ &middot; (doc-\d\d):", html).group(1)
    assert old[doc]["candidate"][:40] in html and old[doc]["references"][0][:40] in html
    assert html.count("old candidate") >= 3 and html.count("new candidate") >= 3
    # systems added and removed; the runs' own reports linked, not inlined
    assert f"Added (in the new run only): {LONG}." in html
    assert f'href="{(runs / "old" / "report.html").as_uri()}"' in html
    assert f'href="{(runs / "new" / "report.html").as_uri()}"' in html
    assert "Significance" not in html and "<svg" not in html  # not the run's report


def test_the_verdict_names_the_failing_pairs_in_the_runs_metric_order():
    from pipeline.render.compare import metric_order, verdict

    record = {"profiles": [{"name": "default", "metrics": ["ROUGE-1", "ROUGE-L", "ROUGE-W-1.2", "ROUGE-S4"]}]}
    rows = [{"system": s, "metric": m, "delta_points": -2.0, "fails": True}
            for s in ("b", "a") for m in ("ROUGE-S4", "ROUGE-W-1.2", "ROUGE-1")]  # fmt: skip
    status, line = verdict(rows, 1, metric_order(record, record))
    assert status == 1
    assert line == ("FAIL: significant drop of more than 1 points: a ROUGE-1 -2.00, a ROUGE-W-1.2 -2.00, "
                    "a ROUGE-S4 -2.00, b ROUGE-1 -2.00, b ROUGE-W-1.2 -2.00, b ROUGE-S4 -2.00")


MEASURE = """
<script>
window.addEventListener("load", () => {
  const root = document.documentElement;
  const verdict = document.getElementById("verdict").getBoundingClientRect();
  const table = document.querySelector("main table").getBoundingClientRect();
  const failing = document.querySelector("tr.fail").getBoundingClientRect();
  const widest = Math.max(...[...document.querySelectorAll("body *")].map(e => e.getBoundingClientRect().right));
  const out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify({scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
    widest: widest, verdictBottom: verdict.bottom, tableTop: table.top, failingBottom: failing.bottom,
    innerHeight: window.innerHeight});
  document.body.appendChild(out);
});
</script>
"""


def test_chromium_at_1400_px_shows_the_verdict_and_the_changes_without_horizontal_scrolling(runs, compared, tmp_path):
    from PIL import Image

    binary = chromium()
    html = (runs / "cmp" / "report.html").read_text(encoding="utf-8")
    # A copy that measures its own layout: the page allows no script, so the copy
    # drops that policy and adds one that writes what it measured into the DOM.
    probe = tmp_path / "probe.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
                     .replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = browse(binary, probe, tmp_path, "--window-size=1400,900", "--virtual-time-budget=5000",
                 "--dump-dom").stdout.decode("utf-8")
    layout = json.loads(re.search(r'<pre id="layout">([^<]*)</pre>', dom).group(1))
    assert layout["clientWidth"] == 1400
    assert layout["scrollWidth"] <= layout["clientWidth"]  # no horizontal overflow
    assert layout["widest"] <= 1400
    assert layout["verdictBottom"] <= layout["tableTop"]  # the verdict above the first table
    assert layout["failingBottom"] <= layout["innerHeight"]  # the failing rows in the first screen

    shot = tmp_path / "compare.png"
    browse(binary, runs / "cmp" / "report.html", tmp_path, f"--screenshot={shot}", "--window-size=1400,900")
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert pixels.shape == (900, 1400, 3)
    banner = np.all(np.abs(pixels - np.array([0xFF, 0xEB, 0xE9])) <= 3, axis=2)  # the FAIL banner's red
    rows_y = np.nonzero(banner.sum(axis=1) > 600)[0]
    assert rows_y.size and rows_y.min() < 200  # at the top of the first screen
