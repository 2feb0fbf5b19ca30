"""The README and the manual show what the tool really does:

* every Python example in README.md and docs/*.md runs as written (doctest);
* every ```console block of the README is run: each `$ command`, from the repository's
  root with the project's commands on PATH, and its stdout compared with the lines shown
  under it (`...` alone on a line stands for any lines; timings and this checkout's path
  are the only parts of a line that may differ);
* the README stays a guide: at most 400 lines, every job named in its first 80;
  docs/README.md links every page of docs/.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_shared

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def _pages() -> list[Path]:
    return [README] + sorted(DOCS.glob("*.md"))


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run_as_written(page):
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_the_readme_has_python_examples_and_the_manual_has_the_rest():
    examples = {str(page.relative_to(ROOT)): doctest.DocTestParser().get_examples(page.read_text(encoding="utf-8"))
                for page in _pages()}
    assert len(examples["README.md"]) >= 3 and len(examples["docs/python.md"]) >= 8


def console_blocks(text: str) -> list[tuple[str, list[str]]]:
    """[(command, the output lines shown under it)] of every ```console block."""
    found = []
    for block in re.findall(r"^```console\n(.*?)^```", text, flags=re.M | re.S):
        for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, shown = part.partition("\n")
            found.append((command, shown.splitlines()))
    return found


def _normal(line: str) -> str:
    line = line.rstrip().replace(str(ROOT) + os.sep, "")
    return re.sub(r"\(\d+(\.\d+)? s\)", "(N s)", line)


def matches(shown: list[str], actual: list[str]) -> bool:
    """The shown lines in order, `...` standing for any run of lines (none included)."""
    shown, actual = [_normal(s) for s in shown], [_normal(a) for a in actual]

    def at(i: int, j: int) -> bool:
        if i == len(shown):
            return j == len(actual)
        if shown[i] == "...":
            return any(at(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and shown[i] == actual[j] and at(i + 1, j + 1)

    return at(0, 0)


def test_matching_a_block_needs_every_shown_line_in_order():
    assert matches(["a", "...", "c"], ["a", "b", "b", "c"])
    assert matches(["...", "b", "..."], ["b"])
    assert not matches(["a", "c"], ["a", "b", "c"])
    assert not matches(["...", "c", "b"], ["b", "c"])
    assert matches(["results: out/demo (2.9 s)"], [f"results: {ROOT}/out/demo (31.0 s)"])


COMMANDS = console_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_shows_commands_with_their_output():
    assert len(COMMANDS) >= 6


@pytest.mark.parametrize("command,shown", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_each_readme_command_prints_what_the_readme_shows(command, shown):
    if "../shared/data" in command or "cnndm" in command or "summeval" in command:
        require_shared(ROOT.parent / "shared" / "data")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    command = command.removeprefix(".venv/bin/")  # the demo's one-liner names the venv's command
    done = subprocess.run(command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert matches(shown, done.stdout.splitlines()), f"README shows:\n{chr(10).join(shown)}\n\ngot:\n{done.stdout}"


def test_the_readme_is_a_guide_whose_first_screen_names_every_job():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400
    first = "\n".join(lines[:80])
    for job in ("rouge-pipeline score", "rouge_core.compat", "rouge-pipeline run", "on a cluster",
                "rouge-pipeline compare", "meta-eval", "rouge_core", "docs/README.md"):
        assert job in first, job


def test_the_manual_index_links_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w.-]+\.md)(?:#[\w-]*)?\)", index))
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert pages <= linked, sorted(pages - linked)
    for name in linked:
        assert (DOCS / name).is_file(), name


# ------------------------------------------------------------------ quoted figures

RESULT_REF = re.compile(r"benchmarks/results/([\w.-]+?)(?:\.\{json,md\}|\.(?:md|json))?\b(?=[`)\s,:;]|$)")
FIGURE = re.compile(r"(?<![\w.,/-])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+(?=\s?(?:x|us|ms|s|MiB|MB|GB|GiB|%)\b))(?![\w.,/-]?\d)")
NUMBER = re.compile(r"-?\d[\d,]*\.?\d*")


