"""Judgments and metric scores are untrusted input for `meta-eval` (issue 22): a value
that is not a finite number, a truncated file, a copy that would replace a real
system, systems that print alike: exit 2 naming the file, row and column; every
numeric option range-checked (NaN refused)."""

import json

import pytest

from pipeline.cli import main

SYSTEMS = ["M0", "M1", "M2", "M3"]
DOCS = ["d1", "d2", "d3"]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def inputs(tmp_path):
    scores = [
        {"system": s, "doc_id": d, "ROUGE-1": 0.1 * i + 0.01 * j, "ROUGE-2": 0.05 * i + 0.02 * j}
        for i, s in enumerate(SYSTEMS) for j, d in enumerate(DOCS)
    ]
    judgments = [
        {"system": s, "doc_id": d, "coherence": 1 + i + 0.3 * ((i * 7 + j) % 3)}
        for i, s in enumerate(SYSTEMS) for j, d in enumerate(DOCS)
    ]
    return write(tmp_path / "scores.jsonl", scores), judgments, tmp_path


def meta_eval(scores, judgments_path, *options, capsys):
    code = main(["meta-eval", "--metric-scores", str(scores), "--judgments", str(judgments_path),
                 "--replicates", "20", *options])
    captured = capsys.readouterr()
    return code, captured.err


def test_the_clean_inputs_correlate(inputs, capsys):
    scores, judgments, tmp = inputs
    code, err = meta_eval(scores, write(tmp / "j.jsonl", judgments), capsys=capsys)
    assert code == 0, err


@pytest.mark.parametrize(
    "value, says",
    [
        (float("inf"), "inf is not a finite number"),
        (-float("inf"), "-inf is not a finite number"),
        (1e308, "1e+308 is not a finite number of magnitude at most 1e+100"),
        ("n/a", "'n/a' is not a number"),
        (True, "True is not a number"),
    ],
)
def test_a_judgment_that_is_not_a_finite_number_names_file_row_and_column(inputs, capsys, value, says):
    scores, judgments, tmp = inputs
    judgments[4]["coherence"] = value
    path = tmp / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in judgments))  # json writes Infinity for inf
    code, err = meta_eval(scores, path, "--judgment-columns", "coherence", capsys=capsys)
    assert code == 2, err
    assert f"{path}: row 5, column 'coherence': {says}" in err
    assert "Traceback" not in err


def test_a_metric_score_that_is_not_finite_and_a_truncated_parquet(inputs, capsys):
    scores, judgments, tmp = inputs
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    rows[2]["ROUGE-2"] = float("inf")
    bad = write(tmp / "bad-scores.jsonl", rows)
    code, err = meta_eval(bad, write(tmp / "j.jsonl", judgments), capsys=capsys)
    assert code == 2 and f"{bad}: row 3, column 'ROUGE-2': inf is not a finite number" in err

    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(judgments), tmp / "j.parquet")
    data = (tmp / "j.parquet").read_bytes()
    (tmp / "j.parquet").write_bytes(data[: len(data) // 2])
    code, err = meta_eval(scores, tmp / "j.parquet", capsys=capsys)
    assert code == 2 and f"{tmp / 'j.parquet'}: cannot read it" in err


def test_a_copy_never_replaces_a_real_system(inputs, capsys):
    scores, judgments, tmp = inputs
    path = write(tmp / "j.jsonl", judgments)
    code, err = meta_eval(scores, path, "--duplicate-system", "M0=M1", capsys=capsys)
    assert code == 2 and "'M1' would replace the existing system 'M1'" in err
    code, err = meta_eval(scores, path, "--duplicate-system", "M0=M\uff11", capsys=capsys)  # fullwidth 1
    assert code == 2 and "would replace the existing system 'M1'" in err
    code, err = meta_eval(scores, path, "--duplicate-system", "M9=M10", capsys=capsys)
    assert code == 2 and "there is no system 'M9'" in err


def test_systems_that_print_alike_are_refused_with_both_spellings(inputs, capsys):
    scores, judgments, tmp = inputs
    for row in judgments:
        if row["system"] == "M1":
            row["system"] = "M1\u200b"
    code, err = meta_eval(scores, write(tmp / "j.jsonl", judgments), capsys=capsys)
    assert code == 2
    assert "systems that print alike but differ" in err and "'M1' and 'M1\\u200b'" in err


def test_doc_ids_that_print_alike_are_refused_with_both_spellings(inputs, capsys):
    """d2 judged as 'd2\ufeff' (a byte-order mark from an editor) never met its scores:
    M0..M3 on d2 were silently left out of every summary-level correlation."""
    scores, judgments, tmp = inputs
    for row in judgments:
        if row["doc_id"] == "d2":
            row["doc_id"] = "d2\ufeff"
    code, err = meta_eval(scores, write(tmp / "j.jsonl", judgments), capsys=capsys)
    assert code == 2, err
    assert "doc_ids that print alike but differ" in err and "'d2' and 'd2\\ufeff'" in err


@pytest.mark.parametrize(
    "option, value, stated",
    [
        ("--replicates", "1000000000", "--replicates must be from 0 (no intervals) to 100,000"),
        ("--replicates", "-1", "--replicates must be from 0"),
        ("--confidence", "nan", "--confidence must be a number between 0 and 100"),
        ("--confidence", "0", "--confidence must be a number between 0 and 100"),
        ("--seed", "-1", "--seed must be a whole number from 0 to"),
        ("--alpha", "nan", "--alpha must be a number in (0, 1]"),
    ],
)
def test_every_numeric_option_is_range_checked(inputs, capsys, option, value, stated):
    scores, judgments, tmp = inputs
    code, err = meta_eval(scores, write(tmp / "j.jsonl", judgments), option, value, capsys=capsys)
    assert code == 2 and stated in err, err
