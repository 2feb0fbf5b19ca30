"""Text in any script: the `unicode` preset's normalisation, tokens and stemmers.

ROUGE-1.5.5 keeps only ASCII `[a-z0-9]` runs, so a text in Cyrillic, Arabic or
Chinese has no tokens and scores 0.  This module defines the tokens of the
`unicode` preset, precisely:

1. **Sentences** are the non-empty lines of a text (split on `\\n`), as in
   ROUGE-1.5.5; a list of strings is a list of sentences.
2. **Normalisation** of each sentence: `NFKC(casefold(NFKC(s)))`.  NFKC folds
   compatibility forms (full-width `Ａ１` to `A1`, ligature `ﬁ` to `fi`, `²` to
   `2`) and composes accents (`e` + U+0301 is `é`); casefolding is Unicode's
   language-independent lower case (`Straße` -> `strasse`, `ΣΑΣ` -> `σασ`,
   Turkish `I` -> `i`, not `ı`); the last NFKC recomposes what casefolding
   decomposed.
3. **Tokens**, read left to right:
   * every letter, mark or digit (general categories L, M, N) of a script written
     without spaces between words is a token on its own: Han, Hiragana, Katakana,
     Thai, Lao, Khmer and Myanmar, by Unicode Script_Extensions (so `ー` and `々`
     count); there is no word segmentation, so Chinese, Japanese and Thai are
     scored on characters;
   * otherwise a token is a maximal run of letters, marks and digits (L, M, N)
     that starts with a letter or a digit: `\\w` without the underscore, plus the
     combining marks that Devanagari, Arabic or Hebrew words carry.
   Everything else (spaces, punctuation, symbols, `_`, `-`, `'`) separates
   tokens: `don't` is `don`, `t`, as in ROUGE-1.5.5.
   A `tokenizer` callable (normalised sentence -> list of tokens) replaces step 3,
   e.g. a word segmenter for Chinese or Japanese.
4. **Stopwords** (optional): the packaged list for the language (English only,
   see `rouge_core.stopwords`), removed before stemming.
5. **Stemming** (optional): NLTK's Snowball stemmer for the language (no data
   download needed), applied to every token; digits and other scripts pass
   through unchanged.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache

from rouge_core.errors import RougeConfigError
from rouge_core.text import Splitter, Text, lines

NO_SPACE_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar")
TOKENIZER_VERSION = "unicode-v1"  # bump when the rules above change


def snowball_languages() -> tuple[str, ...]:
    """The languages NLTK's Snowball stemmers cover (its "porter" entry excluded)."""
    from nltk.stem import SnowballStemmer

    return tuple(language for language in SnowballStemmer.languages if language != "porter")


def normalize(sentence: str) -> str:
    """NFKC, casefold, NFKC.

    Example:
        >>> normalize("Ｓtraße ﬁne Café")
        'strasse fine café'
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", sentence).casefold())


def tokenize(sentence: str) -> list[str]:
    """The tokens of a normalised sentence.

    Example:
        >>> tokenize("naïve café, 1,000 don't foo_bar")
        ['naïve', 'café', '1', '000', 'don', 't', 'foo', 'bar']
        >>> tokenize("東京へ行く. ok")
        ['東', '京', 'へ', '行', 'く', 'ok']
    """
    return _token_pattern().findall(sentence)


@cache
def _token_pattern():
    """The token rule, compiled on first use (the `regex` package is heavy to
    import, and only this preset needs it)."""
    import regex  # heavy: on first use

    in_no_space_script = "".join(rf"\p{{scx={script}}}" for script in NO_SPACE_SCRIPTS)
    return regex.compile(
        rf"(?V1)[[\p{{L}}\p{{M}}\p{{N}}]&&[{in_no_space_script}]]"  # one character of a no-space script
        rf"|[[\p{{L}}\p{{N}}]--[{in_no_space_script}]][[\p{{L}}\p{{M}}\p{{N}}]--[{in_no_space_script}]]*"
    )


def sentences(text: Text, split: Splitter = None) -> list[str]:
    """The non-empty lines of a text (cut further by `split`, the sentence_split
    setting's function), normalised.

    Example:
        >>> sentences("Éte\\n\\nÜBER")
        ['éte', 'über']
    """
    return [normalize(line) for line in lines(text, split)]


@cache
def snowball_stemmer(language: str) -> Callable[[str], str]:
    """NLTK's Snowball stemmer for a language, with a cache of its stems."""
    if language not in snowball_languages():
        raise RougeConfigError(
            f"no Snowball stemmer for language {language!r}; choose one of {snowball_languages()}"
        )
    from nltk.stem import SnowballStemmer

    return lru_cache(maxsize=1 << 16)(SnowballStemmer(language).stem)
