"""Usage errors of every command (run, score, compare, meta-eval): exit 2, nothing
on stdout, one line on stderr that says what is wrong (issue 32).  Every option
with choices is tried with a typo, generated from the parsers themselves, so an
option added later is covered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[3]
CASES = ROOT / "tests" / "golden" / "rouge155" / "cases.jsonl"


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def refused(done: subprocess.CompletedProcess) -> str:
    """The one line of a usage error (asserting exit 2 and an empty stdout)."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "usage:" not in lines[0] and "Traceback" not in lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A text candidate and reference, a result folder of a run, a judgments file."""
    root = tmp_path_factory.mktemp("usage")
    (root / "c.txt").write_text("the cat sat on the mat\n")
    (root / "r.txt").write_text("the cat was on the mat\n")
    done = cli("run", "--input", CASES, "--rouge-args", "-n 1 -r 10", "--output", root / "run", "--quiet")
    assert done.returncode == 0, done.stderr
    (root / "judged.jsonl").write_text(json.dumps({"system": "11", "doc_id": "D30001.M.100.T.A", "x": 1}) + "\n")
    (root / "latin1.toml").write_bytes(b'[rouge]\nargs = "-n 1 \xe9"\n')
    (root / "deep.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")  # (a RecursionError in tomllib)
    (root / "huge.toml").write_text("#" * (5 << 20))
    return root


def _base_args(command: str, f: Path) -> list:
    """Arguments under which `command` would work, a bad value aside."""
    return {
        "score": [f / "c.txt", f / "r.txt"],
        "run": ["--input", CASES, "--output", f / "new-run", "--dry-run"],
        "compare": [f / "run", f / "run"],
        "meta-eval": ["--run", f / "run", "--judgments", f / "judged.jsonl"],
    }[command]


def _choice_options():
    for command in COMMANDS:
        _, sub = build_parser(command)
        for action in sub._actions:  # noqa: SLF001
            if action.choices and action.option_strings:
                yield command, action.option_strings[-1], [str(c) for c in action.choices]


