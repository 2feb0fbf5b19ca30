"""ROUGE-1.5.5's stemming (`-m`): WordNet 2.0 exceptions, then the script's Porter stemmer.

`MorphStem` (l.2581 of the script) returns a token's base form from the WordNet
exception table when it has one (`best` -> `well`, `geese` -> `goose`), and
otherwise applies `stem` (l.3207): Martin Porter's Perl reference stemmer with
Chin-Yew Lin's 2004 change to step 4, where `ment` and `ent` are tried after the
main suffix list as separate, sequential rules (so `governmental` loses `al`,
then `ment`: `govern`).  It is not NLTK's Porter stemmer.  Callers stem only
tokens longer than three characters (l.2625), which `morph_stem` does here.

The regular expressions below are the script's, character for character, and
the steps keep its order; Perl's `$`` (the text before the match) is
`word[: m.start()]`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from rouge_core.text import ASCII_LOWERCASE

_c = "[^aeiou]"  # consonant
_v = "[aeiouy]"  # vowel
_C = f"{_c}[^aeiouy]*"  # consonant sequence
_V = f"{_v}[aeiou]*"  # vowel sequence
_MGR0 = re.compile(f"^({_C})?{_V}{_C}")  # [C]VC... is m>0
_MEQ1 = re.compile(f"^({_C})?{_V}{_C}({_V})?$")  # [C]VC[V] is m=1
_MGR1 = re.compile(f"^({_C})?{_V}{_C}{_V}{_C}")  # [C]VCVC... is m>1
_VOWEL_IN_STEM = re.compile(f"^({_C})?{_v}")
_CVC = re.compile(f"^{_C}{_v}[^aeiouwxy]$")

_STEP1A = re.compile("(ss|i)es$")
_STEP1A_S = re.compile("([^s])s$")
_STEP1B_DOUBLE = re.compile(r"([^aeiouylsz])\1$")
_STEP1B_SUFFIX = re.compile("(ed|ing)$")
_STEP1B_E = re.compile("(at|bl|iz)$")
_STEP2 = re.compile(
    "(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|ator|alism"
    "|iveness|fulness|ousness|aliti|iviti|biliti|logi)$"
)
_STEP2_LIST = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "logi": "log",
}
_STEP3 = re.compile("(icate|ative|alize|iciti|ical|ful|ness)$")
_STEP3_LIST = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}
_STEP4 = re.compile("(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)$")
_STEP4_MENT = re.compile("ment$")
_STEP4_ENT = re.compile("ent$")
_STEP4_ION = re.compile("(s|t)(ion)$")


def porter_stem(word: str) -> str:
    """ROUGE-1.5.5's `stem()`: Porter's algorithm with the script's step-4 change.

    Example:
        >>> [porter_stem(w) for w in ("governmental", "running", "ponies", "yelling")]
        ['govern', 'run', 'poni', 'yell']
    """
    w = word
    if len(w) < 3:
        return w
    # An initial y is a consonant: make it Y so that the patterns never take it for a vowel.
    initial_y = w[0] == "y"
    if initial_y:
        w = "Y" + w[1:]

    # Step 1a
    if m := _STEP1A.search(w):
        w = w[: m.start()] + m.group(1)
    elif m := _STEP1A_S.search(w):
        w = w[: m.start()] + m.group(1)
    # Step 1b
    if w.endswith("eed"):
        if _MGR0.search(w[:-3]):
            w = w[:-1]
    elif m := _STEP1B_SUFFIX.search(w):
        stem = w[: m.start()]
        if _VOWEL_IN_STEM.search(stem):
            w = stem
            if _STEP1B_E.search(w):
                w += "e"
            elif _STEP1B_DOUBLE.search(w):
                w = w[:-1]
            elif _CVC.search(w):
                w += "e"
    # Step 1c
    if w.endswith("y") and _VOWEL_IN_STEM.search(w[:-1]):
        w = w[:-1] + "i"
    # Step 2
    if m := _STEP2.search(w):
        stem = w[: m.start()]
        if _MGR0.search(stem):
            w = stem + _STEP2_LIST[m.group(1)]
    # Step 3
    if m := _STEP3.search(w):
        stem = w[: m.start()]
        if _MGR0.search(stem):
            w = stem + _STEP3_LIST[m.group(1)]
    # Step 4, as modified by CYL on 02/14/2004: three sequential rules, so that a
    # word can lose, say, "al" and then "ment".
    if m := _STEP4.search(w):
        stem = w[: m.start()]
        if _MGR1.search(stem):
            w = stem
    if m := _STEP4_MENT.search(w):
        stem = w[: m.start()]
        if _MGR1.search(stem):
            w = stem
    if m := _STEP4_ENT.search(w):
        stem = w[: m.start()]
        if _MGR1.search(stem):
            w = stem
    elif m := _STEP4_ION.search(w):
        stem = w[: m.start()] + m.group(1)
        if _MGR1.search(stem):
            w = stem
    # Step 5
    if w.endswith("e"):
        stem = w[:-1]
        if _MGR1.search(stem) or (_MEQ1.search(stem) and not _CVC.search(stem)):
            w = stem
    if w.endswith("ll") and _MGR1.search(w):
        w = w[:-1]

    if initial_y:
        w = "y" + w[1:]
    return w


@lru_cache(maxsize=1)
def wordnet_exceptions() -> dict[str, str]:
    """The WordNet 2.0 exception table ROUGE-1.5.5 consults (5,930 forms)."""
    data = resources.files("rouge_core") / "data" / "wordnet-2.0-exc.tsv"
    lines = data.read_text(encoding="utf-8").splitlines()[1:]
    return dict(line.split("\t") for line in lines)


# Vocabularies are Zipfian, so a memo answers nearly every call; bounded so that
# adversarial input (millions of distinct tokens) cannot grow it without limit.
@lru_cache(maxsize=1 << 17)
def morph_stem(token: str) -> str:
    """What `-m` does to a token: tokens of three characters or fewer stay as they
    are; otherwise the WordNet exception if there is one, else `porter_stem`.

    Example:
        >>> [morph_stem(w) for w in ("ran", "better", "geese", "cats", "governmental")]
        ['ran', 'well', 'goose', 'cat', 'govern']
    """
    if len(token) <= 3:
        return token
    token = token.translate(ASCII_LOWERCASE)  # MorphStem's tr/A-Z/a-z/
    exception = wordnet_exceptions().get(token)
    return exception if exception is not None else porter_stem(token)
