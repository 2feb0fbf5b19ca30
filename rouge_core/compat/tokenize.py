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


def ensure_str(text, encoding: str = "utf-8", errors: str = "strict") -> str:
    """six.ensure_str, which rouge-score calls on texts and rouge types: a str as it is,
    bytes decoded (UTF-8, strictly: TensorFlow datasets yield bytes), anything else a
    TypeError.

    Example:
        >>> ensure_str(b"caf\\xc3\\xa9"), ensure_str("x")
        ('café', 'x')
    """
    if type(text) is str:
        return text
    if isinstance(text, bytes):
        return text.decode(encoding, errors)
    if not isinstance(text, str):
        raise TypeError(f"not expecting type '{type(text)}'")
    return text


def tokenize(text: str, stemmer=None) -> list[str]:
    """The tokens of a text, as rouge-score's `tokenize.tokenize(text, stemmer)`
    (bytes lower-cased as bytes, then decoded, as rouge-score does).

    Example:
        >>> tokenize("The runners' well-known CAFÉ, 1,000 runs")
        ['the', 'runners', 'well', 'known', 'caf', '1', '000', 'runs']
        >>> tokenize(b"The CAF\\xc3\\x89")
        ['the', 'caf']
    """
    text = NON_ALPHANUM_RE.sub(" ", ensure_str(text.lower()))
    tokens = SPACES_RE.split(text)
    if stemmer:
        tokens = [ensure_str(stemmer.stem(x)) if len(x) > 3 else x for x in tokens]
    return [x for x in tokens if VALID_TOKEN_RE.match(x)]
