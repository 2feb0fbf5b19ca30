"""The `meta-eval` command on small hand-made tables; numbers checked with scipy."""

import csv
import json
import math
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from pipeline import cli
from pipeline.meta_eval import COLUMNS
from rouge_core import RougeSettings, names
from pipeline.io.tables import DOCUMENT_COLUMNS, arrow_schema
from tests.conftest import markdown_cells
from tests.pipeline.runs import seal

SYSTEMS = ["s1", "s2", "s3", "s4"]
DOCS = ["d1", "d2", "d3"]
# judgment per (system, doc); metric recall per (system, doc) for two metrics.
HUMAN = {"s1": [1.0, 2.0, 3.0], "s2": [2.0, 2.5, 1.0], "s3": [4.0, 1.0, 2.0], "s4": [3.0, 3.0, 3.5]}
ROUGE1 = {"s1": [0.1, 0.3, 0.5], "s2": [0.2, 0.2, 0.1], "s3": [0.5, 0.1, 0.2], "s4": [0.3, 0.4, 0.6]}
ROUGE2 = {"s1": [0.05, 0.1, 0.2], "s2": [0.1, 0.1, 0.1], "s3": [0.1, 0.1, 0.1], "s4": [0.2, 0.1, 0.3]}
PERSON = [0.6, 0.7, 0.8]  # the human pseudo-system's recall per doc, both metrics (not judged)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def judgments(tmp_path):
    return write_jsonl(
        tmp_path / "human.jsonl",
        [
            {"system": s, "doc_id": d, "quality": HUMAN[s][j], "note": "x"}
            for s in SYSTEMS
            for j, d in enumerate(DOCS)
        ],
    )


