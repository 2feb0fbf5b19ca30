"""Texts a setting reads badly, found before anyone trusts a 0.00.

Two checks, each cheap enough to run on every scored text:

* **unreadable**: the text has letters, but the preset's tokens keep fewer than
  half of them (none at all, for a text in a script the preset does not read:
  ROUGE-1.5.5 and rouge-score keep only ASCII `[a-z0-9]`, so Russian or Chinese
  text has no tokens and scores 0).  Counted on the tokens before stopwords and
  stemming (a stemmer shortens words; that is not a loss).  The fix is
  ``--preset unicode``.  ASCII texts are always readable, so they cost one
  `str.isascii()`.
* **one sentence**: the text is read as one sentence but holds two or more
  sentence ends (".", "!" or "?" followed by a space and more text, not after a
  lone letter as in "U.S."; or a full-width "。", "！", "？" followed by more
  text), and the setting has a metric that depends on
  sentences (summary-level ROUGE-L or ROUGE-W, rougeLsum).  The fix is
  ``--sentence-split`` (e.g. "sentencex", or "sep: . " for PTB-tokenized text).
"""

from __future__ import annotations

import re
from functools import partial

from rouge_core import names
from rouge_core.presets import get_preset
from rouge_core.sentence_split import splitter
from rouge_core.text import Text, lines

UNREADABLE = "unreadable"
ONE_SENTENCE = "one_sentence"
KINDS = (UNREADABLE, ONE_SENTENCE)
KEPT_LETTERS = 0.5  # fewer kept letters than this share: unreadable

FIXES = {
    UNREADABLE: "--preset unicode (tokens in every script; with stemming also --language, e.g. russian)",
    ONE_SENTENCE: '--sentence-split sentencex (or "sep: . | ? | ! " for PTB-tokenized text)',
}
# ".", "!" or "?" then a space and more text (not after a lone letter, as in "U.S."), or
# a full-width end ("。", "！", "？": Chinese and Japanese) then more text, spaced or not.
# Each pattern starts with the end's character, which the regex engine looks for
# before it tries anything else (a look-behind first made it try every position:
# 6.6 us a CNN/DM text); the look-behind then checks the two characters before it.
_ASCII_END = r"[.!?](?<!\b[A-Za-z][.!?])['\")\]]*\s+\S"
_INNER_END = re.compile(_ASCII_END + r"|[。！？][」』）”’]*\s*[^\s」』）”’]")
_INNER_END_ASCII = re.compile(_ASCII_END)  # an ASCII text has no full-width end: 0.9 us


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


class TextCheck:
    """The checks for one RougeSettings.

    Example:
        >>> from rouge_core import RougeSettings
        >>> check = TextCheck(RougeSettings.from_flags("-n 2"))
        >>> check("Привет, мир"), check("One. Two. Three."), check(["One.", "Two."])
        (('unreadable',), ('one_sentence',), ())
    """

    def __init__(self, settings) -> None:
        plain = settings.replace(stemming=False, remove_stopwords=False)
        self._analyzer = get_preset(settings.preset).analyzer(plain)
        # The unicode preset's own tokenizer keeps every letter; a custom one may not.
        self._letters_kept_always = settings.preset == "unicode" and settings.tokenizer is None
        # Summary-level ROUGE-L/W and rougeLsum read sentences; the other metrics do not.
        self._sentence_metrics = any(names.parse(t).summary_level for t in settings.metric_tags())
        # The ASCII presets' sentences are their lines (cut by the split rule), lower-cased
        # or not, which neither count nor the sentence-end pattern sees: an ASCII text
        # is checked on its lines alone (most texts; unicode's sentences may differ).
        self._ascii_lines = (
            partial(lines, split=splitter(settings.sentence_split))
            if settings.preset in ("rouge155", "rouge_score") and settings.tokenizer is None
            else None
        )
        # Lines as they are ("newline"): a text has two or more non-empty lines exactly
        # when a "\n" is left once the ones at its ends are stripped (no list of lines made).
        self._newline_lines = self._ascii_lines is not None and splitter(settings.sentence_split) is None

    def __call__(self, text: Text) -> tuple[str, ...]:
        """The kinds of problem of one text: () for most texts."""
        if not isinstance(text, (str, list, tuple)):
            return ()
        if self._ascii_lines is not None and isinstance(text, str) and text.isascii():
            if not self._sentence_metrics or (self._newline_lines and "\n" in text.strip("\n")):
                return ()
            try:
                found_lines = self._ascii_lines(text)
            except Exception:
                return ()
            one = len(found_lines) == 1 and _INNER_END_ASCII.search(found_lines[0])
            return (ONE_SENTENCE,) if one else ()
        found = []
        try:
            sentences = self._analyzer.sentences(text)
        except Exception:  # not a text: the scorer reports it as an error row
            return ()
        joined = text if isinstance(text, str) else " ".join(text)
        if not (joined.isascii() or self._letters_kept_always):
            letters = _letters(joined)
            if letters:
                kept = sum(_letters(t) for s in sentences for t in self._analyzer.tokens(s))
                if kept < KEPT_LETTERS * letters:
                    found.append(UNREADABLE)
        if self._sentence_metrics and len(sentences) == 1 and _INNER_END.search(sentences[0]):
            found.append(ONE_SENTENCE)
        return tuple(found)
