"""Packaged stopword lists.

Only lists that ship inside this package are used: nothing is downloaded at run
time (NLTK's stopwords corpus would need a download).  ROUGE-1.5.5's SMART list
(`data/smart_common_words.txt`, 598 English words, see `data/NOTICE.md`) is the
only one packaged, so stopword removal is available for English only; asking for
another language's stopwords is an error rather than a silent no-op.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from rouge_core.errors import RougeConfigError

PACKAGED_LISTS = {"english": "smart_common_words.txt"}


@lru_cache(maxsize=1)
def smart_stopwords() -> frozenset[str]:
    """The SMART stopword list ROUGE-1.5.5 removes under `-s` (598 entries)."""
    data = resources.files("rouge_core") / "data" / "smart_common_words.txt"
    return frozenset(data.read_text(encoding="ascii").split("\n")) - {""}


def stopwords_for(language: str | None) -> frozenset[str]:
    """The packaged stopword list of a language.

    Raises:
        RougeConfigError: no list is packaged for that language.

    Example:
        >>> "the" in stopwords_for("english")
        True
    """
    if language not in PACKAGED_LISTS:
        raise RougeConfigError(
            f"no stopword list is packaged for language {language!r} (only {sorted(PACKAGED_LISTS)}); "
            "score without stopword removal"
        )
    return smart_stopwords()
