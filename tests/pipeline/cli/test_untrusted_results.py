"""Result folders are untrusted input for `compare` (issue 22): a value that is not a
score, a missing column, a truncated file, names that print alike: exit 2 naming the
file, row and column; every numeric option is range-checked (NaN refused); exit 1
means only "a significant drop"."""

import math
import shutil

import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.parquet as pq
import pytest

from pipeline.cli import main
from pipeline.io.tables import document_file_stem
from tests.pipeline.test_compare import corpus
from tests.pipeline.runs import run_pipeline, seal, write_jsonl

# The per-document file of the system "good" (each (profile, system) has files of its own).
SHARD = f"per_document/{document_file_stem('default', 'good')}-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    base = tmp_path_factory.mktemp("untrusted")
    run_pipeline(base / "old", [write_jsonl(base / "old.jsonl", corpus(False))], flags="-n 1 -r 10")
    run_pipeline(base / "new", [write_jsonl(base / "new.jsonl", corpus(True))], flags="-n 1 -r 10")
    return base


def edited(base, tmp_path, change):
    """A copy of the new run whose per-document shard is `change(table)`."""
    folder = tmp_path / "edited"
    shutil.copytree(base / "new", folder)
    table = pq.read_table(folder / SHARD)
    pq.write_table(change(table), folder / SHARD)
    return seal(folder)  # a hostile folder whose manifest agrees with it: its values are checked


def set_cell(table, column, row, value, kind=None):
    values = table.column(column).to_pylist()
    values[row] = value
    index = table.column_names.index(column)
    field = table.schema.field(column) if kind is None else pa.field(column, kind)
    return table.set_column(index, field, pa.array(values, type=field.type))


def seal_record(folder, record):
    """run.json replaced by `record`, the folder's manifest written again to agree."""
    import json

    (folder / "run.json").write_text(json.dumps(record))
    seal(folder)


def compare(base, new, *options, capsys):
    code = main(["compare", str(base / "old"), str(new), *options])
    return code, capsys.readouterr().err


def test_the_untouched_runs_compare_and_a_real_drop_exits_1(base, capsys):
    code, err = compare(base, base / "new", capsys=capsys)
    assert code == 1, err  # "good" lost 40% of its words on most documents: a drop


