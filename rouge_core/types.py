"""The values every part of the metric passes around, at the bottom of the package.

A text becomes a `PreparedText` once (read, cut, tokenized, filtered, stemmed);
a metric family counts, per reference, a `ReferenceCounts`; a preset's
semantics combine those into the document's `MetricStats`.  Scoring, the
presets, the compiled kernel, the human jackknife, the report and the
aggregates all import these from here, and this module imports only the
metric families' counting functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from rouge_core import lcs, ngram, skip_bigram
from rouge_core.perl_numbers import round5, sequential_sum


class MetricStats(NamedTuple):
    """One metric for one document, as ROUGE-1.5.5 keeps it.

    `reference_total`, `candidate_total` and `hits` are what `-t 1` and `-t 2`
    add up (for ROUGE-W, f-weighted and not rounded); `recall`, `precision`
    and `f_measure` are the per-document scores, rounded to five decimals
    (not rounded under the rouge_score preset).
    """

    reference_total: float
    candidate_total: float
    hits: float
    recall: float
    precision: float
    f_measure: float


class ReferenceCounts(NamedTuple):
    """One metric of a candidate against one of its references."""

    hits: float
    reference_total: float
    candidate_total: float
    best_key: float  # what "best reference" compares (-f B, l.1171): the first strictly greater wins


def best_reference(per_reference: Sequence[ReferenceCounts]) -> ReferenceCounts:
    """-f B: the first reference whose `best_key` is strictly greater than all before it.

    Example:
        >>> best_reference([ReferenceCounts(1, 2, 2, 0.5), ReferenceCounts(2, 4, 2, 0.5)]).hits
        1
    """
    best = per_reference[0]
    for counts in per_reference[1:]:
        if counts.best_key > best.best_key:
            best = counts
    return best


def average_folds(folds: Sequence[MetricStats]) -> MetricStats:
    """The mean of jackknife folds (Lin 2004, section 2.1): the counts and R, P, F
    summed left to right and divided by the number of folds, R, P and F rounded
    to five decimals again.

    Example:
        >>> average_folds([MetricStats(2, 2, 1, 0.5, 0.5, 0.5), MetricStats(3, 2, 2, 1.0, 1.0, 1.0)])
        MetricStats(reference_total=2.5, candidate_total=2.0, hits=1.5, recall=0.75, precision=0.75, f_measure=0.75)
    """
    m = len(folds)
    columns = list(zip(*folds))
    return MetricStats(
        *(sequential_sum(column) / m for column in columns[:3]),
        *(round5(sequential_sum(column) / m) for column in columns[3:]),
    )


@dataclass
class PreparedText:
    """A text read, cut, tokenized, filtered and stemmed as a preset reads it."""

    tokens: list[str]  # one stream for ROUGE-N/S and the ROUGE-L/W unigram tables
    sentences: list[list[str]]  # per sentence, for ROUGE-L/W (differs only under -b)
    ids: Sequence[int]  # the tokens as ids of the scorer's vocabulary, for skip-bigram codes
    counts: dict = field(default_factory=dict)  # memoised n-gram and skip-bigram tables

    def ngrams(self, n: int) -> Counter:
        key = ("n", n)
        if key not in self.counts:
            self.counts[key] = ngram.ngram_counts(self.tokens, n)
        return self.counts[key]

    def skip_bigrams(self, max_gap, with_unigrams: bool) -> skip_bigram.CodeTable:
        key = ("s", max_gap, with_unigrams)
        if key not in self.counts:
            self.counts[key] = skip_bigram.skip_bigram_table(self.ids, max_gap, with_unigrams)
        return self.counts[key]

    def bit_masks(self) -> list[tuple[list[str], dict[str, int]]]:
        """Per sentence, the bit masks of its tokens (ROUGE-L's bit-parallel LCS)."""
        if "masks" not in self.counts:
            self.counts["masks"] = [(s, lcs.bit_masks(s)) for s in self.sentences]
        return self.counts["masks"]

    def text_masks(self) -> dict[str, int]:
        """The bit masks of all tokens as one sequence (rouge-score's whole-text rougeL)."""
        if "text_masks" not in self.counts:
            self.counts["text_masks"] = lcs.bit_masks(self.tokens)
        return self.counts["text_masks"]


# The three measures of every metric, in table order.
MEASURES = ("recall", "precision", "f_measure")
