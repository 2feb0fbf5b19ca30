"""The `rouge_score` preset against the rouge-score 0.1.2 package itself.

Every value must be the same float (`==`), for rouge1, rouge2, rouge3, rougeL and
rougeLsum, with and without stemming, on every pair of a real CNN/DailyMail
system's outputs and on generated messy text (non-ASCII, digits, hyphens,
several sentences, empty lines, 1 to 3 references), several references through
`score_multi`.
"""

import gzip
import hashlib
import json
import random

import pytest

from rouge_core import RougeConfigError, RougeScorer, RougeSettings
from tests.conftest import SHARED_DATA, require_shared

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")  # the test extra pins rouge-score==0.1.2

TYPES = ("rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum")
CNNDM_FILE = (
    SHARED_DATA / "cnndm_test_outputs" / "see2017_pointer_gen_cov.jsonl.gz"
)


def assert_same_as_rouge_score(pairs, stemming, types=TYPES):
    ours = RougeScorer(RougeSettings.from_preset("rouge_score", rouge_types=types, stem=stemming))
    theirs = rouge_scorer.RougeScorer(list(types), use_stemmer=stemming)
    for candidate, references in pairs:
        got = ours.score(candidate=candidate, references=references)
        expected = theirs.score_multi(references, candidate)
        for t in types:
            assert (got[t].precision, got[t].recall, got[t].f_measure) == tuple(expected[t]), (
                t, candidate, references)


