"""`rouge-pipeline history RUN... --output DIR` (issue 34) on result folders written by the
real pipeline: history.csv holds each run's system_scores.csv value for value,
report.html a chart per metric, each system's last significant change is where
a paired t-test (scipy) finds it, and runs of another signature are kept apart."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

from pipeline.cli import main
from tests.pipeline.runs import document_rows, run_pipeline, seal
from tests.pipeline.test_reuse import DOCUMENTS, night, reference, rows_of, three_references

NIGHTS = ("n1", "n2", "n3", "n4")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Four nights: gamma degrades in n3 (every candidate rewritten from fewer words);
    n4 is scored with other flags (-n 1)."""
    tmp = tmp_path_factory.mktemp("history")

    def worse(system):  # candidates keeping a quarter of their words
        rows = rows_of(system, version=lambda i: 0)
        return [dict(r, candidate=" ".join(r["candidate"].split()[::4])) for r in rows]

    nights = {
        "n1": {"alpha": rows_of("alpha"), "gamma": rows_of("gamma")},
        "n2": {"alpha": rows_of("alpha"), "gamma": rows_of("gamma"), "beta": rows_of("beta")},
        "n3": {"alpha": rows_of("alpha"), "gamma": worse("gamma"), "beta": rows_of("beta")},
        "n4": {"alpha": rows_of("alpha"), "gamma": worse("gamma"), "beta": rows_of("beta")},
    }
    for name, files in nights.items():
        run_pipeline(tmp / name, night(tmp / f"in-{name}", files), flags="-n 1 -r 20" if name == "n4" else "-n 2 -r 20")
    return tmp


def history(runs, tmp_path, *names, options=(), capsys=None):
    code = main(["history", *[str(runs / n) for n in names], "--output", str(tmp_path / "h"), "--quiet", *options])
    out = capsys.readouterr() if capsys else None
    return code, out, tmp_path / "h"


def test_history_csv_holds_each_runs_system_scores_value_for_value(runs, tmp_path, capsys):
    code, out, folder = history(runs, tmp_path, *NIGHTS, capsys=capsys)
    assert code == 0, out.err
    rows = list(csv.reader(io.StringIO((folder / "history.csv").read_text(encoding="utf-8"))))
    assert rows[0][:2] == ["run_id", "started"]
    for name in NIGHTS:
        record = json.loads((runs / name / "run.json").read_text())
        own = list(csv.reader(io.StringIO((runs / name / "system_scores.csv").read_text(encoding="utf-8"))))
        mine = [r for r in rows[1:] if r[0] == record["run_id"]]
        assert [r[1] for r in mine] == [record["started"]] * len(own[1:])
        where = [rows[0].index(column) for column in own[0]]
        assert [[r[k] for k in where] for r in mine] == own[1:]  # every cell as the run wrote it
    table = pq.read_table(folder / "history.parquet").to_pylist()
    for name in NIGHTS:
        run_id = json.loads((runs / name / "run.json").read_text())["run_id"]
        own = pq.read_table(runs / name / "system_scores.parquet").to_pylist()
        assert [{k: v for k, v in r.items() if k not in ("run_id", "started")} for r in table if r["run_id"] == run_id] == own


def test_the_report_has_a_chart_per_metric_and_keeps_other_settings_apart(runs, tmp_path, capsys):
    code, out, folder = history(runs, tmp_path, *NIGHTS, capsys=capsys)
    html = (folder / "report.html").read_text(encoding="utf-8")
    groups = re.findall(r'<div class="group">(.*?)</div>\n(?=<div class="group">|\n*<h2 id="settings">)', html, re.S)
    assert len(groups) == 2  # n1-n3 (-n 2), n4 (-n 1): never one line
    assert html.count("<svg") == 2
    first, second = groups
    for metric in ("ROUGE-1", "ROUGE-2", "ROUGE-L"):  # a panel per metric, each titled
        assert f">{metric}<" in first or f"{metric}</text>" in first
    assert "ROUGE-2" not in second.split("<svg", 1)[1]  # -n 1 has no ROUGE-2
    assert "Scored with other settings than group 1: n: 2 \u2192 1." in second
    assert "group 2: 1 run(s); other settings: n 2 -> 1" in out.out


