"""Reading and tokenization, against rules stated in ROUGE155.md (hand-checked)."""

import pytest

from rouge_core.errors import RougeInputError
from rouge_core.text import limit_bytes, limit_words, perl_words, sentences, tokenize


def test_lines_are_sentences_and_empty_lines_are_skipped():
    assert sentences("A b\n\nC\r\n  \n") == ["a b", "c\r", "  "]


def test_a_list_of_sentences_treats_newlines_inside_as_spaces():
    assert sentences(["One\ntwo", "", "Three"]) == ["one two", "three"]


def test_only_ascii_capitals_are_lowercased():
    # The Kelvin sign would become "k" under str.lower(); ROUGE sees bytes.
    assert sentences("\u212aELVIN \u00c9T\u00c9") == ["\u212aelvin \u00c9t\u00c9"]


@pytest.mark.parametrize(
    "sentence, tokens",
    [
        ("well-known", ["well", "known"]),
        ("1,000 don't", ["1", "000", "don", "t"]),
        ("caf\u00e9 na\u00efve", ["caf", "na", "ve"]),
        ("$100 -- 5%", ["100", "5"]),
        ("... !!!", []),
    ],
)
def test_tokens_are_runs_of_ascii_letters_and_digits(sentence, tokens):
    assert tokenize(sentence) == tokens


def test_perl_split_counts_a_leading_empty_field():
    assert perl_words(" a  b ") == ["", "a", "b"]
    assert perl_words("   ") == []


def test_word_limit_keeps_whole_sentences_then_cuts():
    assert limit_words(["a b c", "d e f", "g"], 5) == ["a b c", "d e"]
    # a leading space counts as a word, as Perl's split makes it one
    assert limit_words([" a b", "c"], 2) == [" a"]


def test_byte_limit_counts_utf8_bytes_and_may_cut_a_word():
    assert limit_bytes(["abcd", "efgh"], 6) == ["abcd", "ef"]
    assert limit_bytes(["\u00e9\u00e9x"], 3) == ["\u00e9"]  # 2 bytes + half a character


def test_byte_limit_bug_of_rouge_l_never_counts_used_bytes():
    sents = ["abcd", "efgh", "ijklmnop", "q"]
    assert limit_bytes(sents, 6) == ["abcd", "ef"]
    assert limit_bytes(sents, 6, lcs_bug=True) == ["abcd", "efgh", "ijklmn"]


def test_a_text_must_be_a_string_or_a_list_of_strings():
    with pytest.raises(RougeInputError, match="got int"):
        sentences(5)
    with pytest.raises(RougeInputError, match="list of strings"):
        sentences(["ok", 3])