@pytest.mark.parametrize(
    "value, shown",
    [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf"), (-0.5, "-0.5"), (1e300, "1e+300")],
)
def test_a_value_that_is_not_a_score_names_file_row_and_column(base, tmp_path, capsys, value, shown):
    folder = edited(base, tmp_path, lambda t: set_cell(t, "f_measure", 6, value))
    code, err = compare(base, folder, capsys=capsys)
    assert code == 2
    assert f"{folder / SHARD}: row 7, column 'f_measure': {shown} is not a score" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("problems, said", [
    # (row index, column, value) edits of one shard -> the error said: the first problem in
    # the file's row order, and in a row its names (system, doc_id, metric), then its score,
    # then a repeated key, as reading it row by row said (the shard is read as columns)
    ([(8, "f_measure", math.nan), (5, "doc_id", "d\x07")], "row 6, column 'doc_id': holds a control character (\\x07)"),
    ([(5, "f_measure", -1.0), (5, "system", "")], "row 6, column 'system': empty or null"),
    ([(5, "f_measure", None), (9, "metric", None)], "row 6, column 'f_measure': None is not a score"),
    ([(3, "doc_id", "SAME"), ("the next row of row 3's metric", "doc_id", "SAME"), (12, "f_measure", 2e6)],
     "row {again}: (good, {metric}, SAME) appears twice"),
])
def test_the_first_problem_of_a_shard_in_row_order_is_said(base, tmp_path, capsys, problems, said):
    metrics = pq.read_table(base / "new" / SHARD).column("metric").to_pylist()
    again = metrics.index(metrics[3], 4)  # (rows cycle through the metrics: the next row of the same one)
    said = said.format(again=again + 1, metric=metrics[3])

    def change(table):
        for row, column, value in problems:
            table = set_cell(table, column, again if isinstance(row, str) else row, value)
        return table

    folder = edited(base, tmp_path, change)
    code, err = compare(base, folder, capsys=capsys)
    assert code == 2 and f"{folder / SHARD}: {said}" in err, err


def test_a_document_of_a_system_in_two_files_is_said_where_it_comes_again(base, tmp_path, capsys):
    folder = tmp_path / "split"
    shutil.copytree(base / "new", folder)
    table = pq.read_table(folder / SHARD)
    good = table.filter(pa.compute.equal(table.column("system"), "good"))
    second = SHARD.replace("-00000-of-00001", "-00001-of-00001")
    pq.write_table(good.slice(2, 3), folder / second)  # (rows 3-5 of the first file, again)
    seal(folder)
    code, err = compare(base, folder, capsys=capsys)
    first = good.slice(2, 1).to_pylist()[0]
    assert code == 2, err
    assert f"{folder / second}: row 1: (good, {first['metric']}, {first['doc_id']}) appears twice" in err, err


def test_strings_where_scores_belong_a_missing_column_and_a_truncated_file(base, tmp_path, capsys):
    as_text = edited(base, tmp_path, lambda t: t.set_column(
        t.column_names.index("f_measure"), pa.field("f_measure", pa.string()),
        pa.array([str(v) for v in t.column("f_measure").to_pylist()])))
    code, err = compare(base, as_text, capsys=capsys)
    assert code == 2 and "column 'f_measure' must hold numbers; it holds string" in err
    shutil.rmtree(as_text)

    missing = edited(base, tmp_path, lambda t: t.drop(["doc_id"]))
    code, err = compare(base, missing, capsys=capsys)
    assert code == 2 and f"{missing / SHARD}: not a per-document table: no column 'doc_id'" in err
    shutil.rmtree(missing)

    truncated = edited(base, tmp_path, lambda t: t)
    data = (truncated / SHARD).read_bytes()
    (truncated / SHARD).write_bytes(data[: len(data) // 2])
    seal(truncated)
    code, err = compare(base, truncated, capsys=capsys)
    assert code == 2 and f"{truncated / SHARD}: not a per-document table: cannot read it" in err


@pytest.mark.parametrize("profiles", [5, [5], [{"name": 5}], "default"])
def test_a_sealed_run_record_whose_profiles_are_not_named_profiles_is_refused(base, tmp_path, capsys, profiles):
    """compare ordered the metrics by run.json's profiles and failed on a resealed one
    of another shape ("TypeError: 'int' object is not iterable"): exit 2 naming run.json."""
    import json

    folder = tmp_path / "hostile"
    shutil.copytree(base / "new", folder)
    record = json.loads((folder / "run.json").read_text())
    seal_record(folder, dict(record, profiles=profiles))
    code, err = compare(base, folder, capsys=capsys)
    assert code == 2 and f"{folder / 'run.json'}: its profiles are not a list of named profiles" in err, err
    assert len(err.strip().splitlines()) == 1 and "TypeError" not in err


def test_a_system_of_the_table_without_per_document_rows_is_refused_not_called_removed(base, tmp_path, capsys):
    """A resealed folder whose per-document rows of a system are gone while its
    system_scores rows stay: compare called the system "removed (old run only)"
    from a run that has it in its table."""
    emptied = edited(base, tmp_path, lambda t: t.slice(0, 0))
    code, err = compare(base, emptied, capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{emptied / 'system_scores.parquet'}: (good, ROUGE-1) has no row in the per-document table" in err, err


def test_names_that_print_alike_or_hold_control_characters_are_refused(base, tmp_path, capsys):
    def invisible(table):
        first = table.column("system").to_pylist().index("good")
        return set_cell(table, "system", first, "good\u200b")  # one document's row, spelled differently

    folder = edited(base, tmp_path, invisible)
    code, err = compare(base, folder, capsys=capsys)
    assert code == 2
    assert "systems that print alike but differ" in err and "'good' and 'good\\u200b'" in err
    shutil.rmtree(folder)

    def doc_renamed(table):  # doc-03 spelled with a byte-order mark in the new run: never paired
        return table.set_column(table.column_names.index("doc_id"), "doc_id",
                                pa.array([d.replace("doc-03", "doc-03\ufeff") for d in table.column("doc_id").to_pylist()]))

    folder = edited(base, tmp_path, doc_renamed)
    code, err = compare(base, folder, capsys=capsys)
    assert code == 2
    assert "doc_ids that print alike but differ" in err and "'doc-03' and 'doc-03\\ufeff'" in err
    shutil.rmtree(folder)

    folder = edited(base, tmp_path, lambda t: set_cell(t, "system", 0, "evil\x1b[2J"))
    code, err = compare(base, folder, capsys=capsys)
    assert code == 2 and "row 1, column 'system': holds a control character (\\x1b)" in err
    assert "\x1b" not in err


@pytest.mark.parametrize(
    "option, value, stated",
    [
        ("--fail-on-drop", "nan", "--fail-on-drop must be a number of points from 0 to 100"),
        ("--fail-on-drop", "inf", "--fail-on-drop must be a number of points from 0 to 100"),
        ("--fail-on-drop", "-1", "--fail-on-drop must be a number of points from 0 to 100"),
        ("--confidence", "nan", "--confidence must be a number between 0 and 100"),
        ("--confidence", "100", "--confidence must be a number between 0 and 100"),
    ],
)
def test_every_numeric_option_is_range_checked(base, capsys, option, value, stated):
    code, err = compare(base, base / "new", option, value, capsys=capsys)
    assert code == 2 and stated in err, err


def cli(*args, timeout=60, python_args=False):
    """`rouge-pipeline ARGS` in a subprocess (`python_args`: `python ARGS`)."""
    import os
    import subprocess
    import sys

    command = [sys.executable, *map(str, args)] if python_args else [sys.executable, "-m", "pipeline", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})


@pytest.mark.parametrize("what", ["shard is a pipe", "run.json is a pipe", "run.json is /dev/zero"])
def test_a_pipe_or_a_device_in_a_result_folder_is_refused_not_waited_on(base, tmp_path, what):
    """compare and meta-eval waited for ever on a pipe (and meta-eval read /dev/zero
    until the kernel killed it): exit 2 naming the file, at once."""
    import json
    import os

    folder = tmp_path / "hostile"
    shutil.copytree(base / "new", folder)
    name = SHARD if what.startswith("shard") else "run.json"
    os.remove(folder / name)
    if what.endswith("pipe"):
        os.mkfifo(folder / name)
    else:
        os.symlink("/dev/zero", folder / name)
    kind = "a pipe (a FIFO" if what.endswith("pipe") else "a character device"
    judgments = tmp_path / "judgments.jsonl"
    pairs = sorted({(r["system"], r["doc_id"]) for r in pq.read_table(base / "new" / SHARD).to_pylist()})
    judgments.write_text("".join(json.dumps({"system": s, "doc_id": d, "quality": i % 5}) + "\n"
                                 for i, (s, d) in enumerate(pairs)))
    for command in (["compare", base / "old", folder], ["meta-eval", "--run", folder, "--judgments", judgments]):
        done = cli(*command)
        assert done.returncode == 2, (command, done.stderr)
        assert f"{folder / name}" in done.stderr and kind in done.stderr and "not a regular file" in done.stderr
        assert "Traceback" not in done.stderr


def test_the_moved_documents_texts_come_only_from_inputs_that_still_hold_the_scored_bytes(base, tmp_path):
    """run.json is untrusted and inputs change: a run.json naming a pipe or /dev/zero as
    its input is compared without waiting on it, and an input changed since its run
    shows no text (it showed the new text as if it had been scored)."""
    import hashlib
    import json
    import os

    def texts_shown(new_folder):
        out = tmp_path / f"report-{len(list(tmp_path.iterdir()))}"
        done = cli("compare", base / "old", new_folder, "--output", out)
        assert done.returncode == 1, done.stderr  # the real drop in the corpus
        return "WORDS-CHANGED-AFTER" in (out / "report.html").read_text(), (out / "report.html").read_text()

    data = tmp_path / "new.jsonl"
    shutil.copy(base / "new.jsonl", data)
    folder = tmp_path / "moved"
    shutil.copytree(base / "new", folder)
    record = json.loads((folder / "run.json").read_text())
    [entry] = record["inputs"]["candidates"]
    entry["path"] = str(data)
    seal_record(folder, record)
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    data.write_text("".join(json.dumps(dict(r, candidate="WORDS-CHANGED-AFTER " + r["candidate"])) + "\n"
                            for r in rows))
    scored = entry["sha256"]
    # as if these bytes had been scored (their SHA-256 in run.json): their texts are shown
    entry["sha256"] = hashlib.sha256(data.read_bytes()).hexdigest()
    seal_record(folder, record)
    changed, page = texts_shown(folder)
    assert changed, page
    # the bytes that were scored are not these: no text from the file
    entry["sha256"] = scored
    seal_record(folder, record)
    changed, _ = texts_shown(folder)
    assert not changed
    for hostile in ("pipe", "/dev/zero"):
        target = tmp_path / "input-pipe"
        if hostile == "pipe":
            os.mkfifo(target)
        entry["path"] = str(target) if hostile == "pipe" else hostile
        seal_record(folder, record)
        changed, _ = texts_shown(folder)
        assert not changed


def test_a_shard_whose_page_decodes_to_gigabytes_is_refused_unread(base, tmp_path):
    """A 30 KB per-document shard whose doc_id dictionary decodes to 360 MB (Arrow took
    over 1.5 GB to read it): compare and meta-eval refuse it from its page headers,
    naming shard and column, in bounded memory."""
    import json
    import sys

    folder = tmp_path / "bomb"
    shutil.copytree(base / "new", folder)
    table = pq.read_table(folder / SHARD)
    rows = table.num_rows
    texts = pa.array(["y" * 899_994 + f"{i:06d}" for i in range(400)])
    bomb = pa.DictionaryArray.from_arrays(pa.array([i % 400 for i in range(rows)], pa.int32()), texts)
    pq.write_table(table.set_column(table.column_names.index("doc_id"), "doc_id", bomb), folder / SHARD,
                   compression="zstd", dictionary_pagesize_limit=1 << 31)
    seal(folder)
    assert (folder / SHARD).stat().st_size < 100_000
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text(json.dumps({"system": "good", "doc_id": "doc-00", "quality": 1}) + "\n")
    del table, texts, bomb
    # The command runs under a small wrapper that reports its child's peak resident
    # memory (ru_maxrss of a child forked from this large test process would count
    # this process's pages).
    wrapper = ("import json, resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, "
               "text=True); print(json.dumps([done.returncode, done.stderr, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024]))")
    for command in (["compare", base / "old", folder], ["meta-eval", "--run", folder, "--judgments", judgments]):
        status, err, peak_mb = json.loads(cli("-c", wrapper, sys.executable, "-m", "pipeline", *command,
                                              python_args=True).stdout)
        print(f"{command[0]}: peak {peak_mb} MB")
        assert status == 2, (command, err)
        assert f"{folder / SHARD}" in err and "column 'doc_id'" in err and "360001" in err, err
        assert peak_mb < 400
