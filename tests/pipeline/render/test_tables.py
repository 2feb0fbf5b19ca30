"""Text and Markdown tables: laid out by tabulate, escaped by the project
(pipeline.render.tables): a name cannot add a row, a column or markup."""

import re

from pipeline.render import significance
from pipeline.render.tables import Markdown, markdown_cell, markdown_table, text_table
from tests.conftest import markdown_cells

EVIL = "a|b\nforged | row\x1b[2J *bold* [link](x) <b>"


def test_markdown_cells_are_escaped_and_stay_one_cell():
    table = markdown_table(["#", "system", "score"], [["1", EVIL, "27.40"], ["2", "plain", "3.11"]], "rlr")
    lines = table.splitlines()
    assert len(lines) == 4  # heads, rule, two rows: the newline in the name did not make a row
    assert re.fullmatch(r"\|-+:\|:-+\|-+:\|", lines[1])  # right, left, right
    cells = markdown_cells(table)
    assert all(len(row) == 3 for row in cells)
    assert cells[2][1] == r"a\|b\\nforged \| row\\x1b\[2J \*bold\* \[link\](x) \<b\>"
    assert cells[2][2] == "27.40" and cells[3] == ["2", "plain", "3.11"]


def test_markdown_cell_lets_markdown_through_and_formats_floats():
    assert markdown_cell(Markdown("worse **FAIL**")) == "worse **FAIL**"
    assert markdown_cell(0.123456789) == "0.12346" and markdown_cell(None) == ""
    assert markdown_cell("sys_1 #2") == r"sys\_1 \#2"


def test_text_table_aligns_and_escapes_control_characters():
    table = text_table(["system", "docs"], [[EVIL, "25/25"], ["b", "3/4"]], "lr", indent="  ")
    lines = table.splitlines()
    assert len(lines) == 4 and all(line.startswith("  ") for line in lines)
    assert "\x1b" not in table and "\\x1b[2J" in table and "\\nforged" in table
    assert lines[2].endswith("25/25") and lines[3].endswith("3/4")  # right-aligned
    assert len({len(line) for line in lines[1:]}) == 1  # the rule and the rows are as wide


ROW = {
    "profile": "default", "metric": "ROUGE-1", "measure": "f_measure", "system_a": "sys|a", "system_b": "b",
    "documents": 25, "mean_a": 0.2740, "mean_b": 0.2459, "difference": 0.0281, "ci_low": -0.01, "ci_high": 0.0662,
    "effect_size": 0.31, "statistic": 1.55, "p_value": 0.134, "p_floor": 5.96e-08, "method": "t", "p_adjusted": 1.0,
}


def test_significance_table_padded_and_streamed_give_the_same_cells():
    expected = ["ROUGE-1", "f\\_measure", "sys\\|a", "b", "25", "27.40", "24.59", "2.81 (-1.00 to 6.62)", "0.31",
                "1.55", "0.1340", "t", "1.0000"]
    padded = markdown_cells(significance.markdown_table([ROW]))
    streamed = markdown_cells(significance.markdown_header() + significance.markdown_rows([ROW], False))
    assert padded[2] == expected and streamed[2] == expected
    assert padded[0] == streamed[0] and padded[0][0] == "metric"
