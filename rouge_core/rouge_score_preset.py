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
from typing import NamedTuple

from rouge_core import lcs, ngram, skip_bigram
from rouge_core.errors import RougeConfigError
from rouge_core.resampling import sequential_sum
from rouge_core.scoring import MetricStats, PreparedText, ReferenceCounts, RougeScorer, _best
from rouge_core.text import Splitter, Text, lines

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
TOKENIZER_VERSION = "rouge_score-0.1.2"

_TOKEN = re.compile(r"[a-z0-9]+")
_ROUGE_TYPE = re.compile(r"rouge(?:(?P<n>[1-9])|(?P<l>Lsum|L)|W-(?P<w>\d+\.?\d*)|(?P<s>SU?)(?P<gap>\d+|\*))")


class RougeType(NamedTuple):
    """One metric of the preset, parsed from its name."""

    name: str
    family: str  # "n", "lcs" (whole text), "lcs_sentences", "wlcs" (whole text), "skip"
    n: int = 0
    weight: str | None = None
    gap: int | None = None  # skip-bigram gap limit, None for `*`
    with_unigrams: bool = False


def parse_rouge_type(name: str) -> RougeType:
    """Read a metric name of the `rouge_score` preset.

    Example:
        >>> parse_rouge_type("rouge2").n, parse_rouge_type("rougeLsum").family
        (2, 'lcs_sentences')
        >>> parse_rouge_type("rougeSU*")
        RougeType(name='rougeSU*', family='skip', n=0, weight=None, gap=None, with_unigrams=True)
    """
    match = _ROUGE_TYPE.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise RougeConfigError(
            f"unknown rouge type {name!r}: use rouge1..rouge9, rougeL, rougeLsum, "
            "rougeW-<weight> (e.g. rougeW-1.2), rougeS<gap>/rougeSU<gap> (e.g. rougeSU4, rougeS*)"
        )
    if match["n"]:
        return RougeType(name, "n", n=int(match["n"]))
    if match["l"]:
        return RougeType(name, "lcs" if match["l"] == "L" else "lcs_sentences")
    if match["w"]:
        if float(match["w"]) <= 0:
            raise RougeConfigError(f"the weight of {name!r} must be > 0")
        return RougeType(name, "wlcs", weight=match["w"])
    gap = None if match["gap"] == "*" else int(match["gap"])
    return RougeType(name, "skip", gap=gap, with_unigrams=match["s"] == "SU")


@lru_cache(maxsize=1)
def _porter():
    from nltk.stem import porter

    return lru_cache(maxsize=1 << 16)(porter.PorterStemmer().stem)


def tokenize(sentence: str, stemming: bool = False) -> list[str]:
    """rouge-score's `tokenize.tokenize(text, stemmer)`.

    Example:
        >>> tokenize("The runners' well-known CAFÉ 1,000 runs", stemming=True)
        ['the', 'runner', 'well', 'known', 'caf', '1', '000', 'run']
    """
    tokens = _TOKEN.findall(sentence.lower())
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


class RougeScoreScorer(RougeScorer):
    """`RougeScorer` with rouge-score's metric semantics; `RougeScorer(settings)`
    returns one for `rouge_score` settings."""

    def __init__(self, settings, **limits) -> None:
        super().__init__(settings, **limits)
        self._types = {name: parse_rouge_type(name) for name in self.tags}

    def _per_reference(self, tag: str, cand: PreparedText, refs: list[PreparedText]) -> list[ReferenceCounts]:
        kind = self._types[tag]
        counts = [_counts(kind, cand, ref) for ref in refs]
        return [ReferenceCounts(*c, self._finish_rs(kind, *c).f_measure) for c in counts]

    def _combine(self, tag: str, per_reference: list[ReferenceCounts]) -> MetricStats:
        kind = self._types[tag]
        mode = self.settings.multi_reference
        if mode == "average":  # counts pooled over references, as ROUGE-1.5.5's -f A
            return self._finish_rs(kind, *(sum(column) for column in list(zip(*per_reference))[:3]))
        if mode == "best" or len(per_reference) == 1:
            return self._finish_rs(kind, *_best(per_reference)[:3])
        held_out = [
            self._finish_rs(kind, *_best(per_reference[:k] + per_reference[k + 1 :])[:3])
            for k in range(len(per_reference))
        ]
        m = len(held_out)
        return MetricStats(*(sequential_sum(column) / m for column in zip(*held_out)))

    @staticmethod
    def _finish_rs(kind: RougeType, hits, reference_total, candidate_total) -> MetricStats:
        recall = hits / reference_total if reference_total else 0.0
        precision = hits / candidate_total if candidate_total else 0.0
        if kind.family == "wlcs":  # f^-1 of the weighted ratios, as ROUGE-W reports
            inverse = 1 / float(kind.weight)
            recall, precision = recall**inverse, precision**inverse
        return MetricStats(reference_total, candidate_total, hits, recall, precision, f1(precision, recall))


def _counts(kind: RougeType, cand: PreparedText, ref: PreparedText) -> tuple:
    """(hits, reference total, candidate total) of one metric against one reference."""
    if kind.family == "n":
        table, peer = ref.ngrams(kind.n), cand.ngrams(kind.n)
        return ngram.clipped_hits(table, peer), table.total(), peer.total()
    if kind.family == "skip":
        table, peer = (
            ref.skip_bigrams(kind.gap, kind.with_unigrams),
            cand.skip_bigrams(kind.gap, kind.with_unigrams),
        )
        return skip_bigram.clipped_code_hits(table, peer), table.total(), peer.total()
    clipping = Counter(ref.tokens), Counter(cand.tokens)
    if kind.family == "lcs_sentences":  # rougeLsum: union LCS per reference sentence
        return (
            lcs.union_lcs_hits(ref.sentences, cand.bit_masks(), *clipping),
            len(ref.tokens),
            len(cand.tokens),
        )
    if kind.family == "lcs":
        # rougeL: the LCS of the whole texts, each one "sentence", whose single
        # LCS the clipping of union_lcs_hits leaves whole.
        whole = [(cand.tokens, _whole_text_masks(cand))]
        return lcs.union_lcs_hits([ref.tokens], whole, *clipping), len(ref.tokens), len(cand.tokens)
    # rougeW: the weighted LCS of the whole texts, totals weighted as f(length).
    w = float(kind.weight)
    weights = [k**w for k in range(max(len(ref.tokens), len(cand.tokens)) + 2)]
    hits = lcs.union_wlcs_hits([ref.tokens], [cand.tokens], weights, *clipping)
    return hits, weights[len(ref.tokens)], weights[len(cand.tokens)]


def _whole_text_masks(text: PreparedText) -> dict[str, int]:
    if "text_masks" not in text.counts:
        text.counts["text_masks"] = lcs.bit_masks(text.tokens)
    return text.counts["text_masks"]
