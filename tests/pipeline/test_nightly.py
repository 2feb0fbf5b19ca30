"""The nightly workflow end to end, as cron or Airflow runs it: configs/nightly.toml
every night into a dated folder, then `compare` against the previous night, whose
exit status the scheduler acts on (README, "The nightly workflow")."""

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import write_jsonl

NIGHTLY = GOLDEN.parents[2] / "configs" / "nightly.toml"
CASES = read_jsonl(GOLDEN / "cases.jsonl")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True)


def night(tmp_path, name, rows):
    data = write_jsonl(tmp_path / "bucket" / name / "part-0.jsonl", rows)
    done = cli("run", "--config", NIGHTLY, "--input", data.parent / "*.jsonl", "--output", tmp_path / "results" / name)
    assert done.returncode == 0, done.stderr
    return tmp_path / "results" / name


def test_the_nightly_run_and_compare_give_the_scheduler_its_exit_status(tmp_path):
    systems = ("12", "24")
    first = night(tmp_path, "2026-11-22", [c for c in CASES if c["system"] in systems])
    # The next night, system 12's checkpoint regressed: its outputs are system 21's.
    regressed = [dict(c, system="12") for c in CASES if c["system"] == "21"]
    second = night(tmp_path, "2026-11-23", [c for c in CASES if c["system"] == "24"] + regressed)
    assert json.loads((second / "run.json").read_text())["signature"] == json.loads(
        (first / "run.json").read_text()
    )["signature"]

    same = cli("compare", first, first)
    assert same.returncode == 0, same.stdout + same.stderr

    dropped = cli("compare", first, second, "--fail-on-drop", "1", "--output", tmp_path / "compare")
    assert dropped.returncode == 1, dropped.stdout + dropped.stderr
    assert (tmp_path / "compare" / "comparison.md").exists()
    page = (tmp_path / "compare" / "report.html").read_text()  # the comparison's page, the verdict first
    assert page.index("FAIL: significant drop") < page.index("<h2 id=\"changes\">") < page.index("<h2 id=\"documents\">")
    rows = (tmp_path / "compare" / "comparison.csv").read_text()
    assert "12,ROUGE-1" in rows

    tolerant = cli("compare", first, second, "--fail-on-drop", "50")
    assert tolerant.returncode == 0

    # Another night with other settings: not comparable (3), and compare says what differs.
    other = tmp_path / "results" / "other"
    done = cli("run", "--config", NIGHTLY, "--input", first.parent.parent / "bucket" / "2026-11-22" / "*.jsonl",
               "--output", other, "--rouge-args", "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a")
    assert done.returncode == 0, done.stderr
    changed = cli("compare", first, other)
    assert changed.returncode == 3 and "stem" in changed.stdout + changed.stderr

    # The nightly config replaces its own previous folder in place (overwrite = true).
    latest = tmp_path / "results" / "latest"
    for _ in range(2):
        done = cli("run", "--config", NIGHTLY, "--input", first.parent.parent / "bucket" / "2026-11-23" / "*.jsonl",
                   "--output", latest)
        assert done.returncode == 0, done.stderr


def test_the_airflow_dags_nights_reuse_compare_and_keep_a_history(tmp_path):
    """configs/nightly_dag.py's commands (Airflow is not needed to build them), run as
    its tasks run them, two nights: the first reuses nothing (no night before), the
    second reuses the first; compare and history read both."""
    import importlib.util
    import shlex

    spec = importlib.util.spec_from_file_location("nightly_dag", NIGHTLY.parent / "nightly_dag.py")
    dag = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dag)
    results, inputs = tmp_path / "results", str(tmp_path / "bucket" / "{date}" / "*.jsonl")
    rows = {"2026-11-22": [c for c in CASES if c["system"] in ("12", "24")],
            "2026-11-23": [c for c in CASES if c["system"] == "24"] + [dict(c, system="12") for c in CASES if c["system"] == "21"]}
    previous = "2026-11-21"
    for date, night_rows in rows.items():
        write_jsonl(tmp_path / "bucket" / date / "part-0.jsonl", night_rows)
        commands = dag.nightly_commands(date, previous, str(results), inputs, str(NIGHTLY))
        for task in ("run", "compare", "history"):
            done = subprocess.run(commands[task], shell=True, capture_output=True, text=True,
                                  env={**__import__("os").environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})
            if task == "compare" and date == "2026-11-22":
                assert done.returncode == 2  # no night before to compare with
                continue
            assert done.returncode in ((0, 1) if task == "compare" else (0,)), (task, done.stderr)
            assert shlex.split(commands[task])[1] == task
        previous = date
    second = json.loads((results / "2026-11-23" / "run.json").read_text())
    assert second["reuse"]["run_id"] == json.loads((results / "2026-11-22" / "run.json").read_text())["run_id"]
    assert second["reuse"]["rows_reused"] == 25  # system 24's rows: the same texts, in a file that changed
    assert "no such result folder" in json.loads((results / "2026-11-22" / "run.json").read_text())["reuse"]["refused"]
    history = (results / "history" / "2026-11-23" / "history.csv").read_text().splitlines()
    metrics = len(second["profiles"][0]["metrics"])  # ROUGE-1..4, L, W-1.2, S*, SU*
    assert len(history) == 1 + 2 * 2 * metrics == 1 + 2 * 2 * 8
