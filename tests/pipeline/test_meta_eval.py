"""The `meta-eval` command on small hand-made tables; numbers checked with scipy."""

import csv
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from pipeline import cli
from pipeline.meta_eval import COLUMNS, metric_order
from pipeline.tables import DOCUMENT_SCHEMA

SYSTEMS = ["s1", "s2", "s3", "s4"]
DOCS = ["d1", "d2", "d3"]
# judgment per (system, doc); metric recall per (system, doc) for two metrics.
HUMAN = {"s1": [1.0, 2.0, 3.0], "s2": [2.0, 2.5, 1.0], "s3": [4.0, 1.0, 2.0], "s4": [3.0, 3.0, 3.5]}
ROUGE1 = {"s1": [0.1, 0.3, 0.5], "s2": [0.2, 0.2, 0.1], "s3": [0.5, 0.1, 0.2], "s4": [0.3, 0.4, 0.6]}
ROUGE2 = {"s1": [0.05, 0.1, 0.2], "s2": [0.1, 0.1, 0.1], "s3": [0.1, 0.1, 0.1], "s4": [0.2, 0.1, 0.3]}


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


def fake_run(tmp_path, profiles=None):
    """A result folder as `run` writes it: per_document/part-*.parquet and run.json."""
    run = tmp_path / "run"
    (run / "per_document").mkdir(parents=True)
    rows = []
    for s in SYSTEMS:
        for j, d in enumerate(DOCS):
            for metric, table in (("ROUGE-1", ROUGE1), ("ROUGE-2", ROUGE2)):
                r = table[s][j]
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
    schema = DOCUMENT_SCHEMA
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
    (run / "run.json").write_text(json.dumps({"signature": "rouge155|test"}), encoding="utf-8")
    return run


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
        "correlations.csv",
        "correlations.md",
        "correlations.parquet",
        "meta_eval.json",
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
    assert record["inputs"]["signature"] == "rouge155|test"
    assert record["counts"]["matched_pairs"] == 12
    printed = capsys.readouterr().out
    assert "| ROUGE-1 |" in printed and "### system-level correlation with quality, R" in printed


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
    assert "| metric | case | stem | stop |" in md
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
    assert "per_document" in capsys.readouterr().err
    dup = write_jsonl(tmp_path / "dup.jsonl", [{"system": "s1", "doc_id": "d1", "q": 1}] * 2)
    assert cli.main(["meta-eval", "--run", str(run), "--judgments", str(dup)]) == 2
    assert "appears twice" in capsys.readouterr().err


def test_metric_order_is_lins_table_order():
    tags = [
        "ROUGE-SU9",
        "ROUGE-L",
        "bleu",
        "ROUGE-S*",
        "ROUGE-10",
        "ROUGE-2",
        "ROUGE-W-1.2",
        "ROUGE-S4",
        "ROUGE-SU*",
    ]
    assert sorted(tags, key=metric_order) == [
        "ROUGE-2",
        "ROUGE-10",
        "ROUGE-L",
        "ROUGE-W-1.2",
        "ROUGE-S*",
        "ROUGE-S4",
        "ROUGE-SU*",
        "ROUGE-SU9",
        "bleu",
    ]


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
