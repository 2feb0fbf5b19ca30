"""rouge-score's own `rouge_scorer_test.py`, ported to call rouge_core.compat.

Source: rouge-score 0.1.2 (PyPI sdist, rouge_score/rouge_scorer_test.py), the same
file as google-research/google-research rouge/rouge_scorer_test.py; its "ground
truth" numbers are from manual runs of ROUGE-1.5.5.  Each test keeps its name
(test_<rouge-score's name>), inputs and assertions (assertAlmostEqual(a, b) is
pytest.approx(a, abs=1e-7) rounded at 7 places, as unittest does); every test runs
on the compiled kernel and on the Python reference (the `scoring_path` fixture).
Every test is ported, `testRougeLsumLarge` included (it reads testdata/
target_large.txt and prediction_large.txt, vendored in data/: see data/SOURCE.md).
"""

import pytest

from rouge_core.compat import rouge_scorer, tokenizers
from tests.core.compat.conftest import DATA


@pytest.fixture(autouse=True)
def _both_paths(scoring_path):
    return scoring_path


def almost(expected, places=7):
    return pytest.approx(expected, abs=0.5 * 10**-places)


@pytest.fixture
def targets():
    with open(DATA / "target.txt") as f:
        return f.readlines()


@pytest.fixture
def predictions():
    with open(DATA / "prediction.txt") as f:
        return f.readlines()


@pytest.mark.parametrize("rouge_type", ["rougen", "rouge0", "rouge10"])
def test_InvalidRougeTypes(rouge_type):
    with pytest.raises(ValueError):
        scorer = rouge_scorer.RougeScorer([rouge_type])
        scorer.score("testing one two", "testing")


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge9", "rougeL", "rougeLsum"])
def test_ValidRougeTypes(rouge_type):
    scorer = rouge_scorer.RougeScorer([rouge_type])
    result = scorer.score("testing one two", "testing")
    assert sorted(result.keys()) == [rouge_type]


def test_Rouge1():
    result = rouge_scorer.RougeScorer(["rouge1"]).score("testing one two", "testing")
    assert result["rouge1"].precision == almost(1)
    assert result["rouge1"].recall == almost(1 / 3)
    assert result["rouge1"].fmeasure == almost(1 / 2)


def test_Rouge1Multi():
    result = rouge_scorer.RougeScorer(["rouge1"]).score_multi(["testing one two"], "testing")
    assert result["rouge1"].precision == almost(1)
    assert result["rouge1"].recall == almost(1 / 3)
    assert result["rouge1"].fmeasure == almost(1 / 2)


def test_RougeAllMulti():
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    result = scorer.score_multi(["first text", "first something"], "text first")
    assert result["rouge1"].fmeasure == almost(1)
    assert result["rouge2"].fmeasure == almost(0)
    assert result["rougeL"].fmeasure == almost(0.5)


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rougeL", "rougeLsum"])
def test_RougeEmpty(rouge_type):
    result = rouge_scorer.RougeScorer([rouge_type]).score("testing one two", "")
    assert result[rouge_type].precision == almost(0)
    assert result[rouge_type].recall == almost(0)
    assert result[rouge_type].fmeasure == almost(0)


def test_Rouge2():
    result = rouge_scorer.RougeScorer(["rouge2"]).score("testing one two", "testing one")
    assert result["rouge2"].precision == almost(1)
    assert result["rouge2"].recall == almost(1 / 2)
    assert result["rouge2"].fmeasure == almost(2 / 3)


def test_RougeLConsecutive():
    result = rouge_scorer.RougeScorer(["rougeL"]).score("testing one two", "testing one")
    assert result["rougeL"].precision == almost(1)
    assert result["rougeL"].recall == almost(2 / 3)
    assert result["rougeL"].fmeasure == almost(4 / 5)


def test_RougeLNonConsecutive():
    result = rouge_scorer.RougeScorer(["rougeL"]).score("testing one two", "testing two")
    assert result["rougeL"].precision == almost(1)
    assert result["rougeL"].recall == almost(2 / 3)
    assert result["rougeL"].fmeasure == almost(4 / 5)


def test_MultipleRougeTypes():
    result = rouge_scorer.RougeScorer(["rouge1", "rougeL"]).score("testing one two", "testing one")
    assert sorted(result.keys()) == ["rouge1", "rougeL"]
    for t in ("rouge1", "rougeL"):
        assert result[t].precision == almost(1)
        assert result[t].recall == almost(2 / 3)
        assert result[t].fmeasure == almost(4 / 5)


def _check(result, recall, precision, fmeasure, places=5):
    assert result.recall == almost(recall, places)
    assert result.precision == almost(precision, places)
    assert result.fmeasure == almost(fmeasure, places)


def test_Rouge1AgainstRouge155(targets, predictions):
    scorer = rouge_scorer.RougeScorer(["rouge1"])
    _check(scorer.score(targets[0], predictions[0])["rouge1"], 0.40741, 0.68750, 0.51163)
    _check(scorer.score(targets[1], predictions[1])["rouge1"], 0.40476, 0.65385, 0.50000)


def test_Rouge1AgainstRouge155WithStemming(targets, predictions):
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    _check(scorer.score(targets[0], predictions[0])["rouge1"], 0.40741, 0.68750, 0.51163)
    _check(scorer.score(targets[1], predictions[1])["rouge1"], 0.42857, 0.69231, 0.52941)


