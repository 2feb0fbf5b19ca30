"""The `unicode` preset: any script's text, scored with ROUGE-1.5.5's semantics.

NFKC, case folding and NFKC again; tokens are runs of letters, marks and digits
of every script, one per character for CJK and Thai (`rouge_core.unicode_text`);
NLTK's Snowball stemmer and a stopword list of the chosen language.  The
metrics, limits, multi-reference modes and rounding are rouge155's.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import partial

from rouge_core import kernel as kernel_module
from rouge_core import unicode_text
from rouge_core.errors import RougeConfigError
from rouge_core.presets.base import Preset, WordAnalyzer, flag_fields, package_version, refuse
from rouge_core.presets.rouge155 import Rouge155Metrics
from rouge_core.sentence_split import splitter
from rouge_core.stopwords import stopwords_for


class Unicode(Preset):
    name = "unicode"
    uses_kernel = True  # its metrics, on texts it reads in Python (see compiled)

    def resolve(self, settings):
        refuse(settings, "rouge_types")
        language = settings.language
        languages = unicode_text.snowball_languages()
        if language is not None and language not in languages:
            raise RougeConfigError(f"unknown language {language!r}; choose one of {languages}")
        if settings.stemming and language is None:
            raise RougeConfigError(
                "stemming in the unicode preset needs a language (its Snowball stemmer): --language "
                f"(rouge.language), one of {languages}, or no stemming (no -m, no --stem)"
            )
        if settings.remove_stopwords:
            stopwords_for(language)  # raises when no list is packaged
        if settings.tokenizer is not None and not callable(settings.tokenizer):
            raise RougeConfigError("tokenizer must be a callable: normalised sentence -> list of tokens")
        return {}

    def analyzer(self, settings):
        return WordAnalyzer(
            partial(unicode_text.sentences, split=splitter(settings.sentence_split, settings.language)),
            settings.tokenizer or unicode_text.tokenize,
            stopwords_for(settings.language) if settings.remove_stopwords else frozenset(),
            unicode_text.snowball_stemmer(settings.language) if settings.stemming else None,
        )

    def metrics(self, settings):
        return Rouge155Metrics(settings)

    def compiled(self, scorer):
        """The compiled kernel computes the metrics (rouge155's) on the texts this preset
        reads in Python, except under -b (its ROUGE-L sentences are cut apart from its
        tokens): then Python scores."""
        if scorer.settings.byte_limit is not None:
            return None
        return kernel_module.CompiledScorer(scorer, read_in_python=True)

    def signature_fields(self, settings, common):
        if settings.tokenizer is None:
            tok = f"{unicode_text.TOKENIZER_VERSION}@regex{package_version('regex')}"
        else:
            tok = "custom:" + _qualified_name(settings.tokenizer)
        fields = [
            ("lang", settings.language or "none"),
            ("norm", f"nfkc-casefold@ucd{unicodedata.unidata_version}"),
            ("tok", tok),
        ]
        stemmer = f"snowball-{settings.language}@nltk{package_version('nltk')}"
        return fields + flag_fields(settings, common, stemmer, "smart")


def _qualified_name(function: Callable) -> str:
    return (
        f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', type(function).__name__)}"
    )
