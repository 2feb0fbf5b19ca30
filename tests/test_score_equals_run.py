"""`score` (in this process, no Beam) and `run` (the Beam pipeline) print and write
the same per-system table for the same inputs and settings: the same columns and
the same digits, because both go through rouge_core.aggregate.SystemSums and
pipeline.summaries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "pipeline" / "sample" / "duc2003-00-of-04.jsonl"


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], cwd=cwd, capture_output=True, text=True)


def _table(text: str) -> str:
    """The printed table and its legend: from the header row to the formula line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["#", "system"])
    end = next(i for i, line in enumerate(lines) if line.startswith("R = matches"))
    return "\n".join(lines[start : end + 1])


@pytest.mark.parametrize(
    "rouge",
    [
        ["--rouge-args", "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"],
        ["--preset", "rouge_score", "--rouge-types", "rouge1,rouge2,rougeLsum", "--stem"],
    ],
    ids=["rouge155", "rouge_score"],
)
def test_score_and_run_write_and_print_the_same_table(tmp_path, rouge):
    run = _cli("run", "--input", SAMPLE, "--output", tmp_path / "out", *rouge)
    assert run.returncode == 0, run.stderr
    csv = _cli("score", SAMPLE, "--format", "csv", "--quiet", *rouge)
    assert csv.returncode == 0, csv.stderr
    assert csv.stdout == (tmp_path / "out" / "system_scores.csv").read_text()
    table = _cli("score", SAMPLE, "--format", "table", "--quiet", *rouge)
    assert table.returncode == 0, table.stderr
    assert _table(table.stdout) == _table(run.stdout)
