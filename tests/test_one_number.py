"""One number, one name (issue 32): every view of the demo's result prints the official
script's digits, says which average it shows, and orders and names metrics alike.

The demo (configs/demo.toml: the ROUGE-1.5.5 package's own DUC 2003 sample with
pyrouge's flags) is run, scored and compared as a user would, through the command
line; the expected digits are the official script's printed Average_F for the same
flags (tests/golden/rouge155/sample-output), x 100, rounded half up as papers round
them (0.09325 -> 9.33, where binary floating point gives 9.32)."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rouge_core import RougeSettings, names
from tests.conftest import GOLDEN
from tests.pipeline.render.views import (
    chart_labels,
    first_chart_rows,
    official,
    report_f_cells,
    wide_table_f,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted(str(p) for p in (ROOT / "pipeline" / "sample").glob("duc2003-*.jsonl"))
METRICS = ["ROUGE-1", "ROUGE-2", "ROUGE-3", "ROUGE-4", "ROUGE-L", "ROUGE-W-1.2", "ROUGE-S*", "ROUGE-SU*"]
OFFICIAL = official(
    (GOLDEN / "sample-output" / "ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m.out").read_text(), lambda s: f"sys{s}"
)


def cli(*args):
    done = subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's result folder and what `run` printed; `compare` of it with itself."""
    base = tmp_path_factory.mktemp("demo")
    run = cli("run", "--config", ROOT / "configs" / "demo.toml", "--output", base / "demo", "--quiet")
    compared = cli("compare", base / "demo", base / "demo", "--all", "--output", base / "compared", "--quiet")
    return base, run.stdout, compared.stdout


def paper(key) -> str:
    return OFFICIAL[key][1]


def test_the_sample_has_the_issues_cases():
    # The values whose float rounding differs from the printed digits: the chart printed 9.32.
    assert OFFICIAL["ROUGE-2", "sys24"] == ("0.09325", "9.33") and "%.2f" % (100 * 0.09325) == "9.32"
    assert OFFICIAL["ROUGE-1", "sys23"][1] == "11.59" and OFFICIAL["ROUGE-2", "sys21"][1] == "1.76"
    assert len(OFFICIAL) == 64


def test_the_runs_views_print_the_official_digits(demo):
    base, printed, _ = demo
    folder = base / "demo"
    page = (folder / "report.html").read_text(encoding="utf-8")
    views = {
        "terminal table": wide_table_f(printed),
        "system_scores.md": wide_table_f((folder / "system_scores.md").read_text(encoding="utf-8")),
        "report table": report_f_cells(page, METRICS),
        "report chart": chart_labels(page),
    }
    for view, found in views.items():
        assert found == {key: paper(key) for key in OFFICIAL}, view
    rows = pq.read_table(folder / "system_scores.parquet").to_pylist()
    assert {(r["metric"], r["system"]): "%.5f" % r["rouge155_f_measure"] for r in rows} == {
        key: printed for key, (printed, _) in OFFICIAL.items()
    }


def test_score_prints_the_same_digits_and_names_its_averages():
    done = cli("score", *SAMPLE, "--format", "json", "--quiet")
    objects = json.loads(done.stdout)
    assert {(o["name"], o["system"]): "%.2f" % o["score"] for o in objects} == {key: paper(key) for key in OFFICIAL}
    for o in objects:
        assert o["average"] == "rouge155"  # what "score" is, beside the plain means it is not
        assert "%.5f" % o["rouge155_f_measure"] == OFFICIAL[o["name"], o["system"]][0]
        assert set(o) >= {"mean_recall", "mean_precision", "mean_f_measure"} and "f_measure" not in o
    table = cli("score", *SAMPLE, "--format", "table", "--quiet")
    assert wide_table_f(table.stdout) == {key: paper(key) for key in OFFICIAL}
    assert "ROUGE-1.5.5's average with its 95% bootstrap interval" in table.stdout
    rows = list(csv.DictReader(io.StringIO(cli("score", *SAMPLE, "--format", "csv", "--quiet").stdout)))
    assert {(r["metric"], r["system"]): "%.5f" % float(r["rouge155_f_measure"]) for r in rows} == {
        key: printed for key, (printed, _) in OFFICIAL.items()
    }
    only = cli("score", *SAMPLE, "--score-only", "--quiet").stdout.splitlines()
    systems = sorted({system for _, system in OFFICIAL})
    assert only == ["\t".join(paper((metric, system)) for metric in METRICS) for system in systems]


def test_compare_of_a_run_with_itself_shows_its_own_table_values(demo):
    base, _, compared = demo
    lines = [line.split() for line in compared.splitlines() if re.match(r"\s+sys\d+\s", line)]
    assert {(metric, system): (old, new) for system, metric, old, new, *_ in lines} == {
        key: (paper(key), paper(key)) for key in OFFICIAL
    }  # sys11 ROUGE-1: 20.96 as the run's table, not the plain mean 21.14
    assert "old, new: ROUGE-1.5.5's average (its bootstrap over documents)" in compared
    assert "mean change: new - old of the mean" in compared
    rows = pq.read_table(base / "compared" / "comparison.parquet").to_pylist()
    means = {(r["metric"], r["system"]): r["f_measure"] for r in pq.read_table(base / "demo" / "system_scores.parquet").to_pylist()}
    for r in rows:
        key = (r["metric"], r["system"])
        assert (r["average"], "%.5f" % r["old"], "%.5f" % r["new"]) == ("rouge155", OFFICIAL[key][0], OFFICIAL[key][0])
        assert r["old_mean"] == pytest.approx(means[key], abs=1e-12)
    assert "%.2f" % (100 * means["ROUGE-1", "sys11"]) == "21.14"  # the other average, which compare names apart
    page = (base / "compared" / "report.html").read_text(encoding="utf-8")
    assert "old, new: ROUGE-1.5.5&#39;s average" in page or "old, new: ROUGE-1.5.5's average" in page


