"""rouge_core.textcheck: the texts a setting reads badly, per preset."""

import pytest

from rouge_core import RougeScorer, RougeSettings
from rouge_core.textcheck import ONE_SENTENCE, UNREADABLE, TextCheck

ROUGE155 = RougeSettings.from_flags("-n 2 -m")
ROUGE_SCORE = RougeSettings.from_preset("rouge_score", stem=True)
UNICODE = RougeSettings.from_preset("unicode", "-n 2", language="russian")


@pytest.mark.parametrize("settings", [ROUGE155, ROUGE_SCORE])
@pytest.mark.parametrize(
    "text",
    [
        "Кошка сидела на ковре.",  # Cyrillic: no token at all
        "猫坐在垫子上",  # Chinese
        "Η γάτα κάθισε στο χαλί",  # Greek
        "Кошка сидела на ковре at home",  # a few ASCII words among many Cyrillic letters
    ],
)
def test_text_whose_letters_the_ascii_presets_drop_is_unreadable(settings, text):
    check = TextCheck(settings)
    assert UNREADABLE in check(text)
    # Independent evidence: scoring the text against itself finds (almost) nothing to match.
    scored = RougeScorer(settings).score(candidate=text, references=[text])
    first = settings.metric_tags()[0]
    tokens = scored[first].candidate_total
    assert tokens < 0.5 * sum(ch.isalpha() for ch in text)


@pytest.mark.parametrize(
    "text",
    [
        "The runners were running quickly",
        "Le café était très élevé à côté",  # loses é, è, à, ô but keeps most letters
        "1,000 km",
        "",
        "... !!!",
    ],
)
def test_readable_text_is_not_reported(text):
    # Stemming shortens words ("running" -> "run"): the check reads tokens before stemming.
    for settings in (ROUGE155, ROUGE_SCORE, UNICODE):
        assert UNREADABLE not in TextCheck(settings)(text)


def test_the_unicode_preset_reads_every_script():
    check = TextCheck(UNICODE)
    for text in ("Кошка сидела на ковре.", "猫坐在垫子上", "Le café était très élevé"):
        assert check(text) == ()


def test_a_custom_tokenizer_that_drops_letters_is_checked():
    settings = RougeSettings.from_preset("unicode", "-n 1", tokenizer=lambda s: [t for t in s.split() if t.isascii()])
    assert UNREADABLE in TextCheck(settings)("кошка cat")


def test_one_sentence_with_several_sentence_ends():
    check = TextCheck(ROUGE155)
    assert check("the cat sat . the dog ran .") == (ONE_SENTENCE,)
    assert check("He came. She left!") == (ONE_SENTENCE,)
    assert check('"Go." She went.') == (ONE_SENTENCE,)
    assert check("U.S. officials met in Washington.") == ()  # an abbreviation, not a sentence end
    assert check("One sentence only.") == ()
    assert check("the cat sat .\nthe dog ran .") == ()  # already one sentence per line
    assert check(["The cat sat.", "The dog ran."]) == ()
    assert check("\n\nHe came. She left.\n \n") == ()  # a blank line is a sentence of ROUGE's
    assert check("\n\nHe came. She left.\n") == (ONE_SENTENCE,)  # empty lines are not
    assert TextCheck(ROUGE155.replace(sentence_split="sep: . "))("the cat sat . the dog ran .") == ()
    assert TextCheck(ROUGE_SCORE.replace(sentence_split="sep: . "))("the cat sat . the dog ran .") == ()
    # Chinese and Japanese end sentences with full-width marks and no space.
    unicode = TextCheck(RougeSettings.from_preset("unicode", "-n 2"))
    assert unicode("猫坐在垫子上。狗睡着了。") == (ONE_SENTENCE,)
    assert unicode("「行こう。」彼は言った。") == (ONE_SENTENCE,)
    assert unicode("猫坐在垫子上。") == () and unicode("「行こう。」") == ()
    assert TextCheck(RougeSettings.from_preset("unicode", "-n 2", sentence_split="sentencex"))("猫坐在垫子上。狗睡着了。") == ()


def test_one_sentence_matters_only_for_metrics_that_use_sentences():
    text = "He came. She left."
    assert TextCheck(RougeSettings.from_flags("-n 2 -x"))(text) == ()  # no ROUGE-L
    assert TextCheck(RougeSettings.from_flags("-n 1 -x -w 1.2"))(text) == (ONE_SENTENCE,)  # ROUGE-W
    assert TextCheck(RougeSettings.from_preset("rouge_score", rouge_types=["rouge1", "rougeL"]))(text) == ()
    assert TextCheck(ROUGE_SCORE)(text) == (ONE_SENTENCE,)  # rougeLsum
    assert TextCheck(ROUGE155.replace(sentence_split="sentencex"))(text) == ()  # split: two sentences


def test_not_a_text_is_left_to_the_scorer():
    assert TextCheck(ROUGE155)(None) == () and TextCheck(ROUGE155)([1, 2]) == ()


def test_line_count_shortcut_of_newline_splitting():
    """With lines as they are, a text of two or more non-empty lines is never one
    sentence, and the shortcut (a newline left after stripping the ends) agrees with
    counting the lines, on hand-checked texts and on random ones."""
    import random

    check = TextCheck(RougeSettings.from_flags("-n 2"))
    assert check("One. Two.\n") == ("one_sentence",)
    assert check("\n\nOne. Two.\n\n") == ("one_sentence",)
    assert check("One. Two.\n\nThree.") == ()
    assert check("\n") == () and check("") == ()
    slow = TextCheck(RougeSettings.from_flags("-n 2"))
    slow._newline_lines = False
    rng = random.Random(2)
    for _ in range(3000):
        text = "".join(rng.choice(["a", " ", ".", "\n", "\n", "b. ", "U.S. "]) for _ in range(rng.randint(0, 12)))
        assert check(text) == slow(text), repr(text)


def test_the_sentence_end_patterns_find_what_their_definition_finds():
    """The patterns that start with the end's character (fast: the regex engine
    looks for it first) match exactly where the definition, a look-behind then the
    end, does: on hand cases ("U.S.", quotes, full-width ends) and 30,000 random
    strings of letters, ends, quotes, brackets and spaces; the ASCII one on every
    ASCII string."""
    import random
    import re

    from rouge_core import textcheck

    definition = re.compile(r"(?<!\b[A-Za-z])[.!?]['\")\]]*\s+\S|[。！？][」』）”’]*\s*[^\s」』）”’]")
    cases = ["U.S. is", "a. b", "x.y. z", "A.B. C", "end. Next", 'end." Next', "Mr. X", "e.g. this", "1. two",
             "a.\tb", "ab. c", ". x", "a .b", "?! x", "z!) y", "好。好", "好。」 好", "I. A", "_a. b", "é. b"]
    rng = random.Random(18)
    alphabet = "aBz1_é. !?\"')]\t\n。」x"
    cases += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 14))) for _ in range(30_000)]
    for text in cases:
        expected = [m.span() for m in definition.finditer(text)]
        assert [m.span() for m in textcheck._INNER_END.finditer(text)] == expected, text
        if text.isascii():
            assert [m.span() for m in textcheck._INNER_END_ASCII.finditer(text)] == expected, text
