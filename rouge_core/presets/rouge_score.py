"""The `rouge_score` preset: Google's rouge-score 0.1.2 (used by HF evaluate), exactly.

Reproduced from its source (`rouge_score/tokenize.py`, `rouge_scorer.py`,
`scoring.py`), not by calling it:

* **Tokens** (`tokenize.tokenize`): Python's `str.lower()` (Unicode lower case, so
  `É` becomes `é`, which is then a separator), every run of characters outside
  `[a-z0-9]` becomes a space, the text is split on whitespace; with stemming,
  NLTK's `PorterStemmer()` (its default NLTK_EXTENSIONS mode, no WordNet
  exceptions) stems tokens longer than 3 characters; tokens that are not
  `[a-z0-9]+` are dropped.  No stopwords, no truncation.
* **rouge1 .. rouge9**: clipped n-gram overlap over the whole text;
  P = hits / max(candidate n-grams, 1), R = hits / max(reference n-grams, 1).
* **rougeL**: the LCS of the whole texts as one token sequence (newlines are
  just separators): P = LCS / candidate tokens, R = LCS / reference tokens.
* **rougeLsum**: sentences are the non-empty `\\n`-separated lines; per
  reference sentence the union of one LCS with each candidate sentence
  (walk back: diagonal on equal tokens, left only when the left cell is strictly
  greater, else up: the path ROUGE-1.5.5 takes too), each union token counted
  while its count lasts in both texts' unigram tables (`lcs.union_lcs_hits`).
* **F** = 2 * P * R / (P + R) (0 when P + R = 0), in that order of operations;
  nothing is rounded.
* **Several references** (`score_multi`): each reference scored alone, and for
  each metric the reference with the highest F, the first one on ties
  (`np.argmax`), gives P, R and F.  This preset's `best` mode.

Beyond rouge-score, the same semantics extend to the other metric families and
multi-reference modes, with names in its style: `rougeW-1.2` (weighted LCS of
the whole texts, P and R mapped back with f^-1 as ROUGE-1.5.5 does), `rougeS4`,
`rougeSU4`, `rougeS*`, `rougeSU*` (skip-bigrams, as `skip_bigram` counts them),
and the `average` (counts pooled over references, as `-f A`) and `jackknife`
modes.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from rouge_core import kernel as kernel_module
from rouge_core import lcs, names, ngram, skip_bigram
from rouge_core.errors import RougeConfigError
from rouge_core.names import MetricName
from rouge_core.perl_numbers import sequential_sum
from rouge_core.presets.base import Preset, check_derived, package_version, refuse
from rouge_core.sentence_split import splitter
from rouge_core.text import Splitter, Text, lines
from rouge_core.types import MetricStats, PreparedText, ReferenceCounts, best_reference

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
TOKENIZER_VERSION = "rouge_score-0.1.2"

_TOKEN = re.compile(r"[a-z0-9]+")


def parse_rouge_type(name: str) -> MetricName:
    """Read a metric name of the `rouge_score` preset (`rouge_core.names`'s grammar).

    ROUGE-1.5.5's names are read as the same metric (`ROUGE-2` is `rouge2`,
    `ROUGE-L` is `rougeLsum`); `MetricName.tag("rouge_score")` is its name here.

    Example:
        >>> parse_rouge_type("rouge2").n, parse_rouge_type("rougeLsum").summary_level
        (2, True)
        >>> parse_rouge_type("rougeSU*")
        MetricName(family='SU', n=0, weight=None, gap='*', summary_level=None, style='rouge_score')
    """
    metric = names.parse(name)
    metric.tag("rouge_score")  # raises for a metric this preset has no name for
    return metric


@lru_cache(maxsize=1)
def porter_stem():
    """NLTK's `PorterStemmer().stem`, as rouge-score's DefaultTokenizer builds it
    (`porter.PorterStemmer()`: NLTK's default NLTK_EXTENSIONS mode)."""
    from nltk.stem import porter

    return porter.PorterStemmer().stem


@lru_cache(maxsize=1)
def _porter():
    return lru_cache(maxsize=1 << 16)(porter_stem())


def tokenize(sentence: str, stemming: bool = False, lower: bool = True) -> list[str]:
    """rouge-score's `tokenize.tokenize(text, stemmer)` (`lower=False`: a text lower-cased already).

    Example:
        >>> tokenize("The runners' well-known CAFÉ 1,000 runs", stemming=True)
        ['the', 'runner', 'well', 'known', 'caf', '1', '000', 'run']
    """
    tokens = _TOKEN.findall(sentence.lower() if lower else sentence)
    if stemming:
        stem = _porter()
        tokens = [stem(t) if len(t) > 3 else t for t in tokens]
        tokens = [t for t in tokens if _TOKEN.fullmatch(t)]  # its final validity check
    return tokens


class RougeScoreAnalyzer:
    """Sentences and tokens as rouge-score reads them."""

    def __init__(self, *, stemming: bool, split: Splitter = None) -> None:
        self._stemming = stemming
        self._split = split

    def sentences(self, text: Text) -> list[str]:
        """The non-empty lines, cut further by the sentence_split rule when set
        (rougeLsum's sentences); the other metrics see their tokens joined, which
        are the tokens of the whole text.

        Example:
            >>> RougeScoreAnalyzer(stemming=False).sentences("One.\\n\\nTwo  ")
            ['One.', 'Two  ']
        """
        return lines(text, self._split)

    def tokens(self, sentence: str) -> list[str]:
        return tokenize(sentence, self._stemming)


def f1(precision: float, recall: float) -> float:
    """rouge-score's `scoring.fmeasure`, in its order of operations.

    Example:
        >>> f1(0.5, 0.25)
        0.3333333333333333
    """
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


class RougeScoreMetrics:
    """rouge-score's metric semantics under one settings (`Metrics` of `presets.base`)."""

    def __init__(self, settings) -> None:
        self.settings = settings
        self._types = {name: parse_rouge_type(name) for name in settings.metric_tags()}

    def per_reference(self, tag: str, cand: PreparedText, refs: list[PreparedText]) -> list[ReferenceCounts]:
        kind = self._types[tag]
        counts = [_counts(kind, cand, ref) for ref in refs]
        return [ReferenceCounts(*c, self.finish(kind, *c).f_measure) for c in counts]

    def combine(self, tag: str, per_reference: list[ReferenceCounts]) -> MetricStats:
        kind = self._types[tag]
        mode = self.settings.multi_reference
        if mode == "average":  # counts pooled over references, as ROUGE-1.5.5's -f A
            return self.finish(kind, *(sum(column) for column in list(zip(*per_reference))[:3]))
        if mode == "best" or len(per_reference) == 1:
            return self.finish(kind, *best_reference(per_reference)[:3])
        held_out = [
            self.finish(kind, *best_reference(per_reference[:k] + per_reference[k + 1 :])[:3])
            for k in range(len(per_reference))
        ]
        m = len(held_out)
        return MetricStats(*(sequential_sum(column) / m for column in zip(*held_out)))

    @staticmethod
    def finish(kind: MetricName, hits, reference_total, candidate_total) -> MetricStats:
        recall = hits / reference_total if reference_total else 0.0
        precision = hits / candidate_total if candidate_total else 0.0
        if kind.family == "W":  # f^-1 of the weighted ratios, as ROUGE-W reports
            inverse = 1 / float(kind.weight)
            recall, precision = recall**inverse, precision**inverse
        return MetricStats(reference_total, candidate_total, hits, recall, precision, f1(precision, recall))


def _counts(kind: MetricName, cand: PreparedText, ref: PreparedText) -> tuple:
    """(hits, reference total, candidate total) of one metric against one reference."""
    if kind.family == "n":
        table, peer = ref.ngrams(kind.n), cand.ngrams(kind.n)
        return ngram.clipped_hits(table, peer), table.total(), peer.total()
    if kind.family in ("S", "SU"):
        with_unigrams = kind.family == "SU"
        table, peer = (
            ref.skip_bigrams(kind.max_gap, with_unigrams),
            cand.skip_bigrams(kind.max_gap, with_unigrams),
        )
        return skip_bigram.clipped_code_hits(table, peer), table.total(), peer.total()
    clipping = Counter(ref.tokens), Counter(cand.tokens)
    if kind.family == "L" and kind.summary_level:  # rougeLsum: union LCS per reference sentence
        return (
            lcs.union_lcs_hits(ref.sentences, cand.bit_masks(), *clipping),
            len(ref.tokens),
            len(cand.tokens),
        )
    if kind.family == "L":
        # rougeL: the LCS of the whole texts, each one "sentence", whose single
        # LCS the clipping of union_lcs_hits leaves whole.
        whole = [(cand.tokens, cand.text_masks())]
        return lcs.union_lcs_hits([ref.tokens], whole, *clipping), len(ref.tokens), len(cand.tokens)
    # rougeW: the weighted LCS of the whole texts, totals weighted as f(length).
    w = float(kind.weight)
    weights = [k**w for k in range(max(len(ref.tokens), len(cand.tokens)) + 2)]
    hits = lcs.union_wlcs_hits([ref.tokens], [cand.tokens], weights, *clipping)
    return hits, weights[len(ref.tokens)], weights[len(cand.tokens)]



class RougeScore(Preset):
    name = "rouge_score"
    default_multi_reference = "best"
    uses_kernel = True

    def resolve(self, settings):
        refuse(settings, "language", "tokenizer")
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
        given = settings.rouge_types if settings.rouge_types is not None else DEFAULT_ROUGE_TYPES
        if isinstance(given, str):
            given = tuple(n.strip() for n in given.split(","))
        types = [parse_rouge_type(n) for n in given]
        # ROUGE-2 -> rouge2, ROUGE-L -> rougeLsum; in the one metric order (names.ordered), so that
        # the same metrics are the same settings, signature and table in whatever order given.
        tags = tuple(names.ordered([t.tag("rouge_score") for t in types]))
        if not types or len(set(tags)) != len(tags):
            raise RougeConfigError(f"rouge_types must name each metric once; got {list(given)!r}")
        weights = {t.weight for t in types if t.family == "W"}
        gaps = {t.max_gap for t in types if t.family in ("S", "SU")}
        if len(weights) > 1 or len(gaps) > 1:
            raise RougeConfigError("rouge_types may hold one rougeW weight and one skip-bigram gap at most")
        skip_kinds = {t.family == "SU" for t in types if t.family in ("S", "SU")}
        # The ROUGE-1.5.5 fields mirror the metric list, so that cost checks see it.
        derived = dict(
            rouge_types=tags,
            max_ngram=max([t.n for t in types], default=0),
            rouge_l=any(t.family == "L" for t in types),
            wlcs_weight=next(iter(weights), None),
            skip_distance=None if not gaps else "-1" if None in gaps else str(next(iter(gaps))),
            skip_unigrams=skip_kinds == {True},
            skip_both=skip_kinds == {True, False},
        )
        check_derived(settings, derived)
        return derived

    def analyzer(self, settings):
        return RougeScoreAnalyzer(stemming=settings.stemming, split=splitter(settings.sentence_split))

    def metrics(self, settings):
        return RougeScoreMetrics(settings)

    def compiled(self, scorer):
        """rougeN / rougeL / rougeLsum under score_multi's best F run in C
        (rouge_core/_rouge_score_kernel.c); this module's Python is the reference it
        equals, and scores what the kernel hands back (other families and modes,
        texts given as lists of sentences, bad input, pairs over the limits)."""
        settings = scorer.settings
        types = [parse_rouge_type(tag) for tag in scorer.tags]
        if settings.multi_reference != "best" or not all(kernel_module.rouge_score_family(t) for t in types):
            return None
        if getattr(settings, "sentence_split", "newline") != "newline":  # rougeLsum's sentences cut in Python
            return None
        if not kernel_module.rouge_score_kernel_available():
            return None
        return kernel_module.CompiledRougeScore(
            types,
            stem=porter_stem() if settings.stemming else None,
            result_type=MetricStats,
            layout=1,
            max_cells=64 * scorer.max_lcs_cells if settings.rouge_l else None,
        )

    def signature_fields(self, settings, common):
        stem = f"nltk-porter@{package_version('nltk')}" if settings.stemming else "no"
        fields = [
            ("types", ",".join(settings.rouge_types)),
            ("tok", TOKENIZER_VERSION),
            ("stem", stem),
            ("lsum", common["sent"]),
        ]
        return fields + [(key, common[key]) for key in ("mref", "t", "ci")]
