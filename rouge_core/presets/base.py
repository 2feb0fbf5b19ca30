"""What a preset is: the interface every preset fills in, and the pieces they share.

A preset gives the scorer three things, all from the settings (a
`rouge_core.settings.RougeSettings`, which imports this package, so it is not
imported here):

* `analyzer(settings)`: how a text becomes sentences and tokens;
* `metrics(settings)`: the metric semantics, an object with `per_reference`
  (each reference's counts) and `combine` (the references' counts into the
  document's `MetricStats`);
* `signature_fields(settings, common)`: what the signature says about it.

and checks and completes the settings (`resolve`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

from rouge_core.errors import RougeConfigError
from rouge_core.text import Text
from rouge_core.types import MetricStats, PreparedText, ReferenceCounts


class Analyzer(Protocol):
    """How a preset reads texts: sentences first (limits cut them), then tokens."""

    def sentences(self, text: Text) -> list[str]: ...

    def tokens(self, sentence: str) -> list[str]: ...


class Metrics(Protocol):
    """A preset's metric semantics for one scorer (one settings)."""

    def per_reference(self, tag: str, cand: PreparedText, refs: list[PreparedText]) -> list[ReferenceCounts]:
        """One metric's counts of the candidate against each reference."""
        ...

    def combine(self, tag: str, per_reference: list[ReferenceCounts]) -> MetricStats:
        """The document's scores from its references' counts (the multi-reference mode)."""
        ...


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
    """One preset: its defaults, its checks, its reading, its semantics, its signature."""

    name = ""
    default_multi_reference = "average"
    uses_kernel = False  # whether the compiled kernel (rouge_core.kernel) scores this preset

    def resolve(self, settings) -> dict:
        """Check the settings against the preset; the fields it derives."""
        return {}

    def analyzer(self, settings) -> Analyzer:
        raise NotImplementedError

    def metrics(self, settings) -> Metrics:
        raise NotImplementedError

    def compiled(self, scorer):
        """The compiled kernel's scorer for `scorer` (with `score_batch(pairs)`), or
        None where this preset's settings are scored in Python."""
        return None

    def signature_fields(self, settings, common: dict[str, str]) -> list[tuple[str, str]]:
        """The signature's fields after the preset's name and before the version,
        from the fields every preset shares (`common`: n, L, W, S, limit, sent,
        mref, alpha, t, ci)."""
        raise NotImplementedError


def flag_fields(settings, common: dict[str, str], stemmer: str, stopwords: str) -> list[tuple[str, str]]:
    """The ROUGE-1.5.5 flags' signature fields, with the preset's stemmer and stopwords."""
    fields = [(key, common[key]) for key in ("n", "L", "W", "S")]
    fields.append(("stem", stemmer if settings.stemming else "no"))
    fields.append(("stop", stopwords if settings.remove_stopwords else "no"))
    return fields + [(key, common[key]) for key in ("limit", "sent", "mref", "alpha", "t", "ci")]


def refuse(settings, *fields: str) -> None:
    """Settings fields that must be None under this preset."""
    for field in fields:
        if getattr(settings, field) is not None:
            raise RougeConfigError(f"{field} does not apply to the {settings.preset} preset")


def check_derived(settings, derived: dict) -> None:
    """Fields a preset derives may be left at their defaults or equal what it derives."""
    defaults = {f.name: f.default for f in dataclasses.fields(settings)}
    for field, value in derived.items():
        given = getattr(settings, field)
        if field != "rouge_types" and given != defaults[field] and given != value:
            raise RougeConfigError(
                f"{field}={given!r} does not apply to the {settings.preset} preset: its metrics come "
                "from rouge_types"
            )


def package_version(name: str) -> str:
    """An installed package's version, for signatures (importlib.metadata is read
    only when a signature is made: it costs import time)."""
    from importlib.metadata import version

    return version(name)
