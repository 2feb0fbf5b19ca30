"""rouge_core.stem against 56,938 tokens stemmed by the official ROUGE-1.5.5 script.

`tests/golden/rouge155/stem_golden.tsv` is a copy of the oracle's
`golden/rouge155/data/stem_golden.tsv`: per token, what `-m` makes of it
(`morphstem_if_len_gt_3`: length rule, WordNet exceptions, then `stem`) and what
the script's `stem` sub alone returns (`porter_only`).
"""

import pytest

from rouge_core.stem import morph_stem, porter_stem, wordnet_exceptions
from tests.conftest import GOLDEN

STEM_GOLDEN = GOLDEN / "stem_golden.tsv"
GOLDEN_TOKENS = 56_938


def golden_rows():
    with open(STEM_GOLDEN, encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        assert header == ["token", "morphstem_if_len_gt_3", "porter_only"]
        rows = [line.rstrip("\n").split("\t") for line in fh]
    assert all(len(row) == 3 for row in rows)
    return rows


@pytest.mark.parametrize(
    "column, stemmer",
    [(1, morph_stem.__wrapped__), (2, porter_stem)],  # __wrapped__: bypass the memo
    ids=["morph_stem", "porter_stem"],
)
def test_every_golden_token_stems_as_the_script_stems_it(column, stemmer):
    rows = golden_rows()
    assert len(rows) == GOLDEN_TOKENS
    wrong = [(row[0], row[column], got) for row in rows if (got := stemmer(row[0])) != row[column]]
    assert not wrong, (
        f"{len(wrong)} of {len(rows)} tokens differ; first ones (token, expected, got): {wrong[:15]}"
    )


def test_memoised_morph_stem_agrees_with_the_golden_column():
    rows = golden_rows()
    morph_stem.cache_clear()
    for _ in range(2):  # second pass: answers from the memo (the most recent 2**16 types)
        wrong = [(t, expected, morph_stem(t)) for t, expected, _ in rows if morph_stem(t) != expected]
        assert not wrong, f"{len(wrong)} tokens differ; first ones: {wrong[:15]}"


def test_exception_table():
    table = wordnet_exceptions()
    assert len(table) == 5_930
    assert table["best"] == table["better"] == "well"  # adv.exc is merged after adj.exc


@pytest.mark.parametrize(
    "token, expected",
    [
        ("governmental", "govern"),  # CYL's step 4: -al, then -ment, in sequence
        ("settlement", "settlem"),  # -ement fails m>1, -ment fails, then -ent succeeds
        ("element", "elem"),
        ("best", "well"),  # WordNet exception, not Porter ("best")
        ("better", "well"),
        ("geese", "goose"),  # an exception's base form is not stemmed further ("goos")
        ("ran", "ran"),  # three characters: neither looked up nor stemmed
        ("was", "was"),  # would be "wa" through stem()
        ("running", "run"),
        ("Running", "run"),  # MorphStem lowercases ASCII (tr/A-Z/a-z/) first
        ("yelling", "yell"),  # an initial y is a consonant (Y), then y again
        ("yyyy", "yyyi"),
        ("generalization", "gener"),
        ("analogies", "analog"),  # step 1a -ies -> -i, then step 2's logi -> log
        ("possibly", "possibl"),  # step 2's bli -> ble, then step 5 drops the e
    ],
)
def test_hand_picked_tokens(token, expected):
    assert morph_stem(token) == expected


@pytest.mark.parametrize(
    "word, expected",
    [
        ("", ""),
        ("is", "is"),  # shorter than 3: returned as is
        ("was", "wa"),  # stem() itself has no length-3 rule beyond "< 3"
        ("feed", "feed"),  # eed with m=0: the elsif keeps "ed" from being tried
        ("agreed", "agre"),
        ("Running", "Run"),  # stem() alone does not lowercase: "R" is just a consonant
    ],
)
def test_porter_stem_alone(word, expected):
    assert porter_stem(word) == expected
