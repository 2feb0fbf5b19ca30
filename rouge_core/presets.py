"""Presets: named bundles of every convention that changes a ROUGE number.

A preset fixes how a text becomes tokens (sentence rule, normalisation,
tokenizer, stopwords, stemmer) and the metric semantics (which metric families
it names and how, rounding, F formula, which reference "best" picks).  The
metric families themselves (`ngram`, `lcs`, `skip_bigram`) are shared; a preset
only picks them.

=============  ====================================  =====================================  ==============================
               rouge155 (default)                    rouge_score                            unicode
=============  ====================================  =====================================  ==============================
sentences      non-empty `\\n` lines (sentence_split)  non-empty `\\n` lines (rougeLsum only)   non-empty `\\n` lines
normalisation  ASCII A-Z lowercased                  `str.lower()`                          NFKC, casefold, NFKC
tokens         runs of `[a-z0-9]`                    runs of `[a-z0-9]`                     letters/marks/digits of every
                                                                                            script; CJK/Thai per character
stemmer        ROUGE-1.5.5 Porter + WordNet 2.0      NLTK Porter, tokens > 3 chars          NLTK Snowball(language)
               exceptions, tokens > 3 chars
stopwords      SMART list (`-s`)                     none                                   SMART list for English only
limits         `-l` words, `-b` bytes                none (refused)                         as rouge155, after normalising
                                                                                            (`-b` counts UTF-8 bytes)
metrics        ROUGE-N, L (union LCS), W, S, SU      rouge1-9, rougeL (whole text),         as rouge155
                                                     rougeLsum (union LCS), + W, S, SU
best ref       highest rounded recall, first wins    highest F, first wins                  as rouge155
default mref   average (`-f A`)                      best (`score_multi`)                   average
numbers        R, P rounded to 5 decimals, F from    unrounded; F = 2PR/(P+R)               as rouge155
               them (alpha `-p`)
=============  ====================================  =====================================  ==============================
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import cache, partial
from importlib.metadata import version
from typing import TYPE_CHECKING, Protocol

from rouge_core.errors import RougeConfigError
from rouge_core.sentence_split import splitter
from rouge_core.stem import morph_stem
from rouge_core.stopwords import smart_stopwords, stopwords_for
from rouge_core.text import Text, sentences, tokenize

if TYPE_CHECKING:
    from rouge_core.settings import RougeSettings

PRESET_NAMES = ("rouge155", "rouge_score", "unicode")


class Analyzer(Protocol):
    """How a preset reads texts: sentences first (limits cut them), then tokens."""

    def sentences(self, text: Text) -> list[str]: ...

    def tokens(self, sentence: str) -> list[str]: ...


class WordAnalyzer:
    """Sentences; then per sentence its tokens, its stopwords dropped, stemmed."""

    def __init__(
        self,
        sentences: Callable[[Text], list[str]],
        tokenize: Callable[[str], list[str]],
        stopwords: frozenset[str] = frozenset(),
        stem: Callable[[str], str] | None = None,
    ) -> None:
        self.sentences = sentences
        self._tokenize = tokenize
        self._stopwords = stopwords
        self._stem = stem

    def tokens(self, sentence: str) -> list[str]:
        tokens = self._tokenize(sentence)
        if self._stopwords:
            tokens = [t for t in tokens if t not in self._stopwords]
        if self._stem is not None:
            tokens = [self._stem(t) for t in tokens]
        return tokens


class Preset:
    """One preset: its defaults, its checks, its reading, its scorer, its signature."""

    name = ""
    default_multi_reference = "average"

    def resolve(self, settings: RougeSettings) -> dict:
        """Check the settings against the preset; the fields it derives."""
        return {}

    def analyzer(self, settings: RougeSettings) -> Analyzer:
        raise NotImplementedError

    def scorer_class(self) -> type:
        from rouge_core.scoring import RougeScorer

        return RougeScorer

    def signature_parts(self, settings: RougeSettings, common: dict[str, str]) -> list[str]:
        """The signature after the preset's name, from the parts every preset
        shares (`common`: n, L, W, S, limit, sent, mref, alpha, t, ci, v)."""
        raise NotImplementedError

    @staticmethod
    def _flag_parts(
        settings: RougeSettings, common: dict[str, str], stemmer: str, stopwords: str
    ) -> list[str]:
        """The ROUGE-1.5.5 flags' parts, with the preset's stemmer and stopwords."""
        parts = [f"{key}:{common[key]}" for key in ("n", "L", "W", "S")]
        parts += [f"stem:{stemmer if settings.stemming else 'no'}"]
        parts += [f"stop:{stopwords if settings.remove_stopwords else 'no'}"]
        return parts + [f"{key}:{common[key]}" for key in ("limit", "sent", "mref", "alpha", "t", "ci", "v")]


class Rouge155(Preset):
    name = "rouge155"

    def resolve(self, settings):
        _refuse(settings, "rouge_types", "language", "tokenizer")
        return {}

    def analyzer(self, settings):
        # ROUGE-1.5.5's reading (`rouge_core.text`), SMART stopwords (-s), its stemmer (-m).
        return WordAnalyzer(
            partial(sentences, split=splitter(settings.sentence_split)),
            tokenize,
            smart_stopwords() if settings.remove_stopwords else frozenset(),
            morph_stem if settings.stemming else None,
        )

    def signature_parts(self, settings, common):
        return self._flag_parts(settings, common, "porter155+wn2.0", "smart")


class RougeScore(Preset):
    name = "rouge_score"
    default_multi_reference = "best"

    def resolve(self, settings):
        from rouge_core.rouge_score_preset import DEFAULT_ROUGE_TYPES, parse_rouge_type

        _refuse(settings, "language", "tokenizer")
        if settings.remove_stopwords:
            raise RougeConfigError(
                "the rouge_score preset removes no stopwords (rouge-score has no stopword list)"
            )
        if float(settings.alpha) != 0.5:
            raise RougeConfigError("the rouge_score preset computes F1 (alpha 0.5) only, as rouge-score does")
        if settings.word_limit is not None or settings.byte_limit is not None:
            raise RougeConfigError(
                "the rouge_score preset does not truncate texts (rouge-score has no limit)"
            )
        names = settings.rouge_types if settings.rouge_types is not None else DEFAULT_ROUGE_TYPES
        if isinstance(names, str):
            names = tuple(n.strip() for n in names.split(","))
        types = [parse_rouge_type(n) for n in names]
        if not types or len(set(names)) != len(names):
            raise RougeConfigError(f"rouge_types must name each metric once; got {list(names)!r}")
        weights = {t.weight for t in types if t.family == "wlcs"}
        gaps = {t.gap for t in types if t.family == "skip"}
        if len(weights) > 1 or len(gaps) > 1:
            raise RougeConfigError("rouge_types may hold one rougeW weight and one skip-bigram gap at most")
        skip_kinds = {t.with_unigrams for t in types if t.family == "skip"}
        # The ROUGE-1.5.5 fields mirror the metric list, so that cost checks see it.
        derived = dict(
            rouge_types=tuple(names),
            max_ngram=max([t.n for t in types], default=0),
            rouge_l=any(t.family in ("lcs", "lcs_sentences") for t in types),
            wlcs_weight=next(iter(weights), None),
            skip_distance=None if not gaps else "-1" if None in gaps else str(next(iter(gaps))),
            skip_unigrams=skip_kinds == {True},
            skip_both=skip_kinds == {True, False},
        )
        _check_derived(settings, derived)
        return derived

    def analyzer(self, settings):
        from rouge_core.rouge_score_preset import RougeScoreAnalyzer

        return RougeScoreAnalyzer(stemming=settings.stemming, split=splitter(settings.sentence_split))

    def scorer_class(self):
        from rouge_core.rouge_score_preset import RougeScoreScorer

        return RougeScoreScorer

    def signature_parts(self, settings, common):
        from rouge_core.rouge_score_preset import TOKENIZER_VERSION

        stem = f"nltk-porter@{version('nltk')}" if settings.stemming else "no"
        parts = [
            f"types:{','.join(settings.rouge_types)}",
            f"tok:{TOKENIZER_VERSION}",
            f"stem:{stem}",
            f"lsum:{common['sent']}",
        ]
        return parts + [f"{key}:{common[key]}" for key in ("mref", "t", "ci", "v")]


class Unicode(Preset):
    name = "unicode"

    def resolve(self, settings):
        from rouge_core.unicode_text import snowball_languages

        _refuse(settings, "rouge_types")
        language = settings.language
        if language is not None and language not in snowball_languages():
            raise RougeConfigError(f"unknown language {language!r}; choose one of {snowball_languages()}")
        if settings.stemming and language is None:
            raise RougeConfigError("stemming in the unicode preset needs a language (its Snowball stemmer)")
        if settings.remove_stopwords:
            stopwords_for(language)  # raises when no list is packaged
        if settings.tokenizer is not None and not callable(settings.tokenizer):
            raise RougeConfigError("tokenizer must be a callable: normalised sentence -> list of tokens")
        return {}

    def analyzer(self, settings):
        from rouge_core import unicode_text

        return WordAnalyzer(
            partial(unicode_text.sentences, split=splitter(settings.sentence_split, settings.language)),
            settings.tokenizer or unicode_text.tokenize,
            stopwords_for(settings.language) if settings.remove_stopwords else frozenset(),
            unicode_text.snowball_stemmer(settings.language) if settings.stemming else None,
        )

    def signature_parts(self, settings, common):
        from rouge_core.unicode_text import TOKENIZER_VERSION

        if settings.tokenizer is None:
            tok = f"{TOKENIZER_VERSION}@regex{version('regex')}"
        else:
            tok = "custom:" + _qualified_name(settings.tokenizer)
        parts = [
            f"lang:{settings.language or 'none'}",
            f"norm:nfkc-casefold@ucd{unicodedata.unidata_version}",
            f"tok:{tok}",
        ]
        return parts + self._flag_parts(
            settings, common, f"snowball-{settings.language}@nltk{version('nltk')}", "smart"
        )


@cache
def get_preset(name: str) -> Preset:
    """The preset of a name.

    Example:
        >>> get_preset("rouge_score").default_multi_reference
        'best'
    """
    presets = {p.name: p for p in (Rouge155(), RougeScore(), Unicode())}
    if name not in presets:
        raise RougeConfigError(f"unknown preset {name!r}; choose one of {PRESET_NAMES}")
    return presets[name]


def _refuse(settings, *fields: str) -> None:
    for field in fields:
        if getattr(settings, field) is not None:
            raise RougeConfigError(f"{field} does not apply to the {settings.preset} preset")


def _check_derived(settings, derived: dict) -> None:
    """Fields a preset derives may be left at their defaults or equal what it derives."""
    import dataclasses

    defaults = {f.name: f.default for f in dataclasses.fields(settings)}
    for field, value in derived.items():
        given = getattr(settings, field)
        if field != "rouge_types" and given != defaults[field] and given != value:
            raise RougeConfigError(
                f"{field}={given!r} does not apply to the {settings.preset} preset: its metrics come "
                "from rouge_types"
            )


def _qualified_name(function: Callable) -> str:
    return (
        f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', type(function).__name__)}"
    )
