"""Presets: named bundles of every convention that changes a ROUGE number.

`PRESETS` maps each name to the object that gives the scorer its semantics
(`presets.base.Preset`: reading, metric semantics, checks, signature fields);
`RougeSettings(preset=...)` names one and `RougeScorer` asks it.

A preset fixes how a text becomes tokens (sentence rule, normalisation,
tokenizer, stopwords, stemmer) and the metric semantics (which metric families
it names and how, rounding, F formula, which reference "best" picks).  The
metric families themselves (`ngram`, `lcs`, `skip_bigram`) are shared; a preset
only picks them.

=============  ====================================  =====================================  ==============================
               rouge155 (default)                    rouge_score                            unicode
=============  ====================================  =====================================  ==============================
sentences      non-empty `\\n` lines (*)               non-empty `\\n` lines (rougeLsum only)   non-empty `\\n` lines (*)
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
(*) and in every preset cut further by the `sentence_split` setting (`rouge_core.sentence_split`).
"""

from __future__ import annotations

from rouge_core.errors import RougeConfigError
from rouge_core.presets.base import Analyzer, Metrics, Preset, WordAnalyzer
from rouge_core.presets.rouge155 import Rouge155
from rouge_core.presets.rouge_score import RougeScore
from rouge_core.presets.unicode import Unicode

PRESETS: dict[str, Preset] = {preset.name: preset for preset in (Rouge155(), RougeScore(), Unicode())}
PRESET_NAMES = tuple(PRESETS)


def get_preset(name: str) -> Preset:
    """The preset of a name.

    Example:
        >>> get_preset("rouge_score").default_multi_reference
        'best'
    """
    if name not in PRESETS:
        raise RougeConfigError(f"unknown preset {name!r}; choose one of {PRESET_NAMES}")
    return PRESETS[name]


__all__ = ["PRESETS", "PRESET_NAMES", "Analyzer", "Metrics", "Preset", "WordAnalyzer", "get_preset"]
