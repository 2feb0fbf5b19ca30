"""Lin (2004) section 2.1's human jackknife, on a hand-computed example."""

import pytest

from rouge_core import RougeInputError, RougeScorer, RougeSettings
from rouge_core.human import jackknife_folds

REFERENCES = ["the cat sat", "the cat ran", "a dog sat"]


def test_folds_hold_each_reference_out_once():
    folds = jackknife_folds(REFERENCES)
    assert [f.held_out for f in folds] == [0, 1, 2]
    assert [f.human_candidate for f in folds] == REFERENCES
    assert [f.references for f in folds] == [
        ["the cat ran", "a dog sat"],
        ["the cat sat", "a dog sat"],
        ["the cat sat", "the cat ran"],
    ]


def test_human_and_system_scores_by_hand():
    # ROUGE-1 recall, best reference per fold (-f B):
    #   fold 0: "the cat sat" vs "the cat ran" 2/3, vs "a dog sat" 1/3 -> 2/3
    #   fold 1: "the cat ran" vs "the cat sat" 2/3, vs "a dog sat" 0   -> 2/3
    #   fold 2: "a dog sat"   vs "the cat sat" 1/3, vs "the cat ran" 0 -> 1/3
    # human average (2/3 + 2/3 + 1/3) / 3 = 5/9.
    best = RougeScorer(RougeSettings.from_flags("-n 1 -x -f B"))
    human = [
        best.score(candidate=f.human_candidate, references=f.references)["ROUGE-1"].recall
        for f in jackknife_folds(REFERENCES)
    ]
    assert human == [0.66667, 0.66667, 0.33333]
    assert sum(human) / 3 == pytest.approx(5 / 9, abs=1e-5)
    # A system's "a cat ran" against the same folds' references:
    #   fold 0 {the cat ran, a dog sat}: 2/3 (cat ran), 1/3 (a)      -> 2/3
    #   fold 1 {the cat sat, a dog sat}: 1/3 (cat),     1/3 (a)      -> 1/3
    #   fold 2 {the cat sat, the cat ran}: 1/3 (cat),   2/3 (cat ran) -> 2/3
    # average 5/9, which is what the scorer's jackknife mode gives on all three references.
    system = [
        best.score(candidate="a cat ran", references=f.references)["ROUGE-1"].recall
        for f in jackknife_folds(REFERENCES)
    ]
    assert system == [0.66667, 0.33333, 0.66667]
    jackknife = RougeScorer(RougeSettings.from_flags("-n 1 -x").replace(multi_reference="jackknife"))
    assert jackknife.score(candidate="a cat ran", references=REFERENCES)["ROUGE-1"].recall == pytest.approx(
        5 / 9, abs=1e-5
    )


def test_fewer_than_two_references_are_refused():
    with pytest.raises(RougeInputError, match="at least two references"):
        jackknife_folds(["only one"])
    with pytest.raises(RougeInputError):
        jackknife_folds("a string is not a list of references")
