"""The `rouge_score` preset on the compiled kernel equals the preset in pure Python.

`RougeScorer(RougeSettings.from_preset("rouge_score", ...))` scores rouge1-9, rougeL
and rougeLsum under `best` in C (rouge_core/_rouge_score_kernel.c); the Python code of
rouge_core/presets/rouge_score.py is the reference: every MetricStats field, its type,
and every error must be the same.  (That Python code equals rouge-score 0.1.2 itself:
tests/core/test_rouge_score_preset.py.)
"""

import pytest

from rouge_core import RougeInputError, RougeScorer, RougeSettings
from tests.conftest import require_kernel
from tests.core.test_rouge_score_preset import messy_pairs

TYPES = ("rouge1", "rouge2", "rouge4", "rougeL", "rougeLsum")


def scorers(stemming, **limits):
    settings = RougeSettings.from_preset("rouge_score", rouge_types=TYPES, stem=stemming)
    return (RougeScorer(settings, kernel=require_kernel("c"), **limits),
            RougeScorer(settings, kernel="python", **limits))


def same(got, expected):
    assert got == expected
    for tag in expected:
        assert [type(v) for v in got[tag]] == [type(v) for v in expected[tag]], tag


@pytest.mark.parametrize("stemming", [False, True])
def test_messy_pairs_and_several_references(stemming):
    compiled, python = scorers(stemming)
    assert (compiled.kernel, python.kernel) == ("c", "python")
    pairs = list(messy_pairs(61, 600))
    for pair, got in zip(pairs, compiled.score_batch(pairs)):
        same(got, python.score(candidate=pair[0], references=pair[1]))


def test_texts_as_sentence_lists_and_bad_input_go_to_python():
    compiled, python = scorers(True)
    pairs = [(["Cats ran.", "", "Dogs\nsat."], ["A cat runs.\nDogs sit."]),  # a list: Python reads it
             ("a cat", []), ("a cat", "a cat"), (None, ["a"]), ("a", [3])]
    for pair, got in zip(pairs, compiled.score_batch(pairs)):
        try:
            expected = python.score(candidate=pair[0], references=pair[1])
        except RougeInputError as error:
            assert isinstance(got, RougeInputError) and str(got) == str(error)
        else:
            same(got, expected)


def test_pairs_over_the_lcs_limit_are_refused_alike():
    compiled, python = scorers(False, max_lcs_cells=1)  # 64 cells: 8 x 9 tokens is over
    long, short = " ".join(["w"] * 9), " ".join(["w"] * 7)
    for candidate, fine in ((long, False), (short, True)):
        results = [s.score_batch([(candidate, [" ".join(["w"] * 8)])])[0] for s in (compiled, python)]
        if fine:
            same(*results)
        else:
            assert all(isinstance(r, RougeInputError) and r.reason == "too_costly" for r in results)
            assert str(results[0]) == str(results[1])