def quoted_figures(text: str):
    """(figure, result files, the sentence quoting it) for every figure of a sentence (or
    table row) that names a file of benchmarks/results/: each must be in one of them."""
    units = []
    for paragraph in re.split(r"\n\s*\n", text):
        units += paragraph.splitlines() if paragraph.lstrip().startswith("|") else [paragraph]
    for unit in units:
        for sentence in re.split(r"\.\s+(?=[A-Z(*`])|;\s", unit):
            stems = [m.group(1) for m in RESULT_REF.finditer(sentence)]
            if not stems:
                continue
            # not the names in links or code spans (a file name, a command)
            plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", sentence)
            plain = re.sub(r"`[^`]*`|benchmarks/results/\S+", " ", plain)
            for figure in FIGURE.finditer(plain):
                yield figure.group(0), tuple(stems), " ".join(sentence.split())


def _numbers(text: str) -> set:
    from decimal import Decimal, InvalidOperation

    found = set()
    for token in NUMBER.findall(text):
        try:
            found.add(Decimal(token.replace(",", "").rstrip(".")))
        except InvalidOperation:
            pass
    return found


def _quotes(figure: str, numbers: set) -> bool:
    """The figure is one of the numbers, as written or rounded half up to its digits."""
    from decimal import ROUND_HALF_UP, Decimal

    value = Decimal(figure.replace(",", ""))
    step = Decimal(1).scaleb(value.as_tuple().exponent)
    return any(n.quantize(step, rounding=ROUND_HALF_UP) == value for n in numbers)


def test_every_quoted_figure_is_in_its_result_file():
    results = ROOT / "benchmarks" / "results"
    wrong = []
    for page in _pages():
        for figure, stems, sentence in quoted_figures(page.read_text(encoding="utf-8")):
            files = [f for stem in stems for f in (results / f"{stem}.md", results / f"{stem}.json") if f.is_file()]
            assert files, f"{page.name}: no result file {stems}"
            if not _quotes(figure, set().union(*(_numbers(f.read_text(encoding="utf-8")) for f in files))):
                wrong.append(f"{page.relative_to(ROOT)}: {figure} is not in {', '.join(stems)}: {sentence[:200]!r}")
    assert not wrong, "\n".join(wrong)


def test_the_figure_check_reads_quotes_as_written():
    text = ("The kernel scores 25,191 pairs per CPU second, 445.7x the script ([bench](benchmarks/results/bench.md)); "
            "1,000,000 pairs took 35.3 s and 485 MiB (`benchmarks/results/full_runs-99ff64d.md`). Not 2.5 s here.\n\n"
            "| a | 9.9 | 2 | `benchmarks/results/x.md` |")
    assert [(f, s) for f, s, _ in quoted_figures(text)] == [
        ("25,191", ("bench",)), ("445.7", ("bench",)),
        ("1,000,000", ("full_runs-99ff64d",)), ("35.3", ("full_runs-99ff64d",)), ("485", ("full_runs-99ff64d",)),
        ("9.9", ("x",)),
    ]
    numbers = _numbers("cpu 25,190.5 and 35.34; 485")
    assert _quotes("25,191", numbers) and _quotes("35.3", numbers) and _quotes("485", numbers)
    assert not _quotes("25,190", numbers) and not _quotes("35.4", numbers)


def test_the_readmes_speed_figures_each_name_their_result_file():
    """A ratio, a time per pair, a rate or a memory figure in the README's prose is a
    quote of a recorded result (checked above), never a number typed from memory."""
    text = re.sub(r"^```.*?^```", "", README.read_text(encoding="utf-8"), flags=re.M | re.S)
    quoted = {(f, " ".join(s.split())) for f, _, s in quoted_figures(text)}
    speed = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?=\s?(?:x\b|us\b|MiB\b|GB\b|pairs per))")
    for paragraph in re.split(r"\n\s*\n", text):
        for sentence in re.split(r"\.\s+(?=[A-Z(*`])|;\s", paragraph):
            for figure in speed.findall(sentence):
                assert (figure, " ".join(sentence.split())) in quoted, (figure, sentence)
