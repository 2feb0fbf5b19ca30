"""The drop-in against rouge-score 0.1.2 itself: every value the same float, of the same type.

rouge1, rouge2, rougeL and rougeLsum precision, recall and F are compared with
`==` and `type(...) is` (rouge-score returns the int 0 for rougeL and rougeLsum
when a side has no tokens; the drop-in too), stemming on and off, on

* 20,000 CNN/DailyMail pairs (four systems' test outputs from ../shared/data,
  see conftest.cnndm_pairs), through `score` (marked slow: rouge-score itself
  takes about a minute per setting);
* generated messy text (non-ASCII, digits, hyphens, several lines, empty texts,
  1 to 3 references; the generator of tests/core/test_rouge_score_preset.py)
  through `score` and `score_multi`, with rouge3 and rouge9 too;

each on the compiled kernel and on the Python reference.
"""

import pytest
from rouge_score import rouge_scorer as google

from rouge_core.compat import rouge_scorer, tokenizers
from tests.core.compat.conftest import cnndm_pairs
from tests.core.test_rouge_score_preset import messy_pairs

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
_expected_cnndm = {}


def same(got, expected, where):
    assert list(got) == list(expected), where
    for key in expected:
        assert tuple(got[key]) == tuple(expected[key]), (key, where)
        assert [type(v) for v in got[key]] == [type(v) for v in expected[key]], (key, where)
        assert got[key]._fields == ("precision", "recall", "fmeasure")


@pytest.mark.slow
@pytest.mark.parametrize("stemming", [False, True])
def test_20000_cnndm_pairs_equal_rouge_score(stemming, scoring_path):
    pairs = cnndm_pairs(20_000)
    assert len(pairs) == 20_000
    if stemming not in _expected_cnndm:  # rouge-score once per setting, shared by both paths
        theirs = google.RougeScorer(TYPES, use_stemmer=stemming)
        _expected_cnndm[stemming] = [theirs.score(t, p) for t, p in pairs]
    ours = rouge_scorer.RougeScorer(TYPES, use_stemmer=stemming)
    for i, ((target, prediction), expected) in enumerate(zip(pairs, _expected_cnndm[stemming])):
        same(ours.score(target, prediction), expected, i)


@pytest.mark.parametrize("stemming", [False, True])
def test_messy_text_equals_rouge_score(stemming, scoring_path):
    types = TYPES + ["rouge3", "rouge9"]
    ours = rouge_scorer.RougeScorer(types, use_stemmer=stemming)
    theirs = google.RougeScorer(types, use_stemmer=stemming)
    for i, (candidate, references) in enumerate(messy_pairs(21, 800)):
        same(ours.score_multi(references, candidate), theirs.score_multi(references, candidate), i)
        same(ours.score(references[0], candidate), theirs.score(references[0], candidate), i)


@pytest.mark.parametrize("types", [["rougeLsum"], ["rougeL", "rouge1", "rougeL"], ["rouge2", "rougeLsum", "rougeL"], []])
def test_type_lists_as_rouge_score_reads_them(types, scoring_path):
    # One type alone, a repeated type (one key, in first-seen order), any order, none.
    ours, theirs = rouge_scorer.RougeScorer(types, use_stemmer=True), google.RougeScorer(types, use_stemmer=True)
    for candidate, references in messy_pairs(22, 100):
        same(ours.score(references[0], candidate), theirs.score(references[0], candidate), candidate)


def test_a_tokenizer_of_ones_own_is_called_as_rouge_score_calls_it(scoring_path):
    class Words:  # whitespace words, case kept: nothing like the default tokenizer
        def tokenize(self, text):
            return text.split()

    ours = rouge_scorer.RougeScorer(TYPES, tokenizer=Words())
    theirs = google.RougeScorer(TYPES, tokenizer=Words())
    for candidate, references in messy_pairs(23, 300):
        same(ours.score_multi(references, candidate), theirs.score_multi(references, candidate), candidate)


