"""Reading, truncating and tokenizing texts exactly as ROUGE-1.5.5 does.

ROUGE-1.5.5 reads SPL files as bytes (`readText` l.1820, `readText_LCS` l.2024 of
the official script): every line is a sentence, empty lines are skipped, ASCII
letters are lowercased, `-l`/`-b` cut the text, then everything outside
`[A-Za-z0-9-]` becomes a space.  The token filter (`createNGram` l.2598) keeps
tokens starting with `[a-z0-9$]`, which drops the `-` tokens, optionally removes
stopwords (`-s`, checked before stemming) and stems tokens longer than three
characters (`-m`).  The net effect is that a token is a maximal run of ASCII
`[a-z0-9]` after lowercasing: every other character, including each byte of a
non-ASCII character, separates tokens.

A text is a `str` (sentences separated by `\\n`) or a list of sentence strings
(a `\\n` inside an element counts as a space, as in a one-sentence-per-line file).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Optional, Union

from rouge_core.errors import RougeInputError

Text = Union[str, Sequence[str]]
Splitter = Optional[Callable[[str], list[str]]]

_TOKEN = re.compile(r"[a-z0-9]+")
# Perl's \s on bytes: space, \t, \n, \r, \f and (since Perl 5.18) \x0B.
_PERL_SPACE = re.compile(r"[ \t\n\r\f\x0b]+")
ASCII_LOWERCASE = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def sentences(text: Text, split: Splitter = None) -> list[str]:
    """Split a text into the sentences ROUGE reads, lowercased as ROUGE does.

    Args:
        text: a string with one sentence per line, or a list of sentences.
        split: cuts each line further (`rouge_core.sentence_split`); None: lines as given.

    Returns:
        The non-empty lines, with ASCII capitals lowercased (`tr/A-Z/a-z/`; a
        Unicode lower() would also change non-ASCII letters).  Whitespace-only
        lines are kept, as ROUGE keeps them.

    Raises:
        RougeInputError: the text is neither a string nor a list of strings.

    Example:
        >>> sentences("The Cat sat.\\n\\nOn the mat")
        ['the cat sat.', 'on the mat']
    """
    return [line.translate(ASCII_LOWERCASE) for line in lines(text, split)]


def lines(text: Text, split: Splitter = None) -> list[str]:
    """The non-empty lines of a text as they are: a string split at `\\n`, or a list
    of sentences (a `\\n` inside one counts as a space).  Every preset reads them so;
    `split` (the `sentence_split` setting's function) then cuts each line further.

    Example:
        >>> lines(["One.", "", "Two\\nthree"])
        ['One.', 'Two three']
    """
    if isinstance(text, str):
        found = text.split("\n")
    elif isinstance(text, Sequence) and all(isinstance(s, str) for s in text):
        found = [s.replace("\n", " ") for s in text]
    else:
        raise RougeInputError(f"a text must be a string or a list of strings; got {type(text).__name__}")
    if split is None:
        return [line for line in found if line]
    return [sentence for line in found if line for sentence in split(line)]


def perl_words(sentence: str) -> list[str]:
    """Perl's `split(/\\s+/, $s)`: a leading separator gives an empty first field
    (which `-l` counts as a word), trailing empty fields are dropped."""
    fields = _PERL_SPACE.split(sentence)
    while fields and not fields[-1]:
        fields.pop()
    return fields


def limit_words(sents: list[str], limit: int) -> list[str]:
    """`-l`: keep whole sentences while the word count stays below `limit`, then
    the first words of the next one (l.1867).  Models are cut as well as peers."""
    kept: list[str] = []
    used = 0
    for s in sents:
        words = perl_words(s)
        if used + len(words) < limit:
            kept.append(s)
            used += len(words)
        else:
            kept.append(" ".join(words[: limit - used]))
            break
    return kept


def limit_bytes(sents: list[str], limit: int, *, lcs_bug: bool = False) -> list[str]:
    """`-b`: keep whole sentences while the byte count stays below `limit`, then
    the first bytes of the next one, which may cut a word (l.1896).

    With `lcs_bug=True` this reproduces `readText_LCS` (l.2096), which never adds
    to its byte counter: every sentence shorter than `limit` bytes is kept up to
    the first one of at least `limit` bytes, which is cut to `limit` bytes.
    ROUGE-L/W use that list for their sentences and recall denominator.
    """
    kept: list[str] = []
    used = 0
    for s in sents:
        raw = s.encode("utf-8")
        if used + len(raw) < limit:
            kept.append(s)
            if not lcs_bug:
                used += len(raw)
        else:
            # A cut inside a multi-byte character leaves bytes that are separators
            # anyway, so dropping them changes no token.
            kept.append(raw[: limit - used].decode("utf-8", "ignore"))
            break
    return kept


def tokenize(sentence: str) -> list[str]:
    """The tokens ROUGE-1.5.5 keeps from one lowercased sentence, before stopword
    removal and stemming.

    Example:
        >>> tokenize("well-known café, 1,000 don't")
        ['well', 'known', 'caf', '1', '000', 'don', 't']
    """
    return _TOKEN.findall(sentence)
