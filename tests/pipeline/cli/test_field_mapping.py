"""Common layouts without a TOML file (issue 32): --fields maps the input's columns,
--integer-ids reads integer ids as their digits (and only then: never coerced), a
row's one reference is read from the reference column, and a file whose columns
are named otherwise gets one line saying what it holds and how to map it.

The numbers come from the official ROUGE-1.5.5 script on the same documents in
the project's own layout."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, read_jsonl
from tests.oracle import run_rouge155
from tests.test_differential import rouge155_home  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[3]
FLAGS = "-n 2 -m -r 100 -a"
FIELDS = "system=model,doc_id=id,candidate=prediction,reference=reference"


def cli(*args, cwd=ROOT, stdin=None):
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, input=stdin)


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def documents():
    """Two systems of the golden cases, each document's first reference, numbered
    1..N (integers) in doc_id order: (the model/id/prediction/reference rows, the
    same documents as the project's rows with doc_ids "1".."N")."""
    cases = [c for c in read_jsonl(GOLDEN / "cases.jsonl") if c["system"] in ("11", "12")]
    number = {d: i for i, d in enumerate(sorted({c["doc_id"] for c in cases}), 1)}
    layout = [{"model": f"m{c['system']}", "id": number[c["doc_id"]], "prediction": c["candidate"],
               "reference": c["references"][0]} for c in cases]
    ours = [{"system": f"m{c['system']}", "doc_id": str(number[c["doc_id"]]), "candidate": c["candidate"],
             "references": [c["references"][0]]} for c in cases]
    return layout, ours


def test_score_reads_the_model_id_prediction_reference_layout_as_the_official_script_scores_it(
        tmp_path, documents, rouge155_home):  # noqa: F811
    layout, ours = documents
    data = write_jsonl(tmp_path / "layout.jsonl", layout)
    done = cli("score", data, "--fields", FIELDS, "--integer-ids", "doc_id", "--rouge-args", FLAGS,
               "--format", "report", "--quiet")
    assert done.returncode == 0, done.stderr
    returncode, expected, _ = run_rouge155(ours, FLAGS, rouge155_home)
    assert returncode == 0 and done.stdout == expected


def test_run_reads_the_layout_from_parquet_with_integer_ids_as_from_the_projects_rows(tmp_path, documents):
    import pyarrow as pa
    import pyarrow.parquet as pq

    layout, ours = documents
    pq.write_table(pa.Table.from_pylist(layout), tmp_path / "layout.parquet")
    assert pa.types.is_integer(pq.read_schema(tmp_path / "layout.parquet").field("id").type)
    mapped = cli("run", "--input", tmp_path / "layout.parquet", "--fields", FIELDS, "--integer-ids", "doc_id",
                 "--rouge-args", FLAGS, "--output", tmp_path / "mapped", "--quiet")
    assert mapped.returncode == 0, mapped.stderr
    plain = cli("run", "--input", write_jsonl(tmp_path / "ours.jsonl", ours), "--rouge-args", FLAGS,
                "--output", tmp_path / "plain", "--quiet")
    assert plain.returncode == 0, plain.stderr
    for name in ("system_scores.csv", "rouge155.txt", "significance.csv"):
        assert (tmp_path / "mapped" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name


@pytest.mark.parametrize("command", ["score", "run"])
def test_a_file_with_other_column_names_is_explained_once_with_a_mapping_that_works(tmp_path, documents, command):
    layout, _ = documents
    files = [write_jsonl(tmp_path / "a.jsonl", layout[:30]), write_jsonl(tmp_path / "b.jsonl", layout[30:])]
    args = (["score", *files, "--format", "csv"] if command == "score"
            else ["run", "--input", *files, "--output", tmp_path / "out"])
    done = cli(*args, "--rouge-args", FLAGS, "--quiet")
    assert done.returncode == 1 and not (tmp_path / "out").exists()
    for path in files:
        assert done.stderr.count(f"{path}:1 (and") == 1, done.stderr  # the file's rows, one line
        hint = [line for line in done.stderr.splitlines() if line.strip().startswith(f"{path}: its rows hold")]
        assert len(hint) == 1, done.stderr
        assert "model, id, prediction, reference; expected system, doc_id, candidate" in hint[0]
    assert done.stderr.count("missing field 'system'") == 2
    suggested = re.search(r"read it with (--fields \S+(?: --integer-ids \S+)?)", done.stderr).group(1)
    assert suggested == "--fields system=model,doc_id=id,candidate=prediction --integer-ids doc_id"
    again = cli(*args, *shlex.split(suggested), "--rouge-args", FLAGS, "--quiet")
    assert again.returncode == 0, again.stderr


def test_integer_ids_are_read_only_when_asked_and_then_only_integers(tmp_path):
    """1 and "1" never name one document: with --integer-ids the text is an error
    row, without it the integer; 1.0, true and an integer past 4000 digits are
    never read as ids."""
    row = {"system": "s", "candidate": "the cat sat", "references": ["the cat sat down"]}
    rows = [dict(row, doc_id=1), dict(row, doc_id="1", system="t"), dict(row, doc_id=2.0), dict(row, doc_id=True),
            dict(row, doc_id=-3)]
    data = tmp_path / "ids.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"system": "s", "doc_id": 1' + "0" * 4500
                    + ', "candidate": "a", "references": ["a"]}\n')

    def scored(*args):
        done = cli("score", data, "--rouge-args", "-n 1 -r 10", "--format", "jsonl", "--max-rejected", "1", *args)
        assert done.returncode == 0, done.stderr
        return sorted({(r["system"], r["doc_id"]) for r in map(json.loads, done.stdout.splitlines())}), done.stderr

    as_text, errors = scored()
    assert as_text == [("t", "1")]
    assert errors.count("got int (integers: --integer-ids doc_id, input.integer_ids)") == 1
    as_integers, errors = scored("--integer-ids", "doc_id")
    assert as_integers == [("s", "-3"), ("s", "1")]
    for kind in ("str", "float", "bool", "an integer of over 4000 digits"):
        assert f"field 'doc_id' must be an integer (input.integer_ids, --integer-ids doc_id); got {kind}" in errors


def test_split_form_references_with_integer_ids_join_the_candidates(tmp_path):
    cands = write_jsonl(tmp_path / "c.jsonl", [{"system": "s", "doc_id": i, "candidate": f"w{i} x y"} for i in (1, 2)])
    refs = write_jsonl(tmp_path / "r.jsonl", [{"doc_id": i, "reference": f"w{i} x"} for i in (1, 2)])
    done = cli("score", cands, "--references", refs, "--integer-ids", "doc_id", "--rouge-args", "-n 1 -r 10",
               "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    f = {r["doc_id"]: r["f_measure"] for r in map(json.loads, done.stdout.splitlines())}
    assert f == {"1": 0.8, "2": 0.8}  # 2 of 3 candidate words, 2 of 2 reference words: F = 2PR/(P+R) = 0.8


def test_one_reference_a_row_in_the_joined_form_and_a_string_where_a_list_belongs(tmp_path):
    """A row's `reference` (a text) is its one reference, as in the split form; a
    string in `references` (a list of references) is refused naming the option,
    not taken for one reference: a list there means several."""
    base = {"system": "s", "doc_id": "d", "candidate": "the cat sat"}
    one = write_jsonl(tmp_path / "one.jsonl", [dict(base, reference="the cat sat down")])
    listed = write_jsonl(tmp_path / "list.jsonl", [dict(base, references=["the cat sat down"])])
    string = write_jsonl(tmp_path / "string.jsonl", [dict(base, references="the cat sat down")])
    outputs = [cli("score", path, "--rouge-args", "-n 1 -r 10", "-b") for path in (one, listed)]
    # ROUGE-1 and ROUGE-L: 3 of 3 candidate words, 3 of 4 reference words, F = 6/7
    assert [o.returncode for o in outputs] == [0, 0] and outputs[0].stdout == outputs[1].stdout == "85.71\t85.71\n"
    refused = cli("score", string, "--rouge-args", "-n 1 -r 10", "-b")
    assert refused.returncode == 1
    assert ("field 'references' must be a non-empty list of texts; got str (one text a row: "
            "--fields reference=references, input.reference_field)") in refused.stderr
    mapped = cli("score", string, "--fields", "reference=references", "--rouge-args", "-n 1 -r 10", "-b")
    assert mapped.returncode == 0 and mapped.stdout == "85.71\t85.71\n", mapped.stderr