def test_a_default_tokenizer_passed_in_scores_as_rouge_score(scoring_path):
    ours = rouge_scorer.RougeScorer(TYPES, tokenizer=tokenizers.DefaultTokenizer(use_stemmer=True))
    theirs = google.RougeScorer(TYPES, use_stemmer=True)
    for candidate, references in messy_pairs(24, 200):
        same(ours.score(references[0], candidate), theirs.score(references[0], candidate), candidate)


def test_score_batch_is_score_of_each_pair(scoring_path):
    pairs = list(messy_pairs(25, 300))
    targets, predictions = [refs[0] for _, refs in pairs] + [None], [c for c, _ in pairs] + ["a"]
    ours, theirs = rouge_scorer.RougeScorer(TYPES, use_stemmer=True), google.RougeScorer(TYPES, use_stemmer=True)
    with pytest.raises(AttributeError):  # None has no .lower(), in rouge-score too
        ours.score_batch(targets, predictions)
    got = ours.score_batch(targets[:-1], predictions[:-1])
    for g, t, p in zip(got, targets, predictions):
        same(g, theirs.score(t, p), p)
    with pytest.raises(ValueError, match="differ in length"):
        ours.score_batch(["a"], [])


def test_errors_as_rouge_score(scoring_path):
    ours, theirs = rouge_scorer.RougeScorer(TYPES), google.RougeScorer(TYPES)
    for target, prediction in [(None, "a"), ("a", 3), (["a", "b"], "a")]:
        with pytest.raises(Exception) as expected:
            theirs.score(target, prediction)
        with pytest.raises(type(expected.value)):
            ours.score(target, prediction)
    with pytest.raises(ValueError):  # np.argmax of no scores
        theirs.score_multi([], "a")
    with pytest.raises(ValueError):
        ours.score_multi([], "a")
    for types in (["rouge1", None], ["rouge1", 2]):  # not a str: rouge-score's re.match raises TypeError
        with pytest.raises(TypeError):
            google.RougeScorer(types).score("a", "a")
        with pytest.raises(TypeError):
            rouge_scorer.RougeScorer(types).score("a", "a")
    with pytest.raises(ValueError, match="Invalid rouge type: rougeW"):
        rouge_scorer.RougeScorer(["rouge1", "rougeW"]).score("a", "a")


def test_changed_rouge_types_and_tokenizer_are_read_on_the_next_call(scoring_path):
    # rouge-score reads self.rouge_types (and its tokenizer) on every call; so does the drop-in.
    ours, theirs = rouge_scorer.RougeScorer(["rouge1"]), google.RougeScorer(["rouge1"])
    target, prediction = "The cats were running home", "A cat runs home"
    same(ours.score(target, prediction), theirs.score(target, prediction), "rouge1")
    ours.rouge_types.append("rougeL")
    theirs.rouge_types.append("rougeL")
    same(ours.score(target, prediction), theirs.score(target, prediction), "rouge1, rougeL")
    ours._tokenizer = tokenizers.DefaultTokenizer(use_stemmer=True)
    stemmed = google.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    same(ours.score(target, prediction), stemmed.score(target, prediction), "stemmed")


def test_split_summaries_cuts_with_nltk_as_rouge_score(scoring_path, monkeypatch):
    # split_summaries=True: rougeLsum's sentences come from nltk.sent_tokenize, looked up
    # when scoring, in rouge-score and in the drop-in.  NLTK's punkt data is not on this
    # machine (no download), so both get the same stand-in splitter: after . ! or ?
    import re

    import nltk

    monkeypatch.setattr(nltk, "sent_tokenize", lambda text: re.split(r"(?<=[.!?])\s+", text))
    types = ["rouge1", "rougeLsum"]
    ours = rouge_scorer.RougeScorer(types, use_stemmer=True, split_summaries=True)
    theirs = google.RougeScorer(types, use_stemmer=True, split_summaries=True)
    unsplit = google.RougeScorer(types, use_stemmer=True)
    differ = 0
    for candidate, references in messy_pairs(26, 300):
        candidate = candidate.replace("\n", ". ")
        expected = theirs.score_multi(references, candidate)
        same(ours.score_multi(references, candidate), expected, candidate)
        differ += expected["rougeLsum"] != unsplit.score_multi(references, candidate)["rougeLsum"]
    assert differ >= 30  # the splitter changed rougeLsum on many pairs: it was used
