"""Long and adversarial texts: scored in bounded time and memory, or refused by a
work limit with a reason (see RougeScorer's docstring for the stated costs)."""

import pytest

from rouge_core import RougeInputError, RougeScorer, RougeSettings
from tests.conftest import require_kernel


@pytest.fixture(autouse=True, params=["python", "c"])
def scoring_path(request, monkeypatch):
    """Every test here runs on both scoring paths (the default path follows ROUGE_CORE_KERNEL)."""
    monkeypatch.setenv("ROUGE_CORE_KERNEL", require_kernel(request.param))


PYROUGE = RougeSettings.from_flags("-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m")
REFERENCE = ["the cat sat on the mat near the door\nthen it went to sleep"]  # one reference, two sentences


def test_one_token_repeated_100000_times_is_refused_for_skip_bigrams():
    with pytest.raises(RougeInputError, match="100000 tokens has 4999950000 skip-bigrams") as err:
        RougeScorer(PYROUGE).score(candidate="the " * 100_000, references=REFERENCE)
    assert err.value.reason == "too_costly"


def test_one_token_repeated_100000_times_is_scored_without_skip_bigrams():
    scores = RougeScorer(RougeSettings.from_flags("-n 4 -w 1.2")).score(
        candidate="the " * 100_000, references=REFERENCE
    )
    # "the" occurs 3 times in the 14-token reference: ROUGE-1 R = 3/14, P = 3/100000.
    assert (scores["ROUGE-1"].recall, scores["ROUGE-1"].precision) == (0.21429, 0.00003)
    # The union LCS can match each reference "the" once, clipped the same way.
    assert scores["ROUGE-L"].hits == 3 and scores["ROUGE-W-1.2"].hits == 3.0


def test_100000_one_word_sentences():
    words = "\n".join(["cat", "mat", "sleep", "door"] * 25_000)
    with pytest.raises(RougeInputError, match="skip-bigrams"):
        RougeScorer(PYROUGE).score(candidate=words, references=REFERENCE)
    scores = RougeScorer(RougeSettings.from_flags("-n 2 -w 1.2")).score(candidate=words, references=REFERENCE)
    # cat, mat, door, sleep each once in the reference, each a hit of its own sentence.
    assert scores["ROUGE-1"].hits == 4 and scores["ROUGE-L"].hits == 4 and scores["ROUGE-W-1.2"].hits == 4.0


def test_the_lcs_limit_names_the_metric():
    long = " ".join(f"w{i}" for i in range(5000))
    with pytest.raises(RougeInputError, match="ROUGE-W would fill 25000000 table cells"):
        RougeScorer(RougeSettings.from_flags("-x -w 1.2")).score(candidate=long, references=[long])
    # ROUGE-L alone is bit-parallel and allowed 64 times more cells.
    assert (
        RougeScorer(RougeSettings.from_flags("")).score(candidate=long, references=[long])["ROUGE-L"].recall
        == 1
    )