@pytest.mark.parametrize(("command", "option", "choices"), list(_choice_options()))
def test_a_bad_choice_is_one_line_naming_the_valid_ones_and_the_closest(folders, command, option, choices):
    typo = choices[0][:-1] + "x"
    line = refused(cli(command, *_base_args(command, folders), option, typo))
    assert f"rouge-pipeline {command}: error: argument {option}: '{typo}' is not one of {', '.join(choices)}" in line
    assert f"did you mean {choices[0]}?" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "rouge-pipeline: error: the following arguments are required: COMMAND"),
        (["scroe"], "'scroe' is not one of score, run, compare, meta-eval, history; did you mean score?"),
        (["score", "{f}/missing.txt", "{f}/r.txt"], "{f}/missing.txt: no such file"),
        (["score", "{f}/c.txt", "{f}/missing.txt"], "{f}/missing.txt: no such file"),
        (["score", "--candidates", "{f}/nope.txt", "--references", "{f}/r.txt"], "{f}/nope.txt: no such file"),
        (["score", "{f}/c.txt", "{f}/r.txt", "-c", "95", "-r", "1000", "-n", "2", "-m"],
         "-c 95 -r 1000 -n 2 -m: ROUGE-1.5.5's flags go in one option: --rouge-args '-c 95 -r 1000 -n 2 -m'"),
        (["score", "{f}/c.txt", "{f}/r.txt", "-2", "-1", "-U"], "--rouge-args '-2 -1 -U'"),
        (["score", "-n", "2", "{f}/c.txt", "{f}/r.txt"], "--rouge-args '-n 2'"),
        (["run", "--input", str(CASES), "-n", "2", "-m"], "--rouge-args '-n 2 -m'"),
        (["score", "{f}/c.txt", "{f}/r.txt", "--fields", "sys=model"], "'sys' is not one of the keys"),
        (["score", "{f}/c.txt", "{f}/r.txt", "--fields", "system=model"], "--fields names the columns of JSONL"),
        (["score", "{f}/c.txt", "{f}/r.txt", "--integer-ids", "id"], "'id' is not one of system, doc_id"),
        (["run", "--input", str(CASES), "--output", "{f}/o", "--dry-run", "--fields", "doc_id=system"],
         "input.doc_id_field must be a column of its own, not also input.system_field (one column cannot be read in "
         "two roles); got 'system' (from the command line)"),
        (["score", "{f}/c.txt", "{f}/r.txt", "--strcit"], "did you mean --strict?"),
        (["run", "--input", "{f}/nothing-*.jsonl", "--output", "{f}/o"], "no file matches"),
        (["run", "--input", str(CASES), "--output", "{f}/run"], "already exists"),
        (["run", "--input", str(CASES), "--output", "{f}/o", "--ouput", "x"], "did you mean --output?"),
        (["compare", "{f}/run"], "the following arguments are required: NEW_RUN"),
        (["compare", "{f}/run", "{f}/nothere"], "no such result folder"),
        (["run", "--config", "/dev/zero", "--input", str(CASES), "--output", "{f}/o"],
         "config file /dev/zero cannot be read (/dev/zero is a character device"),
        (["run", "--config", "{f}", "--input", str(CASES), "--output", "{f}/o"], "config file {f} cannot be read (Is a directory)"),
        (["run", "--config", "{f}/latin1.toml", "--input", str(CASES), "--output", "{f}/o"], "is not valid TOML: not UTF-8"),
        (["run", "--config", "{f}/deep.toml", "--input", str(CASES), "--output", "{f}/o"], "nested too deeply"),
        (["run", "--config", "{f}/huge.toml", "--input", str(CASES), "--output", "{f}/o"], "over 4 MB; not a run configuration"),
        (["compare", "{f}/run", "{f}/c.txt"], "{f}/c.txt: not a folder, so not a result folder"),
        (["compare", "{f}/run", "{f}/run", "--output", "{f}/c.txt"], "output folder {f}/c.txt exists and is not a folder"),
        (["history", "{f}/run", "--output", "{f}/c.txt"], "output folder {f}/c.txt exists and is not a folder"),
        (["history", "{f}/run", "--output", "{f}/run"], "output folder {f}/run exists and is not empty"),
        (["meta-eval", "--run", "{f}/run", "--judgments", "{f}/judged.jsonl", "--output", "{f}/c.txt"],
         "output folder {f}/c.txt exists and is not a folder"),
        (["compare", "{f}/run", "{f}/run", "--confidence", "100"], "--confidence must be"),
        (["meta-eval", "--run", "{f}/run"], "the following arguments are required: --judgments"),
        (["meta-eval", "--run", "{f}/run", "--judgments", "{f}/judged.jsonl", "--replicates", "-1"],
         "--replicates must be"),
    ],
)
def test_usage_errors_print_one_line_and_nothing_on_stdout(folders, args, message):
    line = refused(cli(*[a.format(f=folders) for a in args]))
    assert message.format(f=folders) in line


def test_quiet_is_quiet_and_the_runner_line_recommends_no_mode_the_help_warns_about(folders):
    loud = cli("run", "--input", CASES, "--rouge-args", "-n 1 -r 10", "--output", folders / "loud")
    assert loud.returncode == 0, loud.stderr
    runner_line = next(line for line in loud.stderr.splitlines() if "runner:" in line)
    help_text = cli("run", "--help").stdout
    assert "--direct_running_mode=multi_processing" in help_text and "lost" in help_text  # (the warning)
    assert "multi_processing" not in runner_line, runner_line
    quiet = cli("run", "--input", CASES, "--rouge-args", "-n 1 -r 10", "--output", folders / "quiet", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.count("signature:") == 1


def test_a_refused_run_prints_no_signature_on_stdout(folders):
    """The signature of a run that never started is not a result: it was printed
    before the inputs and output were checked."""
    done = cli("run", "--input", folders / "none-*.jsonl", "--output", folders / "o2")
    refused(done)
    dry = cli("run", "--input", CASES, "--output", folders / "o3", "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("signature: rouge155|"), dry.stdout
