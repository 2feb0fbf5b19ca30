"""The stemmer against 56,938 tokens stemmed by the official ROUGE-1.5.5 script."""

import pytest

from rouge_core.stem import morph_stem, porter_stem
from tests.conftest import GOLDEN


def golden_stems():
    with open(GOLDEN / "stem_golden.tsv", encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        assert header == ["token", "morphstem_if_len_gt_3", "porter_only"]
        return [line.rstrip("\n").split("\t") for line in fh]


@pytest.mark.parametrize("column, stem", [(1, morph_stem), (2, porter_stem)], ids=["morph_stem", "porter_stem"])
def test_every_golden_token_stems_as_the_script_stems_it(column, stem):
    rows = golden_stems()
    assert len(rows) == 56_938
    wrong = [(row[0], row[column], stem(row[0])) for row in rows if stem(row[0]) != row[column]]
    assert not wrong, f"{len(wrong)} tokens differ (token, expected, got): {wrong[:10]}"


@pytest.mark.parametrize(
    "token, expected",
    [
        ("governmental", "govern"),  # CYL's step 4: -al, then -ment
        ("better", "well"),  # WordNet exception (adv.exc wins over adj.exc)
        ("ran", "ran"),  # three characters: never stemmed or looked up
        ("running", "run"),
        ("yelling", "yell"),  # an initial y is a consonant
    ],
)
def test_hand_picked_tokens(token, expected):
    assert morph_stem(token) == expected