def test_Rouge2AgainstRouge155(targets, predictions):
    scorer = rouge_scorer.RougeScorer(["rouge2"])
    _check(scorer.score(targets[0], predictions[0])["rouge2"], 0.30769, 0.53333, 0.39024)
    _check(scorer.score(targets[1], predictions[1])["rouge2"], 0.29268, 0.48000, 0.36364)


def test_Rouge2AgainstRouge155WithStemming(targets, predictions):
    scorer = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True)
    _check(scorer.score(targets[0], predictions[0])["rouge2"], 0.30769, 0.53333, 0.39024)
    _check(scorer.score(targets[1], predictions[1])["rouge2"], 0.29268, 0.48000, 0.36364)


def test_RougeLAgainstRouge155(targets, predictions):
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    _check(scorer.score(targets[0], predictions[0])["rougeL"], 0.40741, 0.68750, 0.51163)
    _check(scorer.score(targets[1], predictions[1])["rougeL"], 0.40476, 0.65385, 0.50000)


def test_RougeLSumAgainstRouge155WithStemming():
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)
    target = (DATA / "target_multi.0.txt").read_text()
    prediction = (DATA / "prediction_multi.0.txt").read_text()
    _check(scorer.score(target, prediction)["rougeLsum"], 0.36538, 0.66667, 0.47205)


def test_RougeLSumSentenceSplitting():
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)
    target = "First sentence.\nSecond Sentence."
    prediction = "Second sentence.\nFirst Sentence."
    assert scorer.score(target, prediction)["rougeLsum"].fmeasure == almost(1.0, 5)

    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True, split_summaries=False)
    # Without newlines, summaries are treated as single sentences.
    target = target.replace("\n", " ")
    prediction = prediction.replace("\n", " ")
    assert scorer.score(target, prediction)["rougeLsum"].fmeasure == almost(0.50, 5)

    # Split summaries into sentences using nltk: its punkt data is needed, which
    # this machine may not have (no download): then rouge-score raises NLTK's
    # LookupError, and so must the drop-in.
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True, split_summaries=True)
    try:
        import nltk

        nltk.sent_tokenize("One. Two.")
    except LookupError:
        with pytest.raises(LookupError):
            scorer.score(target, prediction)
    else:
        assert scorer.score(target, prediction)["rougeLsum"].fmeasure == almost(1.0, 5)


def test_LcsTable():
    ref = [1, 2, 3, 4, 5]
    c1 = [2, 5, 3, 4]
    t = rouge_scorer._lcs_table(ref, c1)
    assert t[len(ref)][len(c1)] == 3
    assert rouge_scorer._backtrack_norec(t, ref, c1) == [1, 2, 3]  # indices
    assert [ref[i] for i in rouge_scorer._backtrack_norec(t, ref, c1)] == [2, 3, 4]  # values
    c2 = [8, 9]  # no common subsequence
    t = rouge_scorer._lcs_table(ref, c2)
    assert t[len(ref)][len(c2)] == 0
    assert rouge_scorer._backtrack_norec(t, ref, c2) == []


def test_UnionLcs():
    # Example in Section 3.2 of https://www.aclweb.org/anthology/W04-1013, with indices into ref.
    lcs1 = [0, 1]  # lcs [1, 2]
    lcs2 = [0, 2, 4]
    assert rouge_scorer._find_union([lcs1, lcs2]) == [0, 1, 2, 4]
    assert rouge_scorer._find_union([lcs2, lcs1]) == [0, 1, 2, 4]
    ref = [1, 2, 3, 4, 5]
    c1 = [1, 2, 6, 7, 8]  # lcs = [1, 2]
    c2 = [1, 3, 8, 9, 5]  # lcs = [1, 3, 5]
    assert rouge_scorer._union_lcs(ref, [c1, c2]) == [1, 2, 3, 5]


def test_SummaryLevelLcs():
    refs = [[1, 2, 3, 4, 5]]
    cans = [[1, 2, 6, 7, 8], [1, 3, 8, 9, 5]]  # lcs = [1, 2] and [1, 3, 5]
    score = rouge_scorer._summary_level_lcs(refs, cans)
    assert score.recall == 0.8  # 4 / 5
    assert score.precision == 0.4  # 4 / 10
    assert score.fmeasure == almost(0.5333, 3)  # 0.4*0.8 / (0.4 + 0.8)
    # Tokenizer may drop all tokens, resulting in empty candidate list.
    assert rouge_scorer._summary_level_lcs([["reference"]], [[]]).recall == 0.0


def test_RougeLsum():
    scorer = rouge_scorer.RougeScorer(["rougeLsum"])
    result = scorer.score("w1 w2 w3 w4 w5", "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5")
    assert result["rougeLsum"].recall == almost(0.8)
    assert result["rougeLsum"].precision == almost(0.4)
    assert result["rougeLsum"].fmeasure == almost(0.5333, 3)
    for target, prediction in [("w1 w2 w3 w4 w5", ""), ("", "w1"), ("w1 w2 w3 w4 w5", "/")]:
        result = scorer.score(target, prediction)  # empty, and all non-word characters
        assert tuple(result["rougeLsum"]) == (almost(0.0, 3),) * 3


def test_RougeLsumLarge():
    with open(DATA / "prediction_large.txt") as f:
        prediction = f.read()
    with open(DATA / "target_large.txt") as f:
        target = f.read()
    result = rouge_scorer.RougeScorer(["rougeLsum"]).score(target, prediction)
    assert result["rougeLsum"].fmeasure == almost(0.533, 3)


def test_RougeTokenizerInit():
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=tokenizers.DefaultTokenizer())
    target = "this is a test"
    assert scorer.score(target, target)["rouge1"].fmeasure == 1.0
