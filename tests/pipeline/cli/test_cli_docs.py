"""docs/cli.md, the command reference, says what the parsers say: its option lists
are generated from them (python -m pipeline.render.cli_docs docs/cli.md) and every
option of every command is on the page."""

from pathlib import Path

from pipeline.cli import COMMANDS, build_parser
from pipeline.render.cli_docs import BEGIN, reference_markdown
from pipeline.render.config_docs import generated_part

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "cli.md"


def test_docs_cli_md_holds_the_generated_option_lists():
    assert generated_part(str(PAGE), BEGIN).strip() == reference_markdown().strip(), (
        "docs/cli.md is out of date: run python -m pipeline.render.cli_docs docs/cli.md"
    )


def test_every_command_and_option_is_on_the_page():
    text = PAGE.read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"### rouge-pipeline {command}" in text
        _, parser = build_parser(command)
        for option in (o for action in parser._actions for o in action.option_strings if o not in ("-h", "--help")):  # noqa: SLF001
            assert f"`{option}`" in text, (command, option)


def test_the_field_mapping_example_of_the_page_is_the_one_the_commands_take(tmp_path):
    text = PAGE.read_text(encoding="utf-8")
    assert "--fields system=model,doc_id=id,candidate=prediction,reference=reference --integer-ids doc_id" in text
