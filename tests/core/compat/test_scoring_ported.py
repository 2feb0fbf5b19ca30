"""rouge-score's own `scoring_test.py` (and `tokenize_test.py`, `tokenizers_test.py`),
ported to call rouge_core.compat.

Source: rouge-score 0.1.2 (PyPI sdist, rouge_score/scoring_test.py,
tokenize_test.py, tokenizers_test.py), the same files as google-research/
google-research rouge/.  rouge-score seeds NumPy's global state with 123 in setUp;
the drop-in's aggregator takes the seed instead (`seed=123`).

`testConfidenceIntervalsAgainstRouge155` and `...WithStemming` read
testdata/target_large.txt and prediction_large.txt, and `...WithStemmingMultiLine`
the 500 pyrouge_files/*_multi.*.txt files (all vendored in data/, see
data/SOURCE.md), and compare with ROUGE-1.5.5's intervals within 0.002, as upstream.
Beside these, the
stronger check below: on CNN/DM pairs, the drop-in's aggregate with seed s is
exactly rouge-score's after `numpy.random.seed(s)`, for the same types and settings
the three interval cases use, the multi-line one's included.
"""

import numpy as np
import pytest
from rouge_score import rouge_scorer as google_rouge_scorer
from rouge_score import scoring as google_scoring

from rouge_core.compat import rouge_scorer, scoring, tokenize, tokenizers
from tests.core.compat.conftest import DATA, cnndm_pairs

_DELTA = 0.002
_RANDOM_SEED = 123


@pytest.fixture(autouse=True)
def _both_paths(scoring_path):
    return scoring_path


def assert_similar_aggregates(precision, recall, fmeasure, aggregate, delta=_DELTA):
    for expected, got in zip(
        (*precision, *recall, *fmeasure),
        (aggregate.low.precision, aggregate.mid.precision, aggregate.high.precision,
         aggregate.low.recall, aggregate.mid.recall, aggregate.high.recall,
         aggregate.low.fmeasure, aggregate.mid.fmeasure, aggregate.high.fmeasure),
    ):
        assert got == pytest.approx(expected, abs=delta)


def three_scores(aggregator):
    aggregator.add_scores({"rouge1": scoring.Score(precision=1, recall=1 / 3, fmeasure=1 / 2)})
    aggregator.add_scores({"rouge1": scoring.Score(precision=0, recall=0, fmeasure=0)})
    aggregator.add_scores({"rouge1": scoring.Score(precision=1, recall=1, fmeasure=1)})
    return aggregator.aggregate()


def test_ConsistentPercentiles():
    result = three_scores(scoring.BootstrapAggregator(confidence_interval=0.9, seed=_RANDOM_SEED))
    assert_similar_aggregates((1 / 3, 2 / 3, 3 / 3), (1 / 9, 4 / 9, 7 / 9), (1 / 6, 3 / 6, 5 / 6),
                              result["rouge1"], delta=1e-8)


def test_LargeConfidence():
    result = three_scores(scoring.BootstrapAggregator(confidence_interval=0.0, seed=_RANDOM_SEED))
    assert_similar_aggregates((2 / 3, 2 / 3, 2 / 3), (4 / 9, 4 / 9, 4 / 9), (3 / 6, 3 / 6, 3 / 6),
                              result["rouge1"], delta=1e-8)


@pytest.fixture(scope="module")
def large_pairs():
    """rouge-score's setUp: target_large.txt and prediction_large.txt, line by line."""
    with open(DATA / "target_large.txt") as f:
        targets = f.readlines()
    with open(DATA / "prediction_large.txt") as f:
        predictions = f.readlines()
    return list(zip(targets, predictions))


def aggregate_large(pairs, types, stemming):
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=stemming)
    aggregator = scoring.BootstrapAggregator(seed=_RANDOM_SEED)
    for target, prediction in pairs:
        aggregator.add_scores(scorer.score(target, prediction))
    return aggregator.aggregate()


def test_MultipleRougeTypes(large_pairs):
    result = aggregate_large(large_pairs[:5], ["rouge1", "rougeL"], stemming=False)
    assert sorted(result.keys()) == ["rouge1", "rougeL"]


def test_ConfidenceIntervalsAgainstRouge155(large_pairs):
    result = aggregate_large(large_pairs, ["rouge1"], stemming=False)
    assert_similar_aggregates((0.48695, 0.49879, 0.51131),
                              (0.31106, 0.31950, 0.32849),
                              (0.37614, 0.38554, 0.39581),
                              result["rouge1"])


def test_ConfidenceIntervalsAgainstRouge155WithStemming(large_pairs):
    result = aggregate_large(large_pairs, ["rouge1", "rougeL"], stemming=True)
    assert_similar_aggregates((0.51027, 0.52434, 0.53788),
                              (0.32563, 0.33580, 0.34548),
                              (0.39380, 0.40524, 0.41661),
                              result["rouge1"])
    assert_similar_aggregates((0.50759, 0.52104, 0.53382),  # P
                              (0.32418, 0.33377, 0.34362),  # R
                              (0.39157, 0.40275, 0.41383),  # F
                              result["rougeL"])


