"""report.html: the page people read, from a real pipeline run on the shipped sample.

The run scores the ROUGE-1.5.5 sample (8 systems, 25 documents) with two systems
renamed to hostile names, plus three bad rows, so the page shows real numbers,
real errors and names that must be escaped.  The expected numbers come from the
official ROUGE-1.5.5 output for the same flags (tests/golden/rouge155/sample-output).
"""

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from collections import deque
from decimal import ROUND_HALF_UP, Decimal
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.render.html import MARKER_COLOUR, REPORT_NAME, Section, render_report
from tests.conftest import GOLDEN
from tests.pipeline.runs import document_rows, run_pipeline, write_jsonl

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = Path(pipeline.__file__).parent / "sample"
PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
OFFICIAL = GOLDEN / "sample-output" / "ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m.out"
SCRIPT = "<script>alert(1)</script>"
ODD = 'a&b $\\frac{1}{2}$ --> "q" ]]>'
RENAMED = {"sys13": SCRIPT, "sys14": ODD}
METRICS = ["ROUGE-1", "ROUGE-2", "ROUGE-3", "ROUGE-4", "ROUGE-L", "ROUGE-W-1.2", "ROUGE-S*", "ROUGE-SU*"]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The result folder of a real run, its run record, and paired-significance rows."""
    folder = tmp_path_factory.mktemp("report")
    rows = [json.loads(line) for path in sorted(SAMPLE.glob("*.jsonl")) for line in open(path)]
    for row in rows:
        row["system"] = RENAMED.get(row["system"], row["system"])
    inputs = [write_jsonl(folder / "in" / f"part-{i}.jsonl", rows[i::3]) for i in range(3)]
    bad = folder / "in" / "bad.jsonl"
    bad.write_text(
        '{"system": "sys11", "doc_id": \n'
        + json.dumps({"system": "sys11", "doc_id": "X1", "references": ["a b"]})
        + "\n"
        + json.dumps({"system": SCRIPT, "doc_id": "X2", "candidate": 42, "references": ["a b"]})
        + "\n"
    )
    out = folder / "out"
    record = run_pipeline(out, inputs + [bad], flags=PYROUGE)
    system_rows = pq.read_table(out / "system_scores.parquet").to_pylist()
    documents = document_rows(out)
    return out, record, system_rows, paired_tests(documents, ["ROUGE-1", "ROUGE-2"])


def paired_tests(documents, metrics, replicates=2000, seed=7):
    """Realistic significance rows: a paired bootstrap and a sign-flip permutation test
    on per-document F, Holm-adjusted over the pairs of one metric (numpy, seeded)."""
    rows = []
    for metric in metrics:
        scores = {}
        for d in documents:
            if d["metric"] == metric:
                scores.setdefault(d["system"], {})[d["doc_id"]] = d["f_measure"]
        pairs = []
        for a, b in itertools.combinations(sorted(scores), 2):
            ids = sorted(set(scores[a]) & set(scores[b]))
            diff = np.array([scores[a][i] - scores[b][i] for i in ids])
            rng = np.random.default_rng(seed)
            boot = diff[rng.integers(0, len(diff), (replicates, len(diff)))].mean(axis=1)
            flips = rng.choice([-1.0, 1.0], (replicates, len(diff)))
            observed = diff.mean()
            extreme = np.abs((flips * diff).mean(axis=1)) >= abs(observed) - 1e-12
            p_perm = (1 + np.sum(extreme)) / (replicates + 1)
            p_boot = min(1.0, 2 * min(np.mean(boot <= 0), np.mean(boot >= 0)))
            pairs.append(
                {
                    "metric": metric,
                    "measure": "f_measure",
                    "system_a": a,
                    "system_b": b,
                    "documents": len(ids),
                    "mean_a": float(np.mean([scores[a][i] for i in ids])),
                    "mean_b": float(np.mean([scores[b][i] for i in ids])),
                    "difference": float(observed),
                    "ci_low": float(np.quantile(boot, 0.025)),
                    "ci_high": float(np.quantile(boot, 0.975)),
                    "p_bootstrap": float(p_boot),
                    "p_permutation": float(p_perm),
                }
            )
        # Holm: the k-th smallest p times (m - k + 1), made monotone.
        order = sorted(range(len(pairs)), key=lambda i: pairs[i]["p_permutation"])
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (len(pairs) - rank) * pairs[i]["p_permutation"]))
            pairs[i]["p_adjusted"] = running
        rows += pairs
    return rows


class Page(HTMLParser):
    """What a browser would see: tags, texts, tables (cells as text) and headings."""

    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.svg_texts, self.tables, self.headings = [], [], [], [], []
        self._stack, self._text, self._cell, self._heading = [], [], None, None
        self.title = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += attrs
        self._stack.append(tag)
        self._text = []
        if tag == "table":
            self.tables.append({"after": self.headings[-1] if self.headings else "", "rows": []})
        elif tag == "tr":
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = []
            self._cell_attrs = dict(attrs)
        elif tag in ("h2", "h3"):
            self._heading = []

    def handle_endtag(self, tag):
        text = "".join(self._text)
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append(("".join(self._cell).strip(), self._cell_attrs))
            self._cell = None
        elif tag in ("h2", "h3"):
            self.headings.append("".join(self._heading).strip())
            self._heading = None
        elif tag == "text":
            self.svg_texts.append(text)
        elif tag == "title":
            self.title = text
        if self._stack and self._stack[-1] == tag:
            self._stack.pop()

    def handle_data(self, data):
        self._text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._heading is not None:
            self._heading.append(data)

    def table_after(self, heading, nth=0):
        return [t["rows"] for t in self.tables if t["after"] == heading][nth]


def official_averages():
    """{(system, metric, measure): (value, low, high)} from the official output, x100, as the page prints."""
    found = {}
    pattern = r"^(\S+) (\S+) Average_([RPF]): ([0-9.]+) \(95%-conf\.int\. ([0-9.]+) - ([0-9.]+)\)$"
    for line in OFFICIAL.read_text().splitlines():
        if m := re.match(pattern, line):
            # x100 from the printed digits, rounded half up as a paper rounds 0.27465 to 27.47
            found["sys" + m[1], m[2], m[3]] = tuple(
                str((Decimal(v) * 100).quantize(Decimal("0.01"), ROUND_HALF_UP)) for v in m.group(4, 5, 6)
            )
    return found


def cells(row):
    return [text for text, _ in row]


def test_the_run_writes_its_report_with_the_official_numbers(result):
    out, record, system_rows, _ = result
    page = Page((out / REPORT_NAME).read_text(encoding="utf-8"))
    assert page.title == f"ROUGE report {record['started']}"
    official = official_averages()
    name_of = {"sys13": SCRIPT, "sys14": ODD}
    for metric in METRICS:
        table = page.table_after(metric)
        assert cells(table[0]) == ["#", "system", "docs", "R", "P", "F", "F 95% CI"]
        details = page.table_after(metric, 1)  # the other averages, under "Details"
        assert cells(details[0]) == ["system", "mean F", "micro F", "Poisson bootstrap CI", "SE"]
        body = [cells(r) for r in table[1:]]
        assert len(body) == 8 and [r[0] for r in body] == [str(i) for i in range(1, 9)]
        by_system = {r[1]: r for r in body}
        for system in ("sys11", "sys12", "sys13", "sys14", "sys21", "sys22", "sys23", "sys24"):
            r, p, f = (official[system, metric, m] for m in "RPF")
            name = name_of.get(system, system)
            row = by_system[name]
            had = 25 + record["counts"]["errors_by_system"].get(name, 0)  # scored / had
            assert row[2:7] == [f"25/{had}", r[0], p[0], f[0], f"{f[1]}\u2013{f[2]}"], (metric, system)
        # best first, by the official F (ties broken by name)
        ranked = sorted(by_system, key=lambda s: (-float(by_system[s][5]), s))
        assert [r[1] for r in body] == ranked
    # sys24 is the best system by ROUGE-1 in the official output: 27.40 (22.02-33.22)
    best = cells(page.table_after("ROUGE-1")[1])
    assert best[1:7] == ["sys24", "25/25", "30.40", "27.47", "27.40", "22.02\u201333.22"]


def test_header_counts_and_errors_table(result):
    out, record, _, _ = result
    html = (out / REPORT_NAME).read_text(encoding="utf-8")
    page = Page(html)
    assert record["counts"]["errors_by_reason"] == {"invalid_json": 1, "missing_field": 1, "wrong_type": 1}
    cards = re.findall(r'<div class="value">([^<]*)</div><div class="label">([^<]*)</div>', html)
    assert cards == [
        ("203", "rows read"), ("200", "scored"), ("3", "errors"),
        ("25", "documents"), ("8", "systems"), ("8", "metrics"),
    ]  # fmt: skip
    errors = [cells(r) for r in page.table_after("Errors")]
    assert errors == [
        ["reason", "rows", "meaning"],
        ["invalid_json", "1", "a line is not valid JSON"],
        ["missing_field", "1", "a required field is absent"],
        ["wrong_type", "1", "a field has the wrong type"],
    ]
    versions = dict(cells(r) for r in page.table_after("Signature and versions"))
    assert versions["signature"] == record["signature"]
    assert versions["ROUGE-1.5.5 flags"] == "-c 95 -r 1000 -n 4 -m -w 1.2 -2 -1 -U -f A -p 0.5 -t 0"
    assert versions["apache-beam"] == "2.77.0"
    # The run computed paired significance itself: 28 pairs of 8 systems x 8 metrics x R/P/F.
    assert len(pq.read_table(out / "significance.parquet")) == 28 * 8 * 3
    assert "Paired significance was not computed for this run." not in html


def test_significance_matrix(result):
    _, record, system_rows, significance = result
    page = Page(render_report(system_rows, significance, {}, record))
    matrix = page.table_after("ROUGE-1 \u00b7 F-measure (%d of 28 pairs significant)" % sum(
        1 for s in significance if s["metric"] == "ROUGE-1" and s["p_adjusted"] < 0.05
    ))  # fmt: skip
    assert cells(matrix[0]) == [""] + [str(i) for i in range(1, 9)]
    names = [re.sub(r"^\d+\. ", "", r[0][0]) for r in matrix[1:]]
    # rows in the order of the ROUGE-1 table (best first)
    assert names == [cells(r)[1] for r in page.table_after("ROUGE-1")[1:]]
    for pair in (s for s in significance if s["metric"] == "ROUGE-1"):
        a, b = names.index(pair["system_a"]), names.index(pair["system_b"])
        levels = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
        stars = next((s for level, s in levels if pair["p_adjusted"] < level), "")
        text, attrs = matrix[1 + a][1 + b]
        assert text == "%+.2f%s" % (100 * pair["difference"], stars)
        assert matrix[1 + b][1 + a][0] == "%+.2f%s" % (-100 * pair["difference"], stars)
        tone = "" if not stars else ("better" if pair["difference"] > 0 else "worse") + str(len(stars))
        assert attrs["class"] == tone
        assert attrs["title"].endswith(f"; {pair['documents']} documents")
    assert matrix[1][1][0] == "\u00b7"  # the diagonal
    # the best ROUGE-1 system against the worst: a large, significant difference
    assert matrix[1][8][1]["class"].startswith("better") and matrix[8][1][1]["class"].startswith("worse")


def test_the_runs_own_significance_states_its_floor_and_turns_the_effect_size_with_the_difference(result):
    out, _, _, _ = result
    html = (out / REPORT_NAME).read_text(encoding="utf-8")
    # 25 documents: the smallest p is 2^-24; Holm over the 28 pairs of 8 systems: 28 x 2^-24.
    assert f"The smallest p these documents allow is {2**-24:.2g} (2^(1\u2212n) on n documents)" in html
    assert f"after Holm over 28 pairs, the smallest adjusted p is {28 * 2**-24:.2g}." in html
    assert "exact over all 2^n sign patterns up to 20 documents" in html
    documents = document_rows(out)
    f = {}
    for d in documents:
        if d["metric"] == "ROUGE-1":
            f.setdefault(d["system"], {})[d["doc_id"]] = d["f_measure"]
    page = Page(html)
    matrix = next(t["rows"] for t in page.tables if t["after"].startswith("ROUGE-1 \u00b7 F-measure"))
    names = [re.sub(r"^\d+\. ", "", r[0][0]) for r in matrix[1:]]
    checked = 0
    for i, j in itertools.permutations(range(len(names)), 2):
        a, b = names[i], names[j]
        diff = np.array([f[a][d] - f[b][d] for d in sorted(f[a])])
        if not diff.std():
            continue
        title = matrix[1 + i][1 + j][1]["title"]
        assert title.startswith(f"{a} \u2212 {b}: ")
        d_z = float(re.search(r"effect size d_z (\S+);", title)[1])
        assert d_z == pytest.approx(diff.mean() / diff.std(ddof=1), rel=1e-3), title  # row minus column, both ways
        checked += 1
    assert checked == 56


def test_the_same_input_gives_the_same_bytes(result):
    """The run's report equals a re-rendering from the folder's own tables, in fresh
    processes with different hash seeds, with and without significance rows."""
    out, record, system_rows, significance = result
    code = (
        "import json, sys, pyarrow.parquet as pq\n"
        "from pipeline.render.html import render_report\n"
        "out, sig = sys.argv[1], json.load(open(sys.argv[2]))\n"
        "rows = pq.read_table(out + '/system_scores.parquet').to_pylist()\n"
        "record = json.load(open(out + '/run.json'))\n"
        "errors = record['counts']['errors_by_reason']\n"
        "sys.stdout.buffer.write(render_report(rows, sig, errors, record).encode('utf-8'))\n"
    )
    sig_file = out.parent / "significance.json"
    expected = {}
    for name, sig in (("none", []), ("sig", significance)):
        sig_file.write_text(json.dumps(sig))
        expected[name] = render_report(system_rows, sig, record["counts"]["errors_by_reason"], record)
        for seed in ("1", "2"):
            env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED=seed)
            fresh = subprocess.run(
                [sys.executable, "-c", code, str(out), str(sig_file)],
                env=env,
                capture_output=True,
                check=True,
            ).stdout
            assert fresh == expected[name].encode("utf-8")
    own = pq.read_table(out / "significance.parquet").to_pylist()  # the run's own paired tests
    assert (out / REPORT_NAME).read_bytes() == render_report(
        system_rows, own, record["counts"]["errors_by_reason"], record
    ).encode("utf-8")
    twice = [render_report(system_rows, significance, {}, record) for _ in range(2)]
    assert twice[0] == twice[1]


def test_input_text_is_escaped_everywhere(result):
    from markupsafe import Markup

    out, record, system_rows, significance = result
    sections = [
        Section(SCRIPT, note=SCRIPT, rows=[{"system": SCRIPT, "pearson": 0.91234}], html=SCRIPT),
        Section("Trusted", html=Markup("<svg><circle r='3'/></svg>")),
    ]
    html = render_report(system_rows, significance, {SCRIPT: 1}, record, sections)
    assert "<script" not in html.lower()
    assert "javascript:" not in html.lower()
    page = Page(html)
    assert "script" not in page.tags
    assert not [name for name, _ in page.attributes if name.startswith("on")]
    # the name shows as text: in the tables, the matrix, the chart and the sections
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8 + 1 + 2 + 1 + 1 + 3
    assert SCRIPT in page.svg_texts and ODD in page.svg_texts  # mathtext is off: '$' stays
    assert SCRIPT in page.headings
    assert "circle" in page.tags  # a Markup section is inserted as is
    # the report written by the run escapes the same way
    assert "<script" not in (out / REPORT_NAME).read_text(encoding="utf-8").lower()


def chromium():
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is missing: run scripts/install_chromium.sh (as root)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def browse(binary, page: Path, tmp_path: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", f"--user-data-dir={tmp_path / 'chromium-profile'}", *args, page.as_uri(),
        ],
        capture_output=True, timeout=300, check=True,
    )  # fmt: skip


def blobs(mask: np.ndarray, smallest: int = 20) -> list[tuple[int, int, int]]:
    """Connected regions (4-neighbour) of a boolean image: (pixels, centre row, centre column)."""
    seen = np.zeros_like(mask)
    found = []
    for start in zip(*np.nonzero(mask)):
        if seen[start]:
            continue
        seen[start] = True
        queue, pixels = deque([start]), []
        while queue:
            y, x = queue.popleft()
            pixels.append((y, x))
            for n in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                if 0 <= n[0] < mask.shape[0] and 0 <= n[1] < mask.shape[1] and mask[n] and not seen[n]:
                    seen[n] = True
                    queue.append(n)
        if len(pixels) >= smallest:
            ys, xs = zip(*pixels)
            found.append((len(pixels), sum(ys) // len(ys), sum(xs) // len(xs)))
    return found


def test_chromium_shows_the_chart_and_runs_no_script(result, tmp_path):
    from PIL import Image

    binary = chromium()
    out, record, system_rows, significance = result
    page = tmp_path / REPORT_NAME
    page.write_text(render_report(system_rows, significance, record["counts"]["errors_by_reason"], record))
    shot = tmp_path / "report.png"
    browse(binary, page, tmp_path, f"--screenshot={shot}", "--window-size=1200,2000")
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert pixels.shape == (2000, 1200, 3)
    marker = np.array([int(MARKER_COLOUR[i : i + 2], 16) for i in (1, 3, 5)])
    is_marker = np.all(np.abs(pixels - marker) <= 8, axis=2)
    found = blobs(is_marker)
    # one dot-and-whisker per system and metric: 8 panels of 8 systems, two panels a row
    assert len(found) == 64, found
    assert sum(1 for _, _, x in found if x < 600) == 32
    assert all(size < 2000 for size, _, _ in found)  # separate rows, not one smear
    top = min(y for _, y, _ in found)
    assert 250 < top < 600  # below the header, at the top of the Scores section
    # the chart's axes and grid are drawn, and the page background is white
    axis = np.all(np.abs(pixels - np.array([0x8C, 0x95, 0x9F])) <= 12, axis=2)
    assert axis[top - 20 :].sum() > 2000
    assert np.all(pixels[1990, 5] == 255)

    # The DOM after loading: the title is untouched, no script element, the name is text.
    dom = browse(binary, page, tmp_path, "--dump-dom").stdout.decode("utf-8")
    assert f"<title>ROUGE report {record['started']}</title>" in dom
    assert "<script" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


def test_other_presets_one_system_and_missing_documents():
    """Rows without ROUGE-1.5.5 averages (another preset) show the mean F with its
    Poisson-bootstrap interval; one system has no pair to compare; a run record with
    systems missing documents says so; extra tables print floats with 4 digits."""
    from pipeline.io.tables import SYSTEM_COLUMNS

    row = dict.fromkeys(name for name, _ in SYSTEM_COLUMNS)
    row.update(
        system="t5-base", metric="rougeLsum", documents=3, recall=0.5, precision=0.4, f_measure=0.4567,
        micro_f_measure=0.45, bootstrap_f_measure_low=0.4, bootstrap_f_measure_high=0.5,
        jackknife_se_f_measure=0.0123, signature="rouge_score|ci:90%@1000",
    )  # fmt: skip
    counts = {"rows_read": 7, "scored": 3, "errors": 4, "systems_missing_documents": {"t5-base": 2}}
    record = {"counts": counts}
    section = Section("Correlation", rows=[{"metric": "rougeLsum", "kendall": 0.91234, "ci": None}])
    html = render_report([row], [], {"no_references": 4}, record, [section])
    page = Page(html)
    table = [cells(r) for r in page.table_after("rougeLsum")]
    assert table[0][6] == "F 90% CI"
    assert table[1] == ["1", "t5-base", "3", "50.00", "40.00", "45.67", "40.00\u201350.00"]
    details = [cells(r) for r in page.table_after("rougeLsum", 1)]
    assert details[1] == ["t5-base", "45.67", "45.00", "40.00\u201350.00", "1.23"]
    assert "Poisson bootstrap over documents" in html
    assert "One system: there is no pair to compare." in html
    assert "t5-base (2 missing)" in html
    assert [cells(r) for r in page.table_after("Errors")][1] == [
        "no_references", "4", "no references for the candidate's doc_id"
    ]  # fmt: skip
    assert [cells(r) for r in page.table_after("Correlation")] == [
        ["metric", "kendall", "ci"], ["rougeLsum", "0.9123", ""]
    ]  # fmt: skip
    assert "rougeLsum" in page.svg_texts and "45.67" in page.svg_texts


def test_nothing_scored_still_renders():
    html = render_report([], [], {}, {})
    assert "No system was scored." in html and "<svg" not in html


def test_an_odd_number_of_metrics_leaves_no_empty_panel(result):
    _, record, system_rows, _ = result
    three = [r for r in system_rows if r["metric"] in ("ROUGE-1", "ROUGE-2", "ROUGE-L")]
    html = render_report(three, [], {}, record)
    # a group per panel: three panels, not a fourth empty frame
    assert html.count('<g class="panel">') == 3
    titles = [t for t in Page(html).svg_texts if re.fullmatch(r"ROUGE-\S+", t)]
    assert titles == ["ROUGE-1", "ROUGE-2", "ROUGE-L"]