def test_runs_differing_in_run_facts_only_are_one_group(runs, tmp_path, capsys):
    # a night whose document d000 has three references (nrefs:2-3, not 2) and numbered
    # evaluation ids: the same settings as n1 and n2, so one line with them; n4's -n 1
    # is still a group of its own, and only n is named
    def refs(i):
        return three_references(i) if i == 0 else reference(i)

    files = {s: rows_of(s, refs=refs) for s in ("alpha", "gamma", "beta")}
    facts = run_pipeline(tmp_path / "facts", night(tmp_path / "in-facts", files), flags="-n 2 -r 20", eval_ids="index")
    assert "|eval_ids:index|nrefs:2-3|" in facts["signature"]
    code = main(["history", str(runs / "n1"), str(runs / "n2"), str(tmp_path / "facts"), str(runs / "n4"),
                 "--output", str(tmp_path / "h"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("group ")] == [
        "group 1: 3 run(s)", "group 2: 1 run(s); other settings: n 2 -> 1"]


def test_the_last_significant_change_is_where_a_paired_test_finds_it(runs, tmp_path, capsys):
    code, out, folder = history(runs, tmp_path, *NIGHTS[:3], capsys=capsys)
    assert code == 0
    # scipy on the per-document F of gamma, n2 against n3 (ROUGE-1): a clear drop
    f = {name: {r["doc_id"]: r["f_measure"] for r in document_rows(runs / name)
                if r["system"] == "gamma" and r["metric"] == "ROUGE-1"} for name in ("n2", "n3")}
    docs = sorted(f["n2"])
    test = stats.ttest_rel([f["n3"][d] for d in docs], [f["n2"][d] for d in docs])
    assert test.pvalue < 1e-6 and len(docs) == DOCUMENTS
    change = 100 * (np.mean([f["n3"][d] for d in docs]) - np.mean([f["n2"][d] for d in docs]))
    n3 = json.loads((runs / "n3" / "run.json").read_text())
    line = next(line for line in out.out.splitlines() if line.startswith("  gamma ROUGE-1:"))
    shown = re.fullmatch(rf"  gamma ROUGE-1: worse \(([-+0-9.]+) points\) in run {n3['run_id']} \({n3['started']}\)", line)
    assert shown and abs(float(shown.group(1)) - change) <= 0.005, line
    assert not any(line.startswith("  alpha ") for line in out.out.splitlines())  # alpha never changed
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert '<tr class="worse"><td class="name">gamma</td><td>ROUGE-1</td>' in html


def test_runs_are_taken_by_their_start_time_on_request(runs, tmp_path, capsys):
    code, out, folder = history(runs, tmp_path, "n3", "n1", "n2", options=["--by-start"], capsys=capsys)
    assert code == 0
    ids = [json.loads((runs / n / "run.json").read_text())["run_id"] for n in ("n1", "n2", "n3")]
    seen = [r["run_id"] for r in csv.DictReader(io.StringIO((folder / "history.csv").read_text(encoding="utf-8")))]
    assert list(dict.fromkeys(seen)) == ids


@pytest.mark.parametrize("damage", ["missing", "a file", "incomplete", "changed", "run.json a pipe",
                                    "system_scores.csv a pipe"])
def test_a_folder_missing_incomplete_or_changed_is_refused_in_one_line(runs, tmp_path, capsys, damage):
    broken = tmp_path / "broken"
    if damage == "a file":
        broken.write_text("not a run\n")
    elif damage != "missing":
        shutil.copytree(runs / "n2", broken)
    if damage == "incomplete":
        (broken / "_SUCCESS").unlink()
    elif damage == "changed":
        (broken / "system_scores.csv").write_text((broken / "system_scores.csv").read_text().replace("0.", "0.9", 1))
    elif damage.endswith("a pipe"):  # (opened for reading, a FIFO with no writer would wait forever)
        name = damage.split()[0]
        (broken / name).unlink()
        os.mkfifo(broken / name)
    code = main(["history", str(runs / "n1"), str(broken), "--output", str(tmp_path / "h"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(broken) in err and {"missing": "no such result folder", "a file": "not a folder",
                                   "incomplete": "no _SUCCESS", "changed": "system_scores.csv has",
                                   "run.json a pipe": "run.json: cannot read it",
                                   "system_scores.csv a pipe": "system_scores.csv: cannot read it"}[damage] in err
    assert "not valid JSON" not in err and "is a pipe" in err or not damage.endswith("a pipe"), err
    assert not (tmp_path / "h").exists()
    if damage == "a file":
        assert broken.read_text() == "not a run\n"


@pytest.mark.parametrize("damage", ["the CSV's rows removed", "a CSV row cut short", "a system renamed in the CSV"])
def test_a_resealed_run_whose_csv_and_parquet_disagree_is_refused(runs, tmp_path, capsys, damage):
    """history.csv comes from system_scores.csv, history.parquet and the charts from
    system_scores.parquet: a resealed folder whose two differ lost its rows from the
    CSV silently (or wrote a row of two cells) where the Parquet kept them."""
    broken = tmp_path / "broken"
    shutil.copytree(runs / "n2", broken)
    lines = (broken / "system_scores.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    edited = {"the CSV's rows removed": lines[:1], "a CSV row cut short": [lines[0], "default,alpha\n", *lines[2:]],
              "a system renamed in the CSV": [lines[0], *(line.replace("alpha", "alpha2") for line in lines[1:])]}[damage]
    (broken / "system_scores.csv").write_text("".join(edited), encoding="utf-8")
    seal(broken)
    code = main(["history", str(runs / "n1"), str(broken), "--output", str(tmp_path / "h"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{broken}: system_scores.csv and system_scores.parquet disagree: " in err and {
        "the CSV's rows removed": f"0 rows in the CSV, {len(lines) - 1} in the Parquet",
        "a CSV row cut short": "row 1 of the CSV has 2 cells",
        "a system renamed in the CSV": "of the CSV is not the Parquet's"}[damage] in err, err
    assert not (tmp_path / "h").exists()


def test_a_run_given_twice_is_taken_once_and_said(runs, tmp_path, capsys):
    (tmp_path / "latest").symlink_to(runs / "n2")  # (a link to last night, as a glob of the results may take it too)
    code = main(["history", str(runs / "n1"), str(runs / "n2"), str(tmp_path / "latest"), "--output",
                 str(tmp_path / "h"), "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    run_id = json.loads((runs / "n2" / "run.json").read_text())["run_id"]
    assert f"run {run_id} is given twice ({runs / 'n2'}, {tmp_path / 'latest'}): taken once" in out.err
    assert "(2 runs," in out.out
    seen = [r["run_id"] for r in csv.DictReader(io.StringIO((tmp_path / "h" / "history.csv").read_text(encoding="utf-8")))]
    rows = len(list(csv.DictReader(io.StringIO((runs / "n2" / "system_scores.csv").read_text(encoding="utf-8")))))
    assert seen.count(run_id) == rows  # its rows once


def _system_scores_bomb(folder):  # a 1 MB system name in every row: one dictionary value, a few KB on disk
    import pyarrow as pa

    part = folder / "system_scores.parquet"
    table = pq.read_table(part)
    names = pa.DictionaryArray.from_arrays(pa.array([0] * 20_000, pa.int32()), pa.array(["s" * (1 << 20)]))
    table = pa.concat_tables([table] * (20_000 // table.num_rows + 1)).slice(0, 20_000)  # (20 GB decoded)
    pq.write_table(table.set_column(table.column_names.index("system"), "system", names), part)


def _csv_field_over_the_csv_limit(folder):  # a cell past Python's csv field limit (131,072 characters)
    part = folder / "system_scores.csv"
    header, first, *rest = part.read_text(encoding="utf-8").splitlines()
    part.write_text("\n".join([header, first + "x" * 200_000, *rest]) + "\n", encoding="utf-8")


@pytest.mark.parametrize("damage, expected", [
    (_system_scores_bomb, "system_scores.parquet: not read: a cell of column 'system' decodes to 1048576 bytes"),
    (_csv_field_over_the_csv_limit, "system_scores cannot be read (field larger than field limit"),
])
def test_a_sealed_system_scores_table_that_decodes_past_its_bounds_is_refused(runs, tmp_path, capsys, damage, expected):
    # A result folder is untrusted, sealed or not: its system_scores.parquet was read
    # whole by Arrow (a few KB decoding to 20 GB took the machine's memory), and a CSV
    # cell past the csv module's limit ended in "Error: field larger ..." naming no file.
    from tests.pipeline.runs import seal

    folder = tmp_path / "n1"
    shutil.copytree(runs / "n1", folder)
    damage(folder)
    seal(folder)
    code = main(["history", str(folder), "--output", str(tmp_path / "h"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and str(folder) in err, err
    assert not (tmp_path / "h").exists()
