"""The config keys are declared once (pipeline.config.key): docs/config.md says what the
declarations say, and every declared range and choice is enforced when a config is read."""

import dataclasses
from pathlib import Path

import pytest

from pipeline.config import RunConfig, declarations, load_config
from pipeline.render.config_docs import BEGIN, END, reference_markdown
from rouge_core import RougeConfigError

ROOT = Path(__file__).resolve().parents[3]


def test_docs_config_md_is_the_generated_reference():
    text = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    generated = text.split(BEGIN + "\n", 1)[1].split(END, 1)[0]
    assert generated.strip() == reference_markdown().strip(), (
        "docs/config.md is out of date: run python -m pipeline.render.config_docs docs/config.md"
    )


def test_every_key_has_a_doc_and_every_section_is_in_the_docs():
    text = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    for section, declared in declarations():
        assert declared.metadata["doc"], f"{section}.{declared.name} has no doc"
        assert f"### [{section}]" in text and f"| `{declared.name}`" in text


def _config(section: str, name: str, value) -> RunConfig:
    config = RunConfig(input=dataclasses.replace(RunConfig().input, candidates=("x.jsonl",)))
    return dataclasses.replace(config, **{section: dataclasses.replace(getattr(config, section), **{name: value})})


def test_defaults_are_valid():
    _config("input", "candidates", ("x.jsonl",)).validate()


@pytest.mark.parametrize(
    "section, declared", [d for d in declarations() if d[1].metadata["low"] is not None], ids=lambda d: getattr(d, "name", d)
)
def test_every_declared_range_is_checked(section, declared):
    low, high = declared.metadata["low"], declared.metadata["high"]
    _config(section, declared.name, low).validate()
    _config(section, declared.name, high).validate()
    step = 1 if isinstance(low, int) else low / 2 or 0.5
    if declared.metadata["zero"]:  # 0 means off; between 0 and low is refused
        _config(section, declared.name, 0).validate()
        step = low / 2
    for outside in (low - step, high + step, float("nan")):
        with pytest.raises(RougeConfigError, match=f"{section}.{declared.name} must be (0 \\(never\\) or )?between"):
            _config(section, declared.name, outside).validate()


@pytest.mark.parametrize(
    "section, declared", [d for d in declarations() if d[1].metadata["choices"]], ids=lambda d: getattr(d, "name", d)
)
def test_every_declared_choice_is_checked(section, declared):
    list_valued = isinstance(declared.default, tuple)
    for choice in declared.metadata["choices"]:
        try:  # a choice may still be refused for another reason (the unicode preset needs a language for -m)
            _config(section, declared.name, (choice,) if list_valued else choice).validate()
        except RougeConfigError as err:
            assert f"{section}.{declared.name} must be" not in str(err)
    with pytest.raises(RougeConfigError, match=f"{section}.{declared.name} must be"):
        _config(section, declared.name, ("nonsense",) if list_valued else "nonsense").validate()


def test_a_few_ranges_as_the_readme_promised_them():
    """Numbers written down before the declarations (README, "Limits on settings")."""
    bounds = {f"{s}.{d.name}": (d.metadata["low"], d.metadata["high"]) for s, d in declarations()}
    assert bounds["statistics.bootstrap_replicates"] == (2, 100_000)
    assert bounds["input.max_text_bytes"] == (1, 256 * 1024 * 1024)
    assert bounds["input.max_line_bytes"] == (1, 1024**3)
    assert bounds["run.progress_seconds"] == (0.1, 86_400)
    assert bounds["run.worker_stall_seconds"] == (1, 86_400)
    assert bounds["statistics.bootstrap_seed"] == (0, 2**63 - 1)


def test_every_shipped_config_reads_and_checks(tmp_path):
    for path in sorted((ROOT / "configs").glob("*.toml")):
        load_config(str(path)).validate()
