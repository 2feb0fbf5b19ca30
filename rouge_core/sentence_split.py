"""How a text is cut into sentences: the `sentence_split` setting.

Summary-level ROUGE-L (ROUGE-1.5.5's ROUGE-L and ROUGE-W, rouge-score's
rougeLsum) takes the union of LCS matches sentence by sentence, so the same
words give different numbers under different sentence boundaries: on 1,000
CNN/DM pairs, ROUGE-L is 21.03 with one sentence per line and 26.93 split at
sentence ends.  Every other metric (ROUGE-N, S, SU, rouge-score's whole-text
rougeL) sees only the tokens and is unchanged.  The rule is one setting, in the
signature and the table legend:

* ``"newline"`` (the default): the sentences are the text's non-empty lines, or
  the list items when a text is a list of sentences, as ROUGE-1.5.5 and
  rouge-score read them.  Nothing else is split.
* ``"sep:STR"``: each of those lines is cut again at every occurrence of STR (not
  kept), e.g. ``"sep:<q>"`` for the CNN/DM preprocessing of BertSum/PreSumm
  (files2rouge's ``--sentence-sep``).  Several separators are joined with
  ``|``: ``"sep: . | ? | ! "`` cuts PTB-tokenized text (such as SimCLS's
  outputs) after every sentence-final token.
* ``"sentencex"``: each line is cut by the `sentencex` sentence segmenter
  (Wikimedia; rule-based, about 300 languages, no model download), in English,
  or in the unicode preset's language.

With "sep:" and "sentencex" each piece is stripped of surrounding whitespace and
empty pieces are dropped (ROUGE-1.5.5's `-l` counts a leading space as a word).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache, lru_cache

from rouge_core.errors import RougeConfigError

DEFAULT = "newline"
# Characters a separator cannot hold (the signature shows it, a tab aside, as it is):
# C0 and C1 controls, line and paragraph separators, bidirectional overrides, surrogates.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
SEPARATOR_PREFIX = "sep:"
SENTENCEX = "sentencex"

# Snowball language names (the unicode preset's `language`) -> sentencex's language codes.
_LANGUAGE_CODES = {
    "arabic": "ar", "armenian": "hy", "basque": "eu", "catalan": "ca", "danish": "da", "dutch": "nl",
    "english": "en", "finnish": "fi", "french": "fr", "german": "de", "greek": "el", "hindi": "hi",
    "hungarian": "hu", "indonesian": "id", "irish": "ga", "italian": "it", "lithuanian": "lt",
    "nepali": "ne", "norwegian": "no", "portuguese": "pt", "romanian": "ro", "russian": "ru",
    "serbian": "sr", "spanish": "es", "swedish": "sv", "tamil": "ta", "turkish": "tr", "yiddish": "yi",
}


def check(rule: object) -> str:
    """The rule, or a RougeConfigError saying what the choices are.

    Example:
        >>> check("sep: . ")
        'sep: . '
    """
    if rule == DEFAULT or rule == SENTENCEX:
        return rule
    if isinstance(rule, str) and rule.startswith(SEPARATOR_PREFIX) and len(rule) > len(SEPARATOR_PREFIX):
        if "\n" in rule:
            raise RougeConfigError("sentence_split 'sep:STR': STR cannot hold a newline (lines are sentences already)")
        control = _CONTROL.search(rule)
        if control:
            raise RougeConfigError(
                f"sentence_split 'sep:STR': STR cannot hold a control character ({ascii(control.group())[1:-1]}): "
                "it would reach the signature, the tables and the terminal as it is"
            )
        if not separators(rule):
            raise RougeConfigError(f"sentence_split {rule!r} names no separator")
        return rule
    raise RougeConfigError(
        'sentence_split must be "newline" (sentences as given, one per line), "sep:STR" '
        '(also split at every STR; several as "sep: . | ? "), or "sentencex" (a sentence segmenter); '
        f"got {rule!r}"
    )


def describe(rule: str) -> str:
    """The rule as the signature shows it: versioned where a library decides.

    Example:
        >>> describe("sep: . ")
        'sep:" . "'
        >>> describe("sep: . | ? ")
        'sep:[" . ", " ? "]'
    """
    if rule == SENTENCEX:
        from importlib.metadata import version  # only here: importing rouge_core stays light

        return f"sentencex@{version('sentencex')}"
    if rule.startswith(SEPARATOR_PREFIX):
        # JSON; several separators as a list, so no "|" (it separates the signature's parts).
        seps = separators(rule)
        shown = seps[0] if len(seps) == 1 else seps
        return "sep:" + json.dumps(shown, ensure_ascii=False)
    return rule


def separators(rule: str) -> list[str]:
    """The separators of a "sep:" rule.

    Example:
        >>> separators("sep: . | ? ")
        [' . ', ' ? ']
    """
    return [sep for sep in rule[len(SEPARATOR_PREFIX):].split("|") if sep]


def legend(rule: str) -> str:
    """One sentence for a table's legend."""
    if rule == SENTENCEX:
        return "Sentences: each line split by the sentencex segmenter (--sentence-split sentencex)."
    if rule.startswith(SEPARATOR_PREFIX):
        seps = " or ".join(json.dumps(sep, ensure_ascii=False) for sep in separators(rule))
        return f"Sentences: each line also split at {seps} (--sentence-split '{rule}')."
    return "Sentences: as given, one per line (--sentence-split newline)."


def splitter(rule: str, language: str | None = None) -> Callable[[str], list[str]] | None:
    """A function from one line to its sentences, or None for "newline" (lines as they are).

    Example:
        >>> splitter("sep: . ")("a b . c d .")
        ['a b', 'c d .']
        >>> splitter("sep: . | ? ")("a ? b . c")
        ['a', 'b', 'c']
        >>> splitter("sentencex")("He came. She left.")
        ['He came.', 'She left.']
    """
    rule = check(rule)
    if rule == DEFAULT:
        return None
    if rule == SENTENCEX:
        return _sentencex(_LANGUAGE_CODES.get(language or "english", "en"))
    pattern = re.compile("|".join(re.escape(sep) for sep in sorted(separators(rule), key=len, reverse=True)))

    def at_separator(line: str) -> list[str]:
        return [piece.strip() for piece in pattern.split(line) if piece.strip()]

    return at_separator


@cache
def _sentencex(code: str) -> Callable[[str], list[str]]:
    try:
        from sentencex import segment
    except ImportError as err:  # a declared dependency; only a broken install lands here
        raise RougeConfigError("sentence_split 'sentencex' needs the sentencex package (pip install sentencex)") from err

    def pieces(line: str) -> list[str]:
        return [s.strip() for s in segment(code, line) if s.strip()]

    # References repeat once per system: a short line's pieces are kept, a bounded
    # number of them (CACHED_LINES x CACHED_CHARS: at most 8 Mi characters, and their
    # pieces), so memory never grows with the input (a cache of every line up to
    # max_text_bytes held 785 MB where splitting at newlines held 262).
    cached = lru_cache(maxsize=CACHED_LINES)(pieces)

    def split(line: str) -> list[str]:
        return cached(line) if len(line) <= CACHED_CHARS else pieces(line)

    return split


CACHED_LINES = 4096
CACHED_CHARS = 2048