def fake_run(tmp_path, profiles=None, human=False):
    """A result folder as `run` writes it: per_document/part-*.parquet and run.json;
    with `human`, also the human pseudo-system's scores (PERSON) and [human] enabled."""
    run = tmp_path / "run"
    (run / "per_document").mkdir(parents=True)
    rows = []
    for s in SYSTEMS + ["human"] * human:
        for j, d in enumerate(DOCS):
            for metric, table in (("ROUGE-1", ROUGE1), ("ROUGE-2", ROUGE2)):
                r = PERSON[j] if s == "human" else table[s][j]
                rows.append(
                    {
                        "system": s,
                        "doc_id": d,
                        "metric": metric,
                        "recall": r,
                        "precision": r / 2,
                        "f_measure": 2 * r * (r / 2) / (r + r / 2),
                        "hits": 1.0,
                        "reference_total": 1.0,
                        "candidate_total": 1.0,
                    }
                )
    schema = arrow_schema(DOCUMENT_COLUMNS)
    if profiles:
        rows = [
            dict(row, profile=p, recall=row["recall"] * (i + 1))
            for i, p in enumerate(profiles)
            for row in rows
        ]  # DOCUMENT_SCHEMA has the profile column (null without profiles: "default")
    half = len(rows) // 2
    for k, part in enumerate((rows[:half], rows[half:])):
        pq.write_table(
            pa.Table.from_pylist(part, schema=schema), run / "per_document" / f"part-{k:05d}-of-00002.parquet"
        )
    record = {"signature": "rouge155|n:2|v:0.1.0", "config": {"human": {"enabled": human, "name": "human"}}}
    (run / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return seal(run)


def read_csv(folder):
    with open(folder / "correlations.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_run_folder_in_correlations_out(tmp_path, capsys):
    out = tmp_path / "meta"
    code = cli.main(
        [
            "meta-eval",
            "--run",
            str(fake_run(tmp_path)),
            "--judgments",
            str(judgments(tmp_path)),
            "--output",
            str(out),
            "--replicates",
            "50",
            "--seed",
            "3",
        ]
    )
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "_SUCCESS",
        "correlations.csv",
        "correlations.md",
        "correlations.parquet",
        "meta_eval.json",
        "report.html",
    ]
    rows = read_csv(out)
    assert list(rows[0]) == COLUMNS
    assert COLUMNS[:9] == [
        "profile",
        "level",
        "metric",
        "measure",
        "judgment",
        "pearson",
        "spearman",
        "kendall_b",
        "kendall_c",
    ]
    # 2 metrics x 3 measures x 1 judgment ("note" is not numeric) x 2 levels
    assert len(rows) == 12
    assert {r["judgment"] for r in rows} == {"quality"} and {r["profile"] for r in rows} == {"default"}
    by_key = {(r["level"], r["metric"], r["measure"]): r for r in rows}
    r1_system = by_key[("system", "ROUGE-1", "R")]
    x = [np.mean(ROUGE1[s]) for s in SYSTEMS]
    z = [np.mean(HUMAN[s]) for s in SYSTEMS]
    assert float(r1_system["pearson"]) == pytest.approx(stats.pearsonr(x, z)[0], abs=1e-12)
    assert float(r1_system["kendall_c"]) == pytest.approx(stats.kendalltau(x, z, variant="c")[0], abs=1e-12)
    assert (r1_system["systems"], r1_system["documents"], r1_system["cells"]) == ("4", "3", "12")
    # ROUGE-2 is constant over systems on d2: that document's correlation is undefined.
    r2_summary = by_key[("summary", "ROUGE-2", "R")]
    expected = np.mean(
        [stats.spearmanr([ROUGE2[s][j] for s in SYSTEMS], [HUMAN[s][j] for s in SYSTEMS])[0] for j in (0, 2)]
    )
    assert float(r2_summary["spearman"]) == pytest.approx(expected, abs=1e-12)
    assert (r2_summary["undefined"], r2_summary["spearman_n"]) == ("1", "2")
    low, high = float(r1_system["pearson_low"]), float(r1_system["pearson_high"])
    assert -1 <= low <= high <= 1 and r1_system["resample"] == "both" and r1_system["replicates"] == "50"
    table = pq.read_table(out / "correlations.parquet")
    assert table.column_names == COLUMNS and table.num_rows == 12
    record = json.loads((out / "meta_eval.json").read_text())
    assert record["inputs"]["signature"] == "rouge155|n:2|v:0.1.0"
    assert record["counts"]["matched_pairs"] == 12
    printed = capsys.readouterr().out
    assert "ROUGE-1" in [row[0] for row in markdown_cells(printed)]
    assert "### system-level correlation with quality, R" in printed


def test_profiles_become_columns_of_the_markdown_table(tmp_path):
    out = tmp_path / "meta"
    run = fake_run(tmp_path, profiles=["case", "stem", "stop"])
    assert (
        cli.main(
            [
                "meta-eval",
                "--run",
                str(run),
                "--judgments",
                str(judgments(tmp_path)),
                "--output",
                str(out),
                "--replicates",
                "0",
                "--levels",
                "system",
            ]
        )
        == 0
    )
    md = (out / "correlations.md").read_text()
    assert ["metric", "case", "stem", "stop"] in markdown_cells(md)
    rows = read_csv(out)
    assert [r["profile"] for r in rows if r["metric"] == "ROUGE-1" and r["measure"] == "R"] == [
        "case",
        "stem",
        "stop",
    ]
    assert all(r["pearson_low"] == "" for r in rows)


def test_wide_metric_table_duplicated_system_and_alpha(tmp_path):
    wide = write_jsonl(
        tmp_path / "scores.jsonl",
        [
            {"system": s, "doc_id": d, "m1": ROUGE1[s][j], "m2": ROUGE2[s][j], "key": 7}
            for s in SYSTEMS
            for j, d in enumerate(DOCS)
        ],
    )
    out = tmp_path / "meta"
    assert (
        cli.main(
            [
                "meta-eval",
                "--metric-scores",
                str(wide),
                "--judgments",
                str(judgments(tmp_path)),
                "--metric-columns",
                "m1",
                "--output",
                str(out),
                "--replicates",
                "0",
                "--duplicate-system",
                "s1=s1_copy",
                "--alpha",
                "0.5",
                "--levels",
                "summary",
            ]
        )
        == 0
    )
    (row,) = read_csv(out)
    assert (row["metric"], row["measure"], row["systems"], row["alpha"]) == ("m1", "score", "5", "0.5")
    kept = []
    for j in range(3):
        x = [ROUGE1[s][j] for s in SYSTEMS + ["s1"]]
        z = [HUMAN[s][j] for s in SYSTEMS + ["s1"]]
        tau, p = stats.kendalltau(x, z)
        if p <= 0.5:
            kept.append(tau)
    assert int(row["kendall_b_n"]) == len(kept)
    assert float(row["kendall_b"]) == pytest.approx(np.mean(kept), abs=1e-12)


def test_an_existing_non_empty_output_is_refused_and_nothing_is_left_behind(tmp_path, capsys):
    out = tmp_path / "meta"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    args = [
        "meta-eval",
        "--run",
        str(fake_run(tmp_path)),
        "--judgments",
        str(judgments(tmp_path)),
        "--output",
        str(out),
        "--replicates",
        "0",
    ]
    assert cli.main(args) == 2
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    (out / "keep.txt").unlink()
    assert cli.main(args) == 0  # an empty folder is fine
    assert not [p for p in tmp_path.iterdir() if "staging" in p.name]


def test_input_errors_exit_2_with_a_message(tmp_path, capsys):
    run, human = fake_run(tmp_path), judgments(tmp_path)
    assert (
        cli.main(["meta-eval", "--run", str(run), "--judgments", str(human), "--judgment-columns", "nope"])
        == 2
    )
    assert "no numeric judgment column 'nope'" in capsys.readouterr().err
    assert cli.main(["meta-eval", "--run", str(tmp_path), "--judgments", str(human)]) == 2
    assert "not a complete result folder (no _SUCCESS" in capsys.readouterr().err
    dup = write_jsonl(tmp_path / "dup.jsonl", [{"system": "s1", "doc_id": "d1", "q": 1}] * 2)
    assert cli.main(["meta-eval", "--run", str(run), "--judgments", str(dup)]) == 2
    assert "appears twice" in capsys.readouterr().err


def test_metric_order_is_lins_table_order_and_the_runs():
    tags = ["ROUGE-SU9", "ROUGE-L", "bleu", "ROUGE-S*", "ROUGE-10", "ROUGE-2", "ROUGE-W-1.2", "ROUGE-S4", "ROUGE-SU*"]
    assert sorted(tags, key=names.sort_key) == [
        "ROUGE-2", "ROUGE-10", "ROUGE-L", "ROUGE-W-1.2", "ROUGE-S*", "ROUGE-S4", "ROUGE-SU*", "ROUGE-SU9", "bleu",
    ]  # fmt: skip
    # The order a run's table shows its metrics in, for either naming style.
    for settings in (RougeSettings.from_flags("-n 4 -w 1.2 -2 4 -U"),
                     RougeSettings.from_preset("rouge_score", rouge_types=["rougeSU4", "rougeW-1.2", "rouge2", "rougeL"])):
        tags = settings.metric_tags()
        assert sorted(reversed(tags), key=names.sort_key) == tags


@pytest.mark.parametrize(
    "metrics, message",
    [
        ("ROGUE-2", "--metrics ROGUE-2: no such metric among the scores; the metrics scored are ROUGE-1, ROUGE-2"),
        ("ROUGE-1,ROUGE-3", "--metrics ROUGE-3: no metric ROUGE-3 among these scores (ROUGE-1, ROUGE-2); the "
                            "metrics scored are ROUGE-1, ROUGE-2"),
        ("rougeL", "--metrics rougeL: rougeL is rouge-score's LCS of the whole text"),
    ],
)
def test_metrics_not_scored_are_refused_with_the_metrics_there_are(tmp_path, capsys, metrics, message):
    args = ["meta-eval", "--run", str(fake_run(tmp_path)), "--judgments", str(judgments(tmp_path)),
            "--replicates", "0", "--metrics", metrics]  # fmt: skip
    assert cli.main(args) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""
    pair = metrics.replace("ROUGE-1,", "") + ",ROUGE-1"
    assert cli.main(args[:-3] + ["20", "--compare", pair]) == 2
    assert message.replace("--metrics", "--compare") in capsys.readouterr().err


def test_metrics_and_compare_read_rouge_scores_names(tmp_path, capsys):
    args = ["meta-eval", "--run", str(fake_run(tmp_path)), "--judgments", str(judgments(tmp_path)),
            "--replicates", "0"]  # fmt: skip
    assert cli.main(args + ["--metrics", "rouge2"]) == 0
    by_name = capsys.readouterr().out
    assert cli.main(args + ["--metrics", "ROUGE-2"]) == 0
    assert capsys.readouterr().out == by_name and "ROUGE-2" in by_name and "ROUGE-1" not in by_name
    assert cli.main(args[:-1] + ["20", "--compare", "rouge2,rouge-2"]) == 2
    assert "names ROUGE-2 twice" in capsys.readouterr().err


def test_undefined_as_zero(tmp_path):
    out = tmp_path / "meta"
    assert (
        cli.main(
            [
                "meta-eval",
                "--run",
                str(fake_run(tmp_path)),
                "--judgments",
                str(judgments(tmp_path)),
                "--output",
                str(out),
                "--replicates",
                "0",
                "--levels",
                "summary",
                "--undefined",
                "zero",
                "--metrics",
                "ROUGE-2",
            ]
        )
        == 0
    )
    row = next(r for r in read_csv(out) if r["measure"] == "R")
    taus = [
        stats.kendalltau([ROUGE2[s][j] for s in SYSTEMS], [HUMAN[s][j] for s in SYSTEMS])[0] for j in (0, 2)
    ]
    assert float(row["kendall_b"]) == pytest.approx((taus[0] + 0 + taus[1]) / 3, abs=1e-12)
    assert not math.isnan(float(row["kendall_b"]))


def test_compare_two_metrics_with_the_permutation_test(tmp_path, capsys):
    out = tmp_path / "meta"
    args = ["meta-eval", "--run", str(fake_run(tmp_path)), "--judgments", str(judgments(tmp_path)),
            "--output", str(out), "--replicates", "40", "--compare", "ROUGE-1,ROUGE-2",
            "--permutation-unit", "systems"]  # fmt: skip
    assert cli.main(args) == 0
    with open(out / "comparisons.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    # 3 measures x 1 judgment x 2 levels x 4 methods
    assert len(rows) == 24
    row = next(r for r in rows if (r["level"], r["measure"], r["method"]) == ("system", "R", "pearson"))
    assert (row["metric_x"], row["metric_y"], row["unit"], row["replicates"]) == (
        "ROUGE-1",
        "ROUGE-2",
        "systems",
        "40",
    )
    z = [np.mean(HUMAN[s]) for s in SYSTEMS]
    delta = (
        stats.pearsonr([np.mean(ROUGE1[s]) for s in SYSTEMS], z)[0]
        - stats.pearsonr([np.mean(ROUGE2[s]) for s in SYSTEMS], z)[0]
    )
    assert float(row["delta"]) == pytest.approx(delta, abs=1e-12)
    assert 0 <= float(row["p_value"]) <= 1
    assert pq.read_table(out / "comparisons.parquet").num_rows == 24
    assert cli.main([*args[:-4], "--replicates", "0", "--output", str(tmp_path / "other")]) == 0
    assert cli.main([*args[:5], "--replicates", "0", "--compare", "ROUGE-1,ROUGE-2"]) == 2
    assert "--compare needs --replicates" in capsys.readouterr().err
    assert cli.main([*args[:5], "--compare", "ROUGE-1"]) == 2
    assert "two different metrics" in capsys.readouterr().err


# ----------------------------------------------------------------- report.html

COEFFICIENTS = {"pearson": "Pearson r", "spearman": "Spearman \u03c1", "kendall_b": "Kendall \u03c4b"}
MEASURE_NAMES = {"R": "recall", "P": "precision", "F": "F-measure", "score": "score"}


def shown(row, method):
    """A correlations.csv cell as the report prints it: the coefficient [its interval]."""
    return "%.3f [%.2f, %.2f]" % tuple(float(row[f"{method}{end}"]) for end in ("", "_low", "_high"))


def snapshot(folder):
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_report_html_shows_the_correlations_of_the_csv(tmp_path):
    from tests.pipeline.render.test_report import Page, cells

    run, out = fake_run(tmp_path, human=True), tmp_path / "meta"
    (run / "report.html").write_text("the run's own page", encoding="utf-8")
    before = snapshot(run)
    args = ["meta-eval", "--run", str(run), "--judgments", str(judgments(tmp_path)), "--output", str(out),
            "--replicates", "50", "--seed", "3", "--compare", "ROUGE-1,ROUGE-2"]  # fmt: skip
    assert cli.main(args) == 0
    assert snapshot(run) == before  # the input folder, its report.html included, is left alone
    page = Page((out / "report.html").read_text(encoding="utf-8"))
    assert page.title == "ROUGE meta-evaluation"
    rows = read_csv(out)
    for row in rows:
        heading = f"{row['level'].capitalize()} level: quality, {MEASURE_NAMES[row['measure']]}"
        table = [cells(r) for r in page.table_after(heading)]
        undefined = ["undefined"] if row["level"] == "summary" else []
        assert table[0] == ["metric", *COEFFICIENTS.values(), *undefined]
        (line,) = [r for r in table if r[0] == row["metric"]]
        assert line[1:4] == [shown(row, m) for m in COEFFICIENTS]
        assert line[4:] == [row["undefined"]] * len(undefined)
    # system level first, then summary level; one table per measure
    levels = [h.split()[0] for h in page.headings if " level: " in h]
    assert levels == ["System"] * 3 + ["Summary"] * 3
    # one number checked independently: system-level ROUGE-1 recall, Pearson r
    x, z = [np.mean(ROUGE1[s]) for s in SYSTEMS], [np.mean(HUMAN[s]) for s in SYSTEMS]
    first = cells(page.table_after("System level: quality, recall")[1])
    assert first[0] == "ROUGE-1" and first[1].startswith("%.3f [" % stats.pearsonr(x, z)[0])
    assert [cells(r)[-1] for r in page.table_after("Summary level: quality, recall")[1:]] == ["0", "1"]
    # the human pseudo-system: its mean scores next to the best system's; not judged, not correlated
    human = [cells(r) for r in page.table_after("Human upper bound")]
    assert human[0] == ["metric", "human R", "best system R", "human P", "best system P", "human F",
                        "best system F"]  # fmt: skip
    assert human[1][:5] == ["ROUGE-1", "0.7", format(np.mean(ROUGE1["s4"]), ".4g"), "0.35", "0.2167"]
    assert "The judgments do not rate human" in (out / "report.html").read_text(encoding="utf-8")
    assert {r["systems"] for r in rows} == {"4"}  # human is not among the correlated systems
    # the permutation tests: which metric correlates better, and the p-value
    with open(out / "comparisons.csv", encoding="utf-8") as fh:
        tests = {(r["level"], r["measure"], r["method"]): r for r in csv.DictReader(fh)}
    compared = [cells(r) for r in page.table_after("Metric against metric")]
    assert compared[0] == ["level", "judgment", "measure", "X", "Y", *COEFFICIENTS.values()]
    assert len(compared) == 1 + 2 * 3
    for line in compared[1:]:
        level, measure = line[0], {v: k for k, v in MEASURE_NAMES.items()}[line[2]]
        for method, text in zip(COEFFICIENTS, line[5:], strict=True):
            test = tests[level, measure, method]
            delta, p = float(test["delta"]), float(test["p_value"])
            p_text = f"{p:.4f}" if p >= 0.001 else f"{p:.1e}"  # a p-value as every table prints one
            assert text == f"{'ROUGE-1' if delta > 0 else 'ROUGE-2'} by {abs(delta):.3f}, p {p_text}"
    settings = dict(cells(r) for r in page.table_after("Settings")[1:])
    assert (
        settings["intervals"]
        == "95%, 50 bootstrap replicates resampling systems and documents (BOOT-BOTH), seed 3"
    )
    assert settings["summary-level filter"] == "none" and settings["undefined documents"] == "left out"
    assert settings["metric scores"] == f"{run} (signature rouge155|n:2|v:0.1.0)"


HOSTILE_JUDGMENT = "<script>alert(1)</script>"
HOSTILE_METRIC = '<b onmouseover="alert(2)">m1</b>'
HOSTILE_PROFILE = "<img src=x onerror=alert(3)>"


def hostile_meta_eval(tmp_path):
    """meta-eval on a wide table whose metric, profile and judgment names are markup."""
    wide = write_jsonl(
        tmp_path / "scores.jsonl",
        [
            {"system": s, "doc_id": d, "profile": p, HOSTILE_METRIC: ROUGE1[s][j] * k, "m2": ROUGE2[s][j]}
            for k, p in enumerate((HOSTILE_PROFILE, "plain"), 1)
            for s in SYSTEMS
            for j, d in enumerate(DOCS)
        ],
    )
    human = write_jsonl(
        tmp_path / "human.jsonl",
        [
            {"system": s, "doc_id": d, HOSTILE_JUDGMENT: HUMAN[s][j]}
            for s in SYSTEMS
            for j, d in enumerate(DOCS)
        ],
    )
    out = tmp_path / "meta"
    args = ["meta-eval", "--metric-scores", str(wide), "--judgments", str(human), "--output", str(out),
            "--replicates", "20", "--compare", f"{HOSTILE_METRIC},m2", "--alpha", "0.5"]  # fmt: skip
    assert cli.main(args) == 0
    return out


def test_report_html_escapes_names_from_the_input(tmp_path):
    from markupsafe import escape

    from tests.pipeline.render.test_report import Page, cells

    out = hostile_meta_eval(tmp_path)
    html = (out / "report.html").read_text(encoding="utf-8")
    page = Page(html)
    assert not {"script", "img", "b"} & set(page.tags)
    assert not [name for name, _ in page.attributes if name.startswith("on")]
    for name in (HOSTILE_JUDGMENT, HOSTILE_METRIC, HOSTILE_PROFILE):
        assert str(escape(name)) in html
    assert f"System level: {HOSTILE_JUDGMENT}, score" in page.headings
    table = [cells(r) for r in page.table_after(f"System level: {HOSTILE_JUDGMENT}, score")]
    assert table[0][:4] == ["metric", f"{HOSTILE_PROFILE}: Pearson r", f"{HOSTILE_PROFILE}: Spearman \u03c1",
                            f"{HOSTILE_PROFILE}: Kendall \u03c4b"]  # fmt: skip
    assert [r[0] for r in table[1:]] == [HOSTILE_METRIC, "m2"]
    row = next(
        r
        for r in read_csv(out)
        if (r["level"], r["metric"], r["profile"]) == ("system", HOSTILE_METRIC, "plain")
    )
    assert table[1][4:7] == [shown(row, m) for m in COEFFICIENTS]
    assert "p &lt;= 0.5" in html  # the --alpha filter, in the summary-level note
    markdown = (out / "correlations.md").read_text(encoding="utf-8")
    assert not re.search(r"(?<!\\)<(script|b |img)", markdown)  # names are escaped in the Markdown too
    assert "\\<b onmouseover=\"alert(2)\"\\>m1\\</b\\>" in [row[0] for row in markdown_cells(markdown)]


def test_chromium_renders_the_meta_eval_report(tmp_path):
    from PIL import Image

    from tests.pipeline.render.test_report import browse, chromium

    binary = chromium()
    page = hostile_meta_eval(tmp_path) / "report.html"
    shot = tmp_path / "meta.png"
    done = browse(
        binary, page, tmp_path, f"--screenshot={shot}", "--window-size=1200,1600", "--enable-logging=stderr"
    )
    # the page's console stays empty: no script error, nothing blocked by its Content-Security-Policy
    assert b":CONSOLE" not in done.stderr, done.stderr.decode("utf-8", "replace")
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    header = np.all(pixels == [0xF6, 0xF8, 0xFA], axis=2)  # the header's and the table heads' background
    assert header[:100].mean() > 0.5 and header[200:].sum() > 1000
    assert (pixels.sum(axis=2) < 200).sum() > 2000  # dark text: the headings and the numbers
    dom = browse(binary, page, tmp_path, "--dump-dom").stdout.decode("utf-8")
    assert "<title>ROUGE meta-evaluation</title>" in dom
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


# ------------------------------------------------------------------ for people: progress, printing, the report's head


def _system_tau(table) -> float:
    """scipy's Kendall tau-b of the systems' mean F against their mean judgment."""
    x = [np.mean([2 * r * (r / 2) / (r + r / 2) for r in table[s]]) for s in SYSTEMS]
    return stats.kendalltau(x, [np.mean(HUMAN[s]) for s in SYSTEMS])[0]


def test_the_report_leads_with_a_ranking_per_judgment_and_a_chart(tmp_path):
    from tests.pipeline.render.test_report import Page, cells

    from pipeline.render.html import MARKER_COLOUR

    out = tmp_path / "meta"
    args = ["meta-eval", "--run", str(fake_run(tmp_path)), "--judgments", str(judgments(tmp_path)),
            "--output", str(out), "--replicates", "50"]  # fmt: skip
    assert cli.main(args) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    page = Page(html)
    assert page.headings[:2] == ["Ranking for quality", "Chart"]
    ranking = [cells(r) for r in page.table_after("Ranking for quality")]
    assert ranking[0] == ["#", "metric", "system level", "summary level"]
    taus = {"ROUGE-1": _system_tau(ROUGE1), "ROUGE-2": _system_tau(ROUGE2)}
    best = max(taus, key=taus.get)
    assert [r[1] for r in ranking[1:]] == sorted(taus, key=taus.get, reverse=True)
    first = ranking[1]
    assert first[1] == best and first[2].startswith("%.3f [" % taus[best]) and first[2].endswith("\u2605 best")
    assert sum("\u2605 best" in r[2] for r in ranking[1:]) == 1 and sum("\u2605 best" in r[3] for r in ranking[1:]) == 1
    assert "F-measure with quality" in html[html.index('id="extra-1"'):html.index('id="extra-2"')]  # F, not recall
    # the chart: one dot per metric and level, in the report's marker colour
    chart = html[html.index('id="extra-2"'):html.index('id="extra-3"')]
    assert "<svg" in chart and chart.count(MARKER_COLOUR) >= 2 * 2 * 2  # dot and whisker, 2 metrics x 2 levels
    # the detailed tables: F before recall and precision within a level
    levels = [h for h in page.headings if " level: " in h]
    assert levels[:3] == ["System level: quality, F-measure", "System level: quality, recall",
                          "System level: quality, precision"]  # fmt: skip
    # navigation of a few links, not one per table
    nav = html[html.index("<nav>"):html.index("</nav>")]
    assert re.findall(r">([^<]+)</a>", nav) == ["Ranking", "Chart", "System level", "Summary level", "Settings"]


def test_without_output_everything_computed_is_printed_and_it_says_so_first(tmp_path, capsys):
    args = ["meta-eval", "--run", str(fake_run(tmp_path)), "--judgments", str(judgments(tmp_path)),
            "--replicates", "50", "--seed", "3", "--compare", "ROUGE-1,ROUGE-2"]  # fmt: skip
    assert cli.main(args) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("rouge-pipeline: meta-eval without --output: every correlation and interval "
                                   "is printed, nothing is saved")  # fmt: skip
    out = tmp_path / "saved"
    assert cli.main(args + ["--output", str(out), "--quiet"]) == 0
    capsys.readouterr()
    for row in read_csv(out):  # every coefficient, with its interval, is in what was printed
        if row["level"] == "system" and row["measure"] == "F":
            cell = " / ".join(shown(row, m) for m in COEFFICIENTS)
            assert [row["metric"], cell] in markdown_cells(captured.out)
    assert "Does X correlate better than Y?" in captured.out
    with open(out / "comparisons.csv", encoding="utf-8") as fh:
        test = next(r for r in csv.DictReader(fh) if (r["level"], r["measure"], r["method"]) == ("system", "F", "pearson"))
    delta = float(test["delta"])
    assert f"{'ROUGE-1' if delta > 0 else 'ROUGE-2'} by {abs(delta):.3f}, p {float(test['p_value']):.3f}" in captured.out
    assert "correlations.csv." not in captured.out.replace("keeps them, with the counts, in correlations.csv", "")


def test_meta_eval_shows_its_progress_with_a_total(tmp_path, capsys, monkeypatch):
    from pipeline import progress

    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    args = ["meta-eval", "--run", str(fake_run(tmp_path)), "--judgments", str(judgments(tmp_path)),
            "--replicates", "50", "--output", str(tmp_path / "meta")]  # fmt: skip
    assert cli.main(args) == 0
    err = capsys.readouterr().err
    # 2 metrics x 3 measures x 1 judgment x 2 levels = 12 series
    assert re.search(r"rouge-pipeline: correlations with bootstrap: \d+ of 12 series \(\d+%\), [\d.,]+/s", err), err
    assert "rouge-pipeline: correlations with bootstrap: 12 series in " in err
    assert re.search(r"rouge-pipeline: report: (done|1 pages) in ", err), err
    assert cli.main(args[:-1] + [str(tmp_path / "quiet"), "--quiet"]) == 0
    assert "rouge-pipeline:" not in capsys.readouterr().err