def test_the_run_and_its_reports_order_and_name_metrics_alike(demo):
    base, printed, compared = demo
    record = json.loads((base / "demo" / "run.json").read_text())
    assert record["profiles"][0]["metrics"] == METRICS == names.ordered(METRICS)
    header = next(line for line in printed.splitlines() if line.lstrip().startswith("#"))
    assert header.split()[3:] == METRICS
    page = (base / "demo" / "report.html").read_text(encoding="utf-8")
    assert [m for m in re.findall(r"<h3>([^<]+)</h3>", page) if m in METRICS][:8] == METRICS
    systems_lines = [line.split()[:2] for line in compared.splitlines() if re.match(r"\s+sys11\s", line)]
    assert [metric for _, metric in systems_lines] == METRICS
    # The legend says what each metric of the run measures, W, S and SU included.
    for line in ("ROUGE-W-1.2: weighted LCS with weight 1.2", "ROUGE-S*: skip-bigrams (word pairs in order, at any",
                 "ROUGE-SU*: skip-bigrams (word pairs in order, at any distance) plus unigrams"):
        assert line in " ".join(printed.split()), line


def test_the_signature_names_the_references_per_document(demo):
    base, printed, _ = demo
    record = json.loads((base / "demo" / "run.json").read_text())
    settings = RougeSettings.from_flags("-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m")
    assert record["signature"] == settings.signature(nrefs=4)  # DUC 2003: four references a document
    assert f"signature: {record['signature']}" in printed
    rows = pq.read_table(base / "demo" / "system_scores.parquet").to_pylist()
    assert {r["signature"] for r in rows} == {record["signature"]}
    assert f"Signature: `{record['signature']}`" in (base / "demo" / "system_scores.md").read_text()


def test_the_first_chart_is_on_the_first_screen(demo, tmp_path):
    base, _, _ = demo
    rows = first_chart_rows(base / "demo" / "report.html", tmp_path)
    # 8 systems a panel, two panels a row: the first row of panels within 900 px of a 1,400 px wide window.
    assert len([y for y in rows if y < 900]) >= 16, rows


# ------------------------------------------------------------------ one grammar of metric names
def test_an_unknown_metric_name_is_refused_everywhere_with_the_names(tmp_path):
    text = ROOT / "pipeline" / "sample" / "text"
    score = [sys.executable, "-m", "pipeline", "score", text / "sys24.txt", text / "reference-1.txt", "--quiet"]
    config = tmp_path / "lsum.toml"
    config.write_text(f'[input]\ncandidates = ["{SAMPLE[0]}"]\n[rouge]\npreset = "rouge_score"\nrouge_types = ["rougeLSum"]\n')
    for extra in (["--preset", "rouge_score", "--rouge-types", "rouge1,rougeLSum"], ["--sort", "rougeLSum"]):
        done = subprocess.run([*map(str, score), *extra], capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 2 and done.stdout == ""
        assert "unknown metric name 'rougeLSum': did you mean rougeLsum?" in done.stderr
        assert names.VALID_NAMES in done.stderr
    done = subprocess.run([sys.executable, "-m", "pipeline", "run", "--config", str(config), "--dry-run"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "did you mean rougeLsum?" in done.stderr
    # as rouge-score itself and this package's drop-in of it refuse it
    from rouge_score import rouge_scorer as theirs

    from rouge_core.compat import rouge_scorer as ours

    for module in (theirs, ours):
        with pytest.raises(ValueError, match="Invalid rouge type: rougeLSum"):
            module.RougeScorer(["rougeLSum"]).score("a b", "a b")


def test_legends_say_what_every_metric_of_every_config_measures():
    from pipeline.config import load_config

    profiles = [p for path in sorted((ROOT / "configs").glob("*.toml")) for p in load_config(str(path)).profile_list()]
    profiles += [type(profiles[0])("rs", (RougeSettings.from_preset(
        "rouge_score", rouge_types=["rouge2", "rougeL", "rougeLsum", "rougeW-1.2", "rougeS4", "rougeSU4"]),))]
    families = set()
    for profile in profiles:
        lines = names.legend(profile.tags)
        for tag in profile.tags:
            metric = names.parse(tag)
            families.add((metric.family, metric.style))
            prefix = ("ROUGE-N" if metric.style == "rouge155" else "rougeN") if metric.family == "n" else tag
            assert any(line.startswith(f"{prefix}: ") for line in lines), (tag, lines)
    assert {family for family, _ in families} == {"n", "L", "W", "S", "SU"}


def test_metric_tags_are_parsed_only_in_names_py():
    """No module but rouge_core/names.py reads a metric tag's text (its family by a
    prefix, its n by a slice, a regex of the names): they take names.parse's parts."""
    reading = re.compile(
        r"""startswith\(\s*["'](ROUGE-|rouge[0-9LSW])|endswith\(\s*["']-L|["']-(SU|S|W|L)["']\s+in\s|strncmp\(|atoi\(tag"""
        r"""|\[5:\]|\[6:\]|re\.compile\(r?["']\^?(ROUGE|rouge)|==\s*["'](ROUGE-[LWS]|rougeL|rougeLsum)["']"""
    )
    found = []
    for path in sorted([*(ROOT / "rouge_core").rglob("*.py"), *(ROOT / "rouge_core").glob("*.c"),
                        *(ROOT / "pipeline").rglob("*.py")]):
        if path.name == "names.py" and path.parent.name == "rouge_core":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if reading.search(line) and not line.lstrip().startswith(("#", "//", "*", ">>>")):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
