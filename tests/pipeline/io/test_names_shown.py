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
