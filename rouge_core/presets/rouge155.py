"""The `rouge155` preset: ROUGE-1.5.5's reading and its metric semantics, exactly.

Per reference every family yields `(hits, reference_total, candidate_total)` and
the value ROUGE-1.5.5 uses to pick the best reference under `-f B`;
`combine` joins the references (`-f A`, `-f B`, or Lin's jackknife) and
`finish` turns the counts into the rounded recall, precision and F that the
script stores per document (l.1077: `sprintf("%7.5f")` of R and P, and F from
the *rounded* R and P).  The unicode preset reads differently but scores
with these same semantics.
"""

from __future__ import annotations

from collections import Counter
from functools import partial

from rouge_core import kernel as kernel_module
from rouge_core import lcs, names, ngram, skip_bigram
from rouge_core.perl_numbers import (
    integer_exponent,
    perl_divide,
    perl_pow,
    perl_sum,
    round5,
)
from rouge_core.presets.base import Preset, WordAnalyzer, flag_fields, refuse
from rouge_core.sentence_split import splitter
from rouge_core.stem import morph_stem
from rouge_core.stopwords import smart_stopwords
from rouge_core.text import sentences, tokenize
from rouge_core.types import MetricStats, PreparedText, ReferenceCounts, average_folds, best_reference


def f_measure(recall: float, precision: float, alpha: float, *, rounded: bool = True) -> float:
    """F = R*P / ((1-alpha)*P + alpha*R), rounded to five decimals as the script
    stores it (unless not `rounded`: the micro averages); 0 when the denominator is 0.

    Example:
        >>> f_measure(0.5, 0.25, 0.5), f_measure(0.5, 0.25, 0.5, rounded=False)
        (0.33333, 0.3333333333333333)
    """
    denominator = (1 - alpha) * precision + alpha * recall
    if denominator <= 0:
        return 0.0
    f = precision * recall / denominator
    return round5(f) if rounded else f


class Rouge155Metrics:
    """ROUGE-1.5.5's metric semantics under one settings (`Metrics` of `presets.base`).

    `alpha`, `weight` and `weight_of` are also what the compiled kernel is set up with.
    """

    def __init__(self, settings) -> None:
        self.settings = settings
        self.alpha = settings.alpha_value
        self.weight = settings.weight_value
        self._weight_as_integer = integer_exponent(settings.wlcs_weight) if settings.wlcs_weight else None
        self._names = {tag: names.parse(tag) for tag in settings.metric_tags()}

    def weight_of(self, x):
        """ROUGE-W's weighting f(x) = x**w, in Perl's arithmetic (`wlcsWeight`)."""
        return perl_pow(x, self.weight, self._weight_as_integer)

    def per_reference(self, tag: str, cand: PreparedText, refs: list[PreparedText]) -> list[ReferenceCounts]:
        metric = self._names[tag]
        if metric.family == "L":
            return [self._lcs_counts(cand, ref) for ref in refs]
        if metric.family == "W":
            return [self._wlcs_counts(cand, ref) for ref in refs]
        if metric.family in ("S", "SU"):
            with_unigrams = metric.family == "SU"
            gap = self.settings.gap_limit
            peer = cand.skip_bigrams(gap, with_unigrams)
            tables = [ref.skip_bigrams(gap, with_unigrams) for ref in refs]
            clip = skip_bigram.clipped_code_hits
        else:
            peer = cand.ngrams(metric.n)
            tables = [ref.ngrams(metric.n) for ref in refs]
            clip = ngram.clipped_hits
        peer_total = peer.total()
        result = []
        for table in tables:
            total = table.total()
            hits = clip(table, peer)
            # -f B compares the recall as printed with "%07.5f" (l.2240).
            result.append(ReferenceCounts(hits, total, peer_total, round5(hits / total) if total else 0))
        return result

    def _lcs_counts(self, cand: PreparedText, ref: PreparedText) -> ReferenceCounts:
        hits = lcs.union_lcs_hits(ref.sentences, cand.bit_masks(), Counter(ref.tokens), Counter(cand.tokens))
        base = sum(len(sentence) for sentence in ref.sentences)
        return ReferenceCounts(hits, base, len(cand.tokens), hits / base if base else 0)

    def _wlcs_counts(self, cand: PreparedText, ref: PreparedText) -> ReferenceCounts:
        longest = max([len(x) for x in ref.sentences + cand.sentences], default=0)
        weights = [self.weight_of(k) for k in range(longest + 2)]
        hits = lcs.union_wlcs_hits(
            ref.sentences, cand.sentences, weights, Counter(ref.tokens), Counter(cand.tokens)
        )
        base = perl_sum(weights[len(sentence)] for sentence in ref.sentences)
        # ROUGE-1.5.5 dies here ("Illegal division by zero", l.2450) when the
        # reference has no tokens; we score that reference 0, as ROUGE-L does.
        best_key = perl_divide(hits, base) ** (1 / self.weight) if base else 0
        return ReferenceCounts(hits, self.weight_of(base), self.weight_of(len(cand.tokens)), best_key)

    def combine(self, tag: str, per_reference: list[ReferenceCounts]) -> MetricStats:
        inverse = 1 / self.weight if self._names[tag].family == "W" else None
        mode = self.settings.multi_reference
        if mode == "average":
            # -f A: hits and both totals add up over references (l.1170): the
            # candidate total is counted once per reference.
            return self.finish(
                perl_sum(c.hits for c in per_reference),
                perl_sum(c.reference_total for c in per_reference),
                perl_sum(c.candidate_total for c in per_reference),
                inverse,
            )
        if mode == "best" or len(per_reference) == 1:
            return self.finish(*best_reference(per_reference)[:3], inverse)
        # Jackknife (Lin 2004, section 2.1): the best reference of each set of
        # M-1 references, with R, P and F (and the counts) averaged over the M sets.
        held_out = [
            self.finish(*best_reference(per_reference[:k] + per_reference[k + 1 :])[:3], inverse)
            for k in range(len(per_reference))
        ]
        return average_folds(held_out)

    def finish(self, hits: float, reference_total: float, candidate_total: float, inverse) -> MetricStats:
        """The document's stats from the counts: R and P rounded, F from the rounded R and P."""
        recall = perl_divide(hits, reference_total) if reference_total != 0 else 0
        precision = perl_divide(hits, candidate_total) if candidate_total != 0 else 0
        if inverse is not None:  # ROUGE-W reports f^-1 of the weighted ratios
            recall, precision = recall**inverse, precision**inverse
        recall, precision = round5(recall), round5(precision)
        return MetricStats(
            reference_total,
            candidate_total,
            hits,
            recall,
            precision,
            f_measure(recall, precision, self.alpha),
        )


class Rouge155(Preset):
    name = "rouge155"
    uses_kernel = True

    def resolve(self, settings):
        refuse(settings, "rouge_types", "language", "tokenizer")
        return {}

    def analyzer(self, settings):
        # ROUGE-1.5.5's reading (`rouge_core.text`), SMART stopwords (-s), its stemmer (-m).
        return WordAnalyzer(
            partial(sentences, split=splitter(settings.sentence_split)),
            tokenize,
            smart_stopwords() if settings.remove_stopwords else frozenset(),
            morph_stem if settings.stemming else None,
        )

    def metrics(self, settings):
        return Rouge155Metrics(settings)

    def compiled(self, scorer):
        return kernel_module.CompiledScorer(scorer)

    def signature_fields(self, settings, common):
        return flag_fields(settings, common, "porter155+wn2.0", "smart")
