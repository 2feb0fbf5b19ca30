"""rouge-score's `rouge_score.tokenize`: its regular expressions and `tokenize(text, stemmer)`.

Lower-case (Python's `str.lower`), every run of characters outside `[a-z0-9]` becomes
a space, split on whitespace; with a stemmer, tokens longer than 3 characters are
stemmed; tokens that are not `[a-z0-9]+` are dropped.
"""

from __future__ import annotations

import re

NON_ALPHANUM_PATTERN = r"[^a-z0-9]+"
NON_ALPHANUM_RE = re.compile(NON_ALPHANUM_PATTERN)
SPACES_PATTERN = r"\s+"
SPACES_RE = re.compile(SPACES_PATTERN)
VALID_TOKEN_PATTERN = r"^[a-z0-9]+$"
VALID_TOKEN_RE = re.compile(VALID_TOKEN_PATTERN)


def tokenize(text: str, stemmer=None) -> list[str]:
    """The tokens of a text, as rouge-score's `tokenize.tokenize(text, stemmer)`.

    Example:
        >>> tokenize("The runners' well-known CAFÉ, 1,000 runs")
        ['the', 'runners', 'well', 'known', 'caf', '1', '000', 'runs']
    """
    text = NON_ALPHANUM_RE.sub(" ", text.lower())
    tokens = SPACES_RE.split(text)
    if stemmer:
        tokens = [stemmer.stem(x) if len(x) > 3 else x for x in tokens]
    return [x for x in tokens if VALID_TOKEN_RE.match(x)]