# ------------------------------------------------------------------ real outputs
@pytest.mark.slow
@pytest.mark.parametrize("stemming", [False, True])
def test_every_cnndm_pair_equals_rouge_score(stemming):
    require_shared(CNNDM_FILE)
    with gzip.open(CNNDM_FILE, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    assert len(rows) == 11490
    assert_same_as_rouge_score([(r["candidate"], r["references"]) for r in rows], stemming)


# ------------------------------------------------------------------ messy text
WORDS = (
    "the The THE cat Cats CAT running runs ran generously happiness ponies caresses agreed feed "
    "well-known state-of-the-art don't it's 1,000 3.5 2024 B2B covid-19 e-mail U.S. foo_bar "
    "a an of and is was this fast quick quickly dog dogs jumped jumping connection connected "
    "relational electricity hopeful sensational x y 12 3 café naïve über straße İstanbul \u212aelvin "
    "ﬁne Σίσυφος ΣΟΦΟΣ 中文 東京 😀 ÉCOLE Ünïcödé"
).split()
PUNCTUATION = [",", ".", "!", "?", "--", "''", "``", "(", ")", ";", "'s", "-", "—", "…"]
SPACES = [" ", " ", " ", "  ", "\t", " \u00a0", "\u3000"]
LINE_BREAKS = ["\n", "\n", "\n", "\n\n", "\r\n", "\n \n"]


def pair_rng(seed: int, pair_id: int) -> random.Random:
    """Counter-based randomness: each pair's generator seeded from a hash of (seed, id)."""
    digest = hashlib.sha256(f"{seed}:{pair_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def messy_text(rng: random.Random, vocabulary) -> str:
    sentences = []
    for _ in range(rng.choice([0, 1, 1, 2, 3, 4])):
        words = []
        for _ in range(rng.randint(0, 14)):
            words.append(rng.choice(vocabulary) if rng.random() < 0.85 else rng.choice(PUNCTUATION))
            words.append(rng.choice(SPACES))
        sentences.append("".join(words).strip(" ") if rng.random() < 0.8 else "".join(words))
    text = ""
    for sentence in sentences:
        text += sentence + rng.choice(LINE_BREAKS)
    return text if rng.random() < 0.7 else text.rstrip("\n")


def messy_pairs(seed: int, count: int):
    for pair_id in range(count):
        rng = pair_rng(seed, pair_id)
        vocabulary = rng.sample(WORDS, rng.randint(4, 25))  # small vocabularies: many overlaps
        candidate = messy_text(rng, vocabulary)
        references = [messy_text(rng, vocabulary) for _ in range(rng.randint(1, 3))]
        yield candidate, references


def test_generator_covers_what_it_claims():
    pairs = list(messy_pairs(11, 1200))
    texts = [c for c, _ in pairs] + [r for _, refs in pairs for r in refs]
    assert {len(refs) for _, refs in pairs} == {1, 2, 3}
    assert sum(any(ord(ch) > 127 for ch in t) for t in texts) > 1000
    assert sum(t.count("\n") >= 2 for t in texts) > 500
    assert sum(not t.strip() for t in texts) > 50  # empty texts and texts without tokens
    assert sum("-" in t for t in texts) > 500 and sum(ch.isdigit() for t in texts for ch in t) > 1000


@pytest.mark.parametrize("stemming", [False, True])
def test_messy_pairs_equal_rouge_score(stemming):
    assert_same_as_rouge_score(messy_pairs(11, 1200), stemming)


def test_every_rouge_n_up_to_nine():
    types = tuple(f"rouge{n}" for n in range(1, 10))
    assert_same_as_rouge_score(messy_pairs(12, 200), True, types)


def test_ties_between_references_go_to_the_first():
    # rouge-score's score_multi takes np.argmax of F: the first of equal Fs.
    # Both references have F 2/3 for rouge1 (R 1/2, P 1 vs R 1, P 1/2) but
    # different R and P, so the choice shows.
    candidate, references = "a b", ["a b c d", "a"]
    assert_same_as_rouge_score([(candidate, references), (candidate, references[::-1])], False, ("rouge1",))
    first = RougeScorer(RougeSettings.from_preset("rouge_score", rouge_types=["rouge1"]))
    got = first.score(candidate=candidate, references=references)["rouge1"]
    assert (got.recall, got.precision) == (0.5, 1.0)


# -------------------------------------------------- beyond rouge-score's own modes
def test_jackknife_is_the_mean_of_score_multi_over_held_out_sets():
    theirs = rouge_scorer.RougeScorer(list(TYPES), use_stemmer=True)
    ours = RougeScorer(RougeSettings.from_preset("rouge_score", rouge_types=TYPES, stem=True,
                                                 multi_reference="jackknife"))
    checked = 0
    for candidate, references in messy_pairs(13, 300):
        if len(references) < 2:
            continue
        held_out = [theirs.score_multi(references[:k] + references[k + 1:], candidate)
                    for k in range(len(references))]
        got = ours.score(candidate=candidate, references=references)
        for t in TYPES:
            for field, value in zip(("precision", "recall", "fmeasure"), (got[t].precision, got[t].recall,
                                                                          got[t].f_measure)):
                total = 0.0
                for scores in held_out:
                    total += getattr(scores[t], field)
                assert value == total / len(held_out)
        checked += 1
    assert checked > 150


def test_average_pools_counts_over_references():
    # candidate "a b c" (3 tokens); references "a b" and "a x y z".
    # rouge1 hits 2 and 1, reference totals 2 and 4, candidate total 3 per reference:
    # R = (2+1)/(2+4) = 1/2, P = (2+1)/(3+3) = 1/2, F = 2 * 1/2 * 1/2 / 1 = 1/2.
    # rouge2: hits ("a b") 1 and 0; totals 1 and 3; candidate 2 per reference:
    # R = 1/4, P = 1/4, F = 1/4.
    s = RougeSettings.from_preset("rouge_score", rouge_types=["rouge1", "rouge2"], multi_reference="average")
    got = RougeScorer(s).score(candidate="a b c", references=["a b", "a x y z"])
    assert (got["rouge1"].recall, got["rouge1"].precision, got["rouge1"].f_measure) == (0.5, 0.5, 0.5)
    assert (got["rouge2"].recall, got["rouge2"].precision, got["rouge2"].f_measure) == (0.25, 0.25, 0.25)


def test_weighted_lcs_and_skip_bigrams_in_rouge_score_style():
    # reference "a b c d e" (5 tokens), candidate "a b x d e" (5 tokens).
    # rougeW-2: the weighted LCS takes runs "a b" and "d e": f(2) + f(2) = 4 + 4 = 8,
    #   R = P = sqrt(8 / f(5)) = sqrt(8/25), F = R (P = R).
    # rougeS* (no gap limit): reference has C(5,2) = 10 skip-bigrams, candidate 10;
    #   shared: pairs of {a, b, d, e} in order = C(4,2) = 6: R = P = F = 6/10.
    # rougeSU*: adds the unigrams but the last (ROUGE-1.5.5's loop): 4 each, shared
    #   a, b, d (the last token e is not counted): hits 6 + 3 = 9 of 14: R = P = F = 9/14.
    s = RougeSettings.from_preset("rouge_score", rouge_types=["rougeW-2", "rougeS*", "rougeSU*"])
    got = RougeScorer(s).score(candidate="a b x d e", references=["a b c d e"])
    assert got["rougeW-2"].recall == got["rougeW-2"].precision == (8 / 25) ** 0.5
    assert got["rougeW-2"].f_measure == pytest.approx((8 / 25) ** 0.5, abs=1e-15)  # 2PR/(P+R) in floats
    assert (got["rougeS*"].recall, got["rougeS*"].f_measure) == (0.6, 0.6)
    assert (got["rougeSU*"].recall, got["rougeSU*"].precision) == (9 / 14, 9 / 14)


def test_gap_limited_skip_bigrams_and_best_mode():
    # rougeS1: pairs at most one token apart. Reference "a b c": (a b) (a c) (b c) = 3;
    # candidate "a c b": (a c) (a b) (c b) = 3; shared (a b), (a c): R = P = F = 2/3.
    # The first reference "c" has no skip-bigram (F 0); best takes the second.
    s = RougeSettings.from_preset("rouge_score", rouge_types=["rougeS1"])
    got = RougeScorer(s).score(candidate="a c b", references=["c", "a b c"])["rougeS1"]
    assert (got.recall, got.precision, got.f_measure) == (2 / 3, 2 / 3, 2 * (2 / 3) * (2 / 3) / (4 / 3))


# ------------------------------------------------------------------ settings
def test_settings_and_signature():
    s = RougeSettings.from_preset("rouge_score", stem=True)
    assert s.metric_tags() == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    assert s.multi_reference == "best"
    from importlib.metadata import version

    assert s.signature(version="0.1.0") == (
        "rouge_score|types:rouge1,rouge2,rougeL,rougeLsum|tok:rouge_score-0.1.2|"
        f"stem:nltk-porter@{version('nltk')}|lsum:newline|mref:best|t:0|ci:95%@1000|v:0.1.0"
    )
    assert RougeSettings(preset="rouge_score", rouge_types=("rougeLsum",)).signature().startswith(
        "rouge_score|types:rougeLsum|tok:rouge_score-0.1.2|stem:no|")
    assert s == RougeSettings(preset="rouge_score", stemming=True, rouge_types=["rouge1", "rouge2", "rougeL",
                                                                                 "rougeLsum"])
    assert s.replace(multi_reference="jackknife").multi_reference == "jackknife"


@pytest.mark.parametrize("options, message", [
    (dict(rouge_types=["rouge10"]), "unknown metric name"),
    (dict(rouge_types=["rouge1", "rouge1"]), "once"),
    (dict(remove_stopwords=True), "stopwords"),
    (dict(alpha="0.3"), "F1"),
    (dict(language="german"), "language does not apply"),
    (dict(max_ngram=4), "max_ngram"),
    (dict(rouge_types=["rougeS4", "rougeS2"]), "one skip-bigram gap"),
    (dict(word_limit=100), "does not truncate"),
])
def test_settings_the_preset_refuses(options, message):
    with pytest.raises(RougeConfigError, match=message):
        RougeSettings(preset="rouge_score", **options)


def test_no_rouge155_command_line():
    with pytest.raises(RougeConfigError, match="no ROUGE-1.5.5 command line"):
        RougeSettings.from_preset("rouge_score").rouge155_flags()
    with pytest.raises(RougeConfigError, match="rouge_types, not ROUGE-1.5.5 flags"):
        RougeSettings.from_preset("rouge_score", "-n 2")
