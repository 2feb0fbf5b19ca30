"""One spelling of every option value across the command line, configs and docs
(issue 32): an option that sets a config key takes exactly the key's choices; an
old spelling is read as the choice it meant, with a one-line note; the docs list
the same values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import COMMANDS, build_parser
from pipeline.cli.common import CONFIG_OPTIONS
from pipeline.config import declarations, declared_key

ROOT = Path(__file__).resolve().parents[3]

# Options with choices that set no config key (their values exist only on the command line).
COMMAND_LINE_ONLY = {("score", "--format"), ("meta-eval", "--resample"), ("meta-eval", "--undefined"),
                     ("meta-eval", "--permutation-unit")}


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def _options_with_choices():
    for command in COMMANDS:
        _, sub = build_parser(command)
        for action in sub._actions:  # noqa: SLF001
            if action.choices and action.option_strings:
                yield command, action.option_strings[-1], list(action.choices)


def test_every_option_with_choices_takes_its_config_keys_choices():
    seen = set()
    for command, option, choices in _options_with_choices():
        if (command, option) in COMMAND_LINE_ONLY:
            continue
        assert option in CONFIG_OPTIONS, f"{command} {option} has choices but sets no declared config key"
        section, name = CONFIG_OPTIONS[option]
        assert choices == [c for c in declared_key(section, name).metadata["choices"] if c], (command, option)
        seen.add(option)
    assert seen == set(CONFIG_OPTIONS)


def test_every_old_spelling_is_read_as_its_choice_in_a_config_and_on_the_command_line(tmp_path):
    olds = [(section, d.name, old, new) for section, d in declarations() for old, new in d.metadata["old"].items()]
    assert ("input", "conflicting_references", "error", "reject") in olds
    for section, name, old, new in olds:
        assert new in declared_key(section, name).metadata["choices"] and old not in declared_key(section, name).metadata["choices"]


@pytest.fixture
def conflicting(tmp_path):
    """Two systems whose rows of one doc_id carry different references."""
    path = tmp_path / "rows.jsonl"
    rows = [{"system": "a", "doc_id": "d1", "candidate": "the cat sat", "references": ["the cat sat down"]},
            {"system": "b", "doc_id": "d1", "candidate": "a dog ran", "references": ["a dog ran off"]},
            {"system": "a", "doc_id": "d2", "candidate": "one two", "references": ["one two three"]},
            {"system": "b", "doc_id": "d2", "candidate": "one", "references": ["one two three"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("command", ["score", "run"])
def test_conflicting_references_reject_and_keep_in_a_config_and_on_the_command_line(tmp_path, conflicting, command):
    def table(*args, config=None):
        extra = ["--config", config] if config else []
        if command == "run":
            out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
            done = cli("run", "--input", conflicting, "--output", out, "--rouge-args", "-n 1 -r 10", "--quiet",
                       "--max-rejected", "1", *extra, *args)
            assert done.returncode == 0, done.stderr
            return (out / "system_scores.csv").read_text(), done.stderr
        done = cli("score", conflicting, "--format", "csv", "--rouge-args", "-n 1 -r 10", "--max-rejected", "1",
                   "--quiet", *extra, *args)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr

    def config(value):
        path = tmp_path / f"{value}.toml"
        path.write_text(f'[input]\nconflicting_references = "{value}"\n[rouge]\nargs = "-n 1 -r 10"\n')
        return path

    rejected, _ = table()
    kept, _ = table("--conflicting-references", "keep")
    assert rejected != kept and ",d1" not in rejected
    assert rejected.count("\n") == kept.count("\n")  # (a and b each keep d2 when d1 is rejected)
    assert table(config=config("reject"))[0] == rejected
    assert table(config=config("keep"))[0] == kept
    assert table("--conflicting-references", "reject")[0] == rejected
    old, note = table(config=config("error"))
    assert old == rejected
    assert 'note: input.conflicting_references = "error" in ' in note and 'is read as "reject"' in note
    assert note.count("note:") == 1  # once


def test_score_and_compare_read_the_same_measure_spellings(tmp_path):
    cases = ROOT / "tests" / "golden" / "rouge155" / "cases.jsonl"
    done = cli("run", "--input", cases, "--rouge-args", "-n 1 -r 10", "--output", tmp_path / "run", "--quiet")
    assert done.returncode == 0, done.stderr
    outputs = {}
    for spelling in ("R", "r", "recall", "RECALL"):
        compared = cli("compare", tmp_path / "run", tmp_path / "run", "--measure", spelling, "--all", "--quiet")
        assert compared.returncode == 0, compared.stderr
        outputs[spelling] = compared.stdout
        scored = cli("score", cases, "--rouge-args", "-n 1 -r 10", "--measure", spelling, "-b", "--quiet")
        assert scored.returncode == 0, scored.stderr
    assert len(set(outputs.values())) == 1 and "Measure: recall" in outputs["R"]


def test_the_config_reference_lists_each_keys_values_and_old_spellings():
    text = (ROOT / "docs" / "config.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `conflicting_references`"))
    assert '`"reject"`, `"keep"`' in row and '`"error"`, the old spelling of `"reject"`' in row