def test_ConfidenceIntervalsAgainstRouge155WithStemmingMultiLine():
    # rouge-score's 250 pyrouge files (data/pyrouge_files): texts of several lines, so
    # rougeLsum sees sentences.
    folder = DATA / "pyrouge_files"
    targets = [(folder / f"target_multi.{i}.txt").read_text() for i in range(250)]
    predictions = [(folder / f"prediction_multi.{i}.txt").read_text() for i in range(250)]
    result = aggregate_large(list(zip(targets, predictions)), ["rouge1", "rouge2", "rougeLsum"], stemming=True)
    # DIR = testdata/pyrouge_evaluate_plain_text_files
    #  pyrouge_evaluate_plain_text_files -s $DIR -sfp "prediction_multi.(.*).txt"
    #    -m $DIR -mfp target_multi.#ID#.txt
    assert_similar_aggregates((0.58963, 0.59877, 0.60822),  # P
                              (0.37327, 0.38091, 0.38914),  # R
                              (0.45607, 0.46411, 0.47244),  # F
                              result["rouge1"])
    assert_similar_aggregates((0.35429, 0.36516, 0.37665),  # P
                              (0.22341, 0.23109, 0.23916),  # R
                              (0.27312, 0.28209, 0.29133),  # F
                              result["rouge2"])
    assert_similar_aggregates((0.58604, 0.59491, 0.60444),  # P
                              (0.37084, 0.37846, 0.38671),  # R
                              (0.45305, 0.46113, 0.46946),  # F
                              result["rougeLsum"])


def test_invalid_arguments_raise_as_in_rouge_score():
    for kwargs in (dict(confidence_interval=-0.1), dict(confidence_interval=1.5), dict(n_samples=0)):
        with pytest.raises(ValueError):
            google_scoring.BootstrapAggregator(**kwargs)
        with pytest.raises(ValueError):
            scoring.BootstrapAggregator(**kwargs)


@pytest.mark.parametrize("types, stemming", [
    (["rouge1"], False),
    (["rouge1", "rougeL"], True),
    (["rouge1", "rouge2", "rougeLsum"], True),
])
def test_seeded_aggregate_equals_rouge_score_after_numpy_seed(types, stemming):
    pairs = cnndm_pairs(150)
    ours, theirs = scoring.BootstrapAggregator(seed=_RANDOM_SEED), google_scoring.BootstrapAggregator()
    our_scorer = rouge_scorer.RougeScorer(types, use_stemmer=stemming)
    their_scorer = google_rouge_scorer.RougeScorer(types, use_stemmer=stemming)
    for target, prediction in pairs:
        ours.add_scores(our_scorer.score(target, prediction))
        theirs.add_scores(their_scorer.score(target, prediction))
    np.random.seed(_RANDOM_SEED)
    expected = theirs.aggregate()
    got = ours.aggregate()
    assert got == expected  # every low/mid/high precision/recall/F, exactly
    assert ours.aggregate() == got  # and again: the draws start from the seed on every call


def test_unseeded_aggregator_draws_from_numpy_like_rouge_score():
    ours, theirs = scoring.BootstrapAggregator(seed=None), google_scoring.BootstrapAggregator()
    for i in range(20):
        score = scoring.Score(precision=i / 20, recall=(i * 7 % 20) / 20, fmeasure=(i * 3 % 20) / 20)
        ours.add_scores({"rouge1": score})
        theirs.add_scores({"rouge1": google_scoring.Score(*score)})
    np.random.seed(7)
    expected = theirs.aggregate()
    np.random.seed(7)
    assert ours.aggregate() == expected


def test_fmeasure_as_rouge_score():
    for p, r in [(0.1, 0.7), (1 / 3, 2 / 7), (0, 0), (0.0, 1e-300), (1, 1)]:
        assert scoring.fmeasure(p, r) == google_scoring.fmeasure(p, r)
        assert type(scoring.fmeasure(p, r)) is type(google_scoring.fmeasure(p, r))


# ---------------------------------------------------------------- tokenize_test.py, tokenizers_test.py
def test_tokenize_give_me_a_name():
    assert tokenize.tokenize("one Two three", None) == ["one", "two", "three"]
    assert tokenize.tokenize("one\n Two \nthree", None) == ["one", "two", "three"]


def test_default_tokenizer_no_stemmer_init():
    tokenizer = tokenizers.DefaultTokenizer(use_stemmer=False)
    assert isinstance(tokenizer, tokenizers.Tokenizer)
    assert tokenizer.tokenize("this is a test") == ["this", "is", "a", "test"]


def test_default_tokenizer_with_stemmer_init():
    tokenizer = tokenizers.DefaultTokenizer(use_stemmer=True)
    assert isinstance(tokenizer, tokenizers.Tokenizer)
    assert tokenizer.tokenize("the friends had a meeting") == ["the", "friend", "had", "a", "meet"]
