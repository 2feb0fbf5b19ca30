"""Per-document scores on small examples worked out by hand (Lin 2004 and the
rules in ROUGE155.md); each expected number is derived in a comment."""

import pytest

from rouge_core import RougeConfigError, RougeInputError, RougeScorer, RougeSettings
from tests.conftest import require_kernel


@pytest.fixture(autouse=True, params=["python", "c"])
def scoring_path(request, monkeypatch):
    """Every test here runs on both scoring paths (the default path follows ROUGE_CORE_KERNEL)."""
    monkeypatch.setenv("ROUGE_CORE_KERNEL", require_kernel(request.param))


def score(flags, candidate, references, **changes):
    settings = RougeSettings.from_flags(flags)
    if changes:
        settings = settings.replace(**changes)
    return RougeScorer(settings).score(candidate=candidate, references=references)


def rpf(stats):
    return stats.recall, stats.precision, stats.f_measure


def test_rouge_1_clips_repeated_tokens():
    # "the" is matched once: R = 1/2, P = 1/3; F = (0.33333*0.5)/(0.5*0.33333+0.5*0.5) = 0.399998 -> 0.40000
    s = score("-n 1 -x", "the the the", ["the cat"])["ROUGE-1"]
    assert (s.hits, s.reference_total, s.candidate_total) == (1, 2, 3)
    assert rpf(s) == (0.5, 0.33333, 0.4)


def test_rouge_2_crosses_sentence_boundaries():
    # bigrams of "a b | c d" are ab, bc, cd; the reference "b c" shares bc.
    s = score("-n 2 -x", "a b\nc d", ["b c"])["ROUGE-2"]
    assert (s.hits, s.reference_total, s.candidate_total) == (1, 1, 3)


def test_summary_level_union_lcs_of_lin_2004_section_3_2():
    # r = w1..w5, c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5: the union LCS is
    # w1 w2 w3 w5, so R = 4/5; P = 4/10 (all candidate tokens).
    s = score("", "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", ["w1 w2 w3 w4 w5"])["ROUGE-L"]
    assert s.hits == 4
    assert rpf(s) == (0.8, 0.4, 0.53333)


def test_rouge_w_applies_f_twice_to_the_recall_denominator():
    # One 4-token sentence, identical: hit = f(4), R denominator = f(f(4)), so
    # R = f^-1(4^1.2 / 4^1.44) = 4^-0.2 = 0.757858 -> 0.75786; P = f^-1(f(4)/f(4)) = 1.
    s = score("-x -w 1.2", "a b c d", ["a b c d"])["ROUGE-W-1.2"]
    assert (s.recall, s.precision) == (0.75786, 1.0)


def test_skip_bigrams_of_lin_2004_section_5():
    # S1 = "police killed the gunman" has C(4,2) = 6 skip-bigrams; S2 = "police
    # kill the gunman" shares (police the), (police gunman), (the gunman): 3/6.
    # S3 = "the gunman kill police" shares only (the gunman): 1/6 = 0.16667.
    reference = ["police killed the gunman"]
    assert rpf(score("-x -2 -1", "police kill the gunman", reference)["ROUGE-S*"]) == (0.5, 0.5, 0.5)
    assert score("-x -2 -1", "the gunman kill police", reference)["ROUGE-S*"].recall == 0.16667


def test_skip_bigram_gap_and_unigrams_leave_out_the_last_token():
    # "a b c" with -2 0: pairs (a b), (b c); -u adds unigrams a and b, not c.
    s = score("-x -2 0 -u", "a b c", ["a b c"])["ROUGE-SU0"]
    assert (s.hits, s.reference_total) == (4, 4)
    assert score("-x -2 0 -u", "a", ["a"])["ROUGE-SU0"].reference_total == 0


def test_multiple_references_average_counts_the_candidate_once_per_reference():
    # -f A: hits 1 + 2, reference totals 2 + 2, candidate total 2 + 2.
    s = score("-n 1 -x", "a b", ["a c", "a b"])["ROUGE-1"]
    assert (s.hits, s.reference_total, s.candidate_total) == (3, 4, 4)
    assert rpf(s) == (0.75, 0.75, 0.75)


def test_best_reference_is_chosen_by_recall_and_the_first_wins_ties():
    # Both references give R = 1/2; the first ("a c") is kept, so P = 1/3.
    s = score("-n 1 -x -f B", "a b d", ["a c", "b e"])["ROUGE-1"]
    assert (s.hits, s.reference_total, s.candidate_total) == (1, 2, 3)


def test_jackknife_averages_the_best_of_each_leave_one_out_set():
    # refs "a b" and "a c" for candidate "a b": leaving out "a b" leaves R=P=F=0.5;
    # leaving out "a c" leaves R=P=F=1; the averages are 0.75.
    s = score("-n 1 -x", "a b", ["a b", "a c"], multi_reference="jackknife")["ROUGE-1"]
    assert rpf(s) == (0.75, 0.75, 0.75)
    # With one reference the jackknife is the best-reference score.
    one = score("-n 1 -x", "a b d", ["a c"], multi_reference="jackknife")["ROUGE-1"]
    assert one == score("-n 1 -x -f B", "a b d", ["a c"])["ROUGE-1"]


def test_alpha_weights_precision():
    # R = 1/2, P = 1; alpha = 1 gives F = P*R / (0*P + 1*R) = P = 1.
    assert score("-n 1 -x -p 1", "a", ["a b"])["ROUGE-1"].f_measure == 1.0


def test_empty_candidate_and_tokenless_reference_score_zero():
    for tag, s in score("-n 2 -w 1.2 -2 4 -u", "", ["... ---"]).items():
        assert rpf(s) == (0, 0, 0), tag


def test_stemming_and_stopwords():
    # -m: "cats"/"running" stem to "cat"/"run"; "ran" (3 letters) is not stemmed.
    assert score("-n 1 -x -m", "cats running ran", ["cat run run"])["ROUGE-1"].hits == 2
    # -s drops "the" and "on" (SMART stopwords) before matching.
    s = score("-n 1 -x -s", "the cat on the mat", ["a cat"])["ROUGE-1"]
    assert (s.hits, s.reference_total, s.candidate_total) == (1, 1, 2)


def test_word_and_byte_limits_apply_to_references_too():
    s = score("-n 1 -x -l 2", "a b c", ["a b c"])["ROUGE-1"]
    assert (s.reference_total, s.candidate_total) == (2, 2)
    # -b 12 on four 9-byte sentences: ROUGE-1 sees "aaaa bbbb" + "ccc" (12 bytes)
    # on both sides, so R = 1.  ROUGE-L's reader never counts bytes (the script's
    # bug) and keeps all four sentences: base 8 tokens, and of the 8 matched
    # positions only aaaa and bbbb are in the correctly cut unigram tables: R = 2/8.
    text = ["aaaa bbbb", "cccc dddd", "eeee ffff", "gggg hhhh"]
    scores = score("-n 1 -b 12", text, [text])
    assert rpf(scores["ROUGE-1"])[0] == 1.0
    assert scores["ROUGE-L"].recall == 0.25


def test_errors_say_what_is_wrong():
    with pytest.raises(RougeInputError, match="at least one reference"):
        score("-n 1", "a", [])
    with pytest.raises(RougeInputError, match="list of texts"):
        score("-n 1", "a", "a")
    with pytest.raises(RougeConfigError, match="cannot both be set"):
        RougeSettings.from_flags("-l 10 -b 75")
