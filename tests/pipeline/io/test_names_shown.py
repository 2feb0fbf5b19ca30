"""Names are shown safely (issue 22): a control character in a file, system or column
name never reaches the terminal or a CSV raw; it is written as a visible escape."""

import json
import os
import subprocess
import sys

from pipeline.io.names import clashes, seen_as, shown
from pipeline.io.tables import csv_text

EVIL = "in\x1b[2J\nforged line\r\x07.jsonl"


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()})


def raw_controls(text: str) -> list[str]:
    return sorted({ch for ch in text if (ord(ch) < 32 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F})


def test_csv_cells_escape_control_characters():
    text = csv_text([{"system": "a\x1b[31mred\nrow", "recall": 0.5}], ["system", "recall"])
    assert text == "system,recall\na\\x1b[31mred\\nrow,0.500000\n"


def test_file_names_with_control_characters_reach_the_terminal_escaped(tmp_path):
    (tmp_path / EVIL).write_text(json.dumps({"system": "s", "doc_id": "d"}) + "\n")
    scored = cli("score", EVIL, "--rouge-args", "-n 1", cwd=tmp_path)
    assert scored.returncode == 1
    assert "in\\x1b[2J\\nforged line\\r\\x07.jsonl:1: missing_field" in scored.stderr
    assert raw_controls(scored.stderr) == [] and "\nforged line" not in scored.stderr

    listed = cli("run", "--input", EVIL, "--output", "out", "--dry-run", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "candidate: in\\x1b[2J\\nforged line\\r\\x07.jsonl" in listed.stdout
    assert raw_controls(listed.stdout) == []

    missing = cli("run", "--input", "nothing\x1b[2J*.jsonl", "--output", "out", "--dry-run", cwd=tmp_path)
    assert missing.returncode == 2 and "nothing\\x1b[2J*.jsonl" in missing.stderr
    assert raw_controls(missing.stderr) == []


def test_names_are_compared_as_people_see_them():
    assert seen_as("M1\u200b") == seen_as("M1") == seen_as("\uff2d\uff11") == seen_as(" M1 ")
    assert seen_as("hu\u00adman") == "human" and seen_as("a\ufe0fb") == "ab"
    assert clashes(["M1", "M1\u200b", "M2"]) == [["M1", "M1\u200b"]]
    assert clashes(["M1", "m1"]) == []  # case is seen
    assert shown("a\tb\x1b") == "a\\tb\\x1b"


def test_doc_ids_that_print_alike_within_a_system_are_refused_with_both_spellings(tmp_path):
    """Within one system, 'd1' and 'd1\\u200b' would publish two documents that look like
    one: both rows are duplicate_key errors naming both spellings, in `score` and `run`.
    Another system's own look-alike id ('\\uff441', full-width) is its only spelling:
    scored.  Hand count: 6 rows, 2 refused, 4 scored."""
    rows = [("s", "d1"), ("s", "d1\u200b"), ("s", "d2"), ("t", "d1"), ("t", "d2"), ("u", "\uff441")]
    with open(tmp_path / "in.jsonl", "w") as fh:
        for system, doc_id in rows:
            fh.write(json.dumps({"system": system, "doc_id": doc_id, "candidate": "a b c",
                                 "references": ["a b d"]}) + "\n")
    message = ("system 's' has doc_ids that print alike but differ (invisible characters or Unicode forms): "
               "'d1' and 'd1\\u200b'; this row is ")
    scored = cli("score", "in.jsonl", "--rouge-args", "-n 1", "--max-rejected", "1", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert "rows read 6, scored 4, errors 2\n  duplicate_key: 2\n" in scored.stderr
    assert f"in.jsonl:1: duplicate_key: {message}'d1'" in scored.stderr
    assert f"in.jsonl:2: duplicate_key: {message}'d1\\u200b'" in scored.stderr

    done = cli("run", "--input", "in.jsonl", "--output", "out", "--rouge-args", "-n 1", "--max-rejected", "1",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert (record["counts"]["scored"], record["counts"]["errors_by_reason"]) == (4, {"duplicate_key": 2})
    errors = [json.loads(line) for f in sorted((tmp_path / "out" / "errors").glob("*.jsonl"))
              for line in f.read_text().splitlines()]
    assert sorted((e["doc_id"], e["position"], e["message"]) for e in errors) == [
        ("d1", 1, message + "'d1'"), ("d1\u200b", 2, message + "'d1\\u200b'")]
