"""The sentence_split setting: one choice, the same in every preset, in the signature
and legend, and equal to scoring the same sentences given one per line."""

import pytest
from rouge_score import rouge_scorer
from sentencex import segment

from rouge_core import RougeConfigError, RougeScorer, RougeSettings
from rouge_core.sentence_split import splitter
from tests.conftest import require_kernel

PTB = "the cat sat on the mat . the dog ran away ! was it late ? yes"
PTB_REF = "a dog ran away from the cat . the mat was red . late it was"
SEPARATORS = "sep: . | ! | ? "


def as_lines(text: str) -> str:
    """The same sentences, one per line: the "newline" rule's input."""
    for sep in (" . ", " ! ", " ? "):
        text = text.replace(sep, "\n")
    return text


@pytest.mark.parametrize("kernel", ["python", "c"])
def test_separator_rule_equals_the_sentences_given_one_per_line(kernel):
    require_kernel(kernel)
    split = RougeSettings.from_flags("-n 2 -m -w 1.2 -2 4 -u").replace(sentence_split=SEPARATORS)
    given = split.replace(sentence_split="newline")
    ours = RougeScorer(split, kernel=kernel).score_batch([(PTB, [PTB_REF])])[0]
    lines = RougeScorer(given, kernel=kernel).score_batch([(as_lines(PTB), [as_lines(PTB_REF)])])[0]
    assert ours == lines
    one = RougeScorer(given, kernel=kernel).score_batch([(PTB, [PTB_REF])])[0]
    assert ours["ROUGE-L"] != one["ROUGE-L"]  # summary-level LCS depends on sentences
    assert ours["ROUGE-2"] == one["ROUGE-2"] and ours["ROUGE-SU4"] == one["ROUGE-SU4"]  # tokens only


@pytest.mark.parametrize("kernel", ["python", "c"])
def test_limits_cut_the_split_sentences(kernel):
    require_kernel(kernel)
    for flags in ("-n 2 -l 7", "-n 2 -b 30"):
        split = RougeSettings.from_flags(flags).replace(sentence_split=SEPARATORS)
        ours = RougeScorer(split, kernel=kernel).score(candidate=PTB, references=[PTB_REF])
        lines = RougeScorer(split.replace(sentence_split="newline"), kernel=kernel).score(
            candidate=as_lines(PTB), references=[as_lines(PTB_REF)]
        )
        assert ours == lines, flags


def test_rouge_score_preset_rougelsum_equals_the_rouge_score_package_on_split_text():
    settings = RougeSettings.from_preset("rouge_score", stem=True).replace(sentence_split=SEPARATORS)
    ours = RougeScorer(settings).score(candidate=PTB, references=[PTB_REF])
    peer = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"], use_stemmer=True).score(as_lines(PTB_REF), as_lines(PTB))
    assert ours["rougeLsum"].f_measure == pytest.approx(peer["rougeLsum"].fmeasure, abs=1e-12)
    assert ours["rougeL"].f_measure == pytest.approx(peer["rougeL"].fmeasure, abs=1e-12)
    assert ours["rougeL"].f_measure != ours["rougeLsum"].f_measure


def test_sentencex_rule_is_the_segmenter_in_the_presets_language():
    text = "Dr. Smith arrived. He was late! Was he? Yes."
    assert splitter("sentencex")(text) == [s.strip() for s in segment("en", text)]
    russian = "Привет. Как дела? Хорошо."
    assert splitter("sentencex", "russian")(russian) == [s.strip() for s in segment("ru", russian) if s.strip()]
    settings = RougeSettings.from_preset("unicode", "-n 1", language="russian").replace(sentence_split="sentencex")
    scored = RougeScorer(settings).score(candidate=russian, references=["Привет.\nКак дела?\nХорошо."])
    assert scored["ROUGE-L"].f_measure == 1.0


def test_the_choice_is_in_the_signature():
    base = RougeSettings.from_flags("-n 2")
    assert "|sent:newline|" in base.signature()
    assert '|sent:sep:" . "|' in base.replace(sentence_split="sep: . ").signature()
    assert '|sent:sep:[" . ", " ! ", " ? "]|' in base.replace(sentence_split=SEPARATORS).signature()
    assert "|sent:sentencex@" in base.replace(sentence_split="sentencex").signature()
    lsum = RougeSettings.from_preset("rouge_score").replace(sentence_split="sep:<q>")
    assert '|lsum:sep:"<q>"|' in lsum.signature()
    unicode = RougeSettings.from_preset("unicode", "-n 1").replace(sentence_split="sentencex")
    assert "|sent:sentencex@" in unicode.signature()


@pytest.mark.parametrize("bad", ["lines", "sep:", "sep:|", "sep:a\nb", None, 3])
def test_a_bad_rule_says_what_the_choices_are(bad):
    with pytest.raises(RougeConfigError, match="sentence_split"):
        RougeSettings(sentence_split=bad)


def test_the_rule_does_not_touch_lines_or_list_items_with_newline():
    settings = RougeSettings.from_flags("-n 1")
    scorer = RougeScorer(settings)
    as_list = scorer.score(candidate=["a b . c", "d"], references=["a b . c\nd"])
    assert as_list["ROUGE-L"].f_measure == 1.0


def test_a_signature_from_before_the_sentence_split_field_means_newline():
    from rouge_core import Signature

    now = Signature.from_settings(RougeSettings.from_flags("-n 2"), version="1")
    older = Signature.parse(now.format().replace("|sent:newline", ""))
    assert now.differences(older) == {}
    split = Signature.from_settings(RougeSettings.from_flags("-n 2").replace(sentence_split="sentencex"), version="1")
    assert set(split.differences(older)) == {"sent"}
    short = Signature.parse(split.format(short=True))
    assert short == split  # sp: in the short form
