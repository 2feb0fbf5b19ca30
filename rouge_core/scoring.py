"""Scoring one candidate against its references, every metric family at once.

Each text is read, cut, tokenized, filtered and stemmed once (`prepare`); the
metric families then count overlaps on the shared tokens.  Per reference every
family yields `(hits, reference_total, candidate_total)` and the value ROUGE-1.5.5
uses to pick the best reference under `-f B`; `multiref` combines references;
`finish` turns the counts into the rounded recall, precision and F that the
script stores per document (l.1077: `sprintf("%7.5f")` of R and P, and F from
the *rounded* R and P).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np

from rouge_core import kernel as kernel_module
from rouge_core import lcs, ngram, skip_bigram
from rouge_core.errors import RougeInputError
from rouge_core.perl_numbers import integer_exponent, perl_divide, perl_pow, perl_sum
from rouge_core.presets import get_preset
from rouge_core.resampling import sequential_sum
from rouge_core.settings import RougeSettings
from rouge_core.text import Text, limit_bytes, limit_words


class MetricStats(NamedTuple):
    """One metric for one document, as ROUGE-1.5.5 keeps it.

    `reference_total`, `candidate_total` and `hits` are what `-t 1` and `-t 2`
    add up (for ROUGE-W, f-weighted and not rounded); `recall`, `precision`
    and `f_measure` are the per-document scores, rounded to five decimals.
    """

    reference_total: float
    candidate_total: float
    hits: float
    recall: float
    precision: float
    f_measure: float


_LONGEST_CACHED = 100_000  # characters
_LARGEST_VOCABULARY = 1 << 22  # token ids; past it the vocabulary and the cache start afresh


class ReferenceCounts(NamedTuple):
    hits: float
    reference_total: float
    candidate_total: float
    best_key: float  # what -f B compares (l.1171): the first strictly greater wins


def round5(x: float) -> float:
    """ROUGE-1.5.5's `sprintf("%7.5f", x)`, read back as a number."""
    return float("%.5f" % x)


def f_measure(recall: float, precision: float, alpha: float) -> float:
    """F = R*P / ((1-alpha)*P + alpha*R), rounded; 0 when the denominator is 0.

    Example:
        >>> f_measure(0.5, 0.25, 0.5)
        0.33333
    """
    denominator = (1 - alpha) * precision + alpha * recall
    return round5(precision * recall / denominator) if denominator > 0 else 0.0


@dataclass
class PreparedText:
    """A text read, cut, tokenized, filtered and stemmed as ROUGE-1.5.5 does."""

    tokens: list[str]  # one stream for ROUGE-N/S and the ROUGE-L/W unigram tables
    sentences: list[list[str]]  # per sentence, for ROUGE-L/W (differs only under -b)
    ids: np.ndarray  # the tokens as ids of the scorer's vocabulary, for skip-bigram codes
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
        if "masks" not in self.counts:
            self.counts["masks"] = [(s, lcs.bit_masks(s)) for s in self.sentences]
        return self.counts["masks"]


class RougeScorer:
    """Scores candidates against references under one `RougeSettings`.

    Work limits keep long or adversarial texts from taking unbounded time and
    memory; a text over a limit raises `RougeInputError` with reason "too_costly"
    instead of being scored.  Costs, per candidate-reference pair:

    * ROUGE-N: linear in the tokens.
    * ROUGE-S/SU: one 8-byte code per skip-bigram, n(n-1)/2 for a text of n
      tokens with no gap limit, about n(d+1) with gap d: `max_skip_bigrams`
      per text (default 5 million: about 40 MB, well under a second).
    * ROUGE-L: bit-parallel, (reference tokens x candidate tokens) / 64
      machine-word steps and as many bits of memory: `64 * max_lcs_cells`.
    * ROUGE-W: a dynamic programme over every reference-sentence x
      candidate-sentence cell, one byte of memory per cell of the largest
      sentence pair and about half a microsecond per cell: `max_lcs_cells`
      (default 20 million: at most about 10-20 seconds).

    Example:
        >>> scorer = RougeScorer(RougeSettings.from_flags("-n 2"))
        >>> scores = scorer.score(candidate="the cat sat on the mat",
        ...                       references=["the cat was on the mat"])
        >>> scores["ROUGE-1"].recall, scores["ROUGE-2"].f_measure, scores["ROUGE-L"].precision
        (0.83333, 0.6, 0.83333)
    """

    def __new__(cls, settings: RougeSettings | None = None, **limits):
        # A preset with metric semantics of its own (rouge_score) has its own subclass.
        scorer_class = cls
        if cls is RougeScorer and settings is not None:
            scorer_class = get_preset(settings.preset).scorer_class()
        return super().__new__(scorer_class)

    def __init__(
        self,
        settings: RougeSettings,
        *,
        max_skip_bigrams: int = 5_000_000,
        max_lcs_cells: int = 20_000_000,
        kernel: str | None = None,
    ) -> None:
        self.settings = settings
        self.max_skip_bigrams = max_skip_bigrams
        self.max_lcs_cells = max_lcs_cells
        self.tags = settings.metric_tags()
        self._analyzer = get_preset(settings.preset).analyzer(settings)  # the preset's reading
        self._alpha = settings.alpha_value
        self._weight = settings.weight_value
        self._weight_as_integer = integer_exponent(settings.wlcs_weight) if settings.wlcs_weight else None
        self._vocabulary: dict[str, int] = {}
        # References recur (one per system for every document): prepare each once.
        self._prepare_cached = lru_cache(maxsize=512)(self._prepare)
        # The compiled kernel (rouge_core.kernel), when built and not switched off:
        # "auto"/None, "c" or "python".  It gives the same statistics as the code below.
        rouge155 = getattr(settings, "preset", "rouge155") == "rouge155"
        self._kernel_request = kernel
        self.kernel = kernel_module.choose(kernel) if rouge155 else "python"
        self._compiled = kernel_module.CompiledScorer(self) if self.kernel == "c" else None

    def __getstate__(self) -> dict:
        # Pickled (e.g. inside a Beam DoFn) without its caches and compiled kernel,
        # which are built again where it is unpickled.
        return {
            "settings": self.settings,
            "max_skip_bigrams": self.max_skip_bigrams,
            "max_lcs_cells": self.max_lcs_cells,
            "kernel": self._kernel_request,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(state.pop("settings"), **state)

    # ----------------------------------------------------------- reading
    def prepare(self, text: Text) -> PreparedText:
        """Read, cut, tokenize, filter and stem a text once for every metric."""
        key = text if isinstance(text, str) else tuple(text) if isinstance(text, (list, tuple)) else text
        if isinstance(key, str) and len(key) > _LONGEST_CACHED:
            return self._prepare(key)  # long texts are rare; their tables stay out of the cache
        try:
            return self._prepare_cached(key)
        except TypeError:  # unhashable: not a text at all, or a list holding one
            return self._prepare(key)

    def _prepare(self, text: Text) -> PreparedText:
        sents = self._analyzer.sentences(text)
        if self.settings.word_limit is not None:
            sents = limit_words(sents, self.settings.word_limit)
            lcs_sents = sents
        elif self.settings.byte_limit is not None:
            lcs_sents = limit_bytes(sents, self.settings.byte_limit, lcs_bug=True)
            sents = limit_bytes(sents, self.settings.byte_limit)
        else:
            lcs_sents = sents
        token_lists = [self._tokens(s) for s in sents]
        lcs_lists = token_lists if lcs_sents is sents else [self._tokens(s) for s in lcs_sents]
        tokens = [t for ts in token_lists for t in ts]
        vocabulary = self._vocabulary
        ids = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for t in tokens), np.int64, len(tokens))
        return PreparedText(tokens, lcs_lists, ids)

    def _tokens(self, sentence: str) -> list[str]:
        return self._analyzer.tokens(sentence)

    # ----------------------------------------------------------- scoring
    def score(self, *, candidate: Text, references: Sequence[Text]) -> dict[str, MetricStats]:
        """Score one candidate against one or more references.

        Args:
            candidate: the system summary (a string, one sentence per line, or a
                list of sentences).
            references: the reference summaries, in a fixed order (it decides
                ties under `-f B`).

        Returns:
            One `MetricStats` per metric tag, in ROUGE-1.5.5's print order.

        Raises:
            RougeInputError: no references, or a text that is not a string or a
                list of strings.
        """
        if self._compiled is not None:
            result = self._compiled.score_batch([(candidate, references)])[0]
            if result is not None:
                return result
        return self._score_python(candidate, references)

    def score_batch(self, pairs) -> list:
        """Score many (candidate, references) pairs in one call, e.g. a Beam bundle.

        Returns, in order, `score`'s dict for each pair, or the `RougeInputError`
        that `score` would raise for it: one bad pair does not fail the others.
        With the compiled kernel the whole batch is scored in C.

        Example:
            >>> scorer = RougeScorer(RougeSettings.from_flags("-n 1"))
            >>> out = scorer.score_batch([("a cat", ["the cat"]), ("a cat", [])])
            >>> out[0]["ROUGE-1"].recall, out[1].reason
            (0.5, 'wrong_type')
        """
        pairs = list(pairs)
        results = self._compiled.score_batch(pairs) if self._compiled is not None else [None] * len(pairs)
        for i, result in enumerate(results):
            if result is None:
                try:  # through score(), which a preset's scorer may override
                    candidate, references = pairs[i]
                    results[i] = self.score(candidate=candidate, references=references)
                except RougeInputError as error:
                    results[i] = error
        return results

    def _score_python(self, candidate: Text, references: Sequence[Text]) -> dict[str, MetricStats]:
        """`score` in pure Python: the reference the compiled kernel must equal."""
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise RougeInputError(f"references must be a list of texts; got {type(references).__name__}")
        if not references:
            raise RougeInputError("a candidate needs at least one reference; got none")
        if len(self._vocabulary) > _LARGEST_VOCABULARY:  # between calls: ids stay consistent within one
            self._vocabulary.clear()
            self._prepare_cached.cache_clear()
        cand = self.prepare(candidate)
        refs = [self.prepare(r) for r in references]
        self._check_cost(cand, refs)
        return {tag: self._combine(tag, self._per_reference(tag, cand, refs)) for tag in self.tags}

    def _check_cost(self, cand: PreparedText, refs: list[PreparedText]) -> None:
        s = self.settings
        if s.skip_distance is not None:
            gap = s.gap_limit
            for text in [cand, *refs]:
                n = len(text.tokens)
                pairs = n * (n - 1) // 2 if gap is None else min(n * (n - 1) // 2, n * (gap + 1))
                if pairs > self.max_skip_bigrams:
                    raise RougeInputError(
                        f"a text of {n} tokens has {pairs} skip-bigrams, over the limit of "
                        f"{self.max_skip_bigrams} (RougeScorer max_skip_bigrams)",
                        reason="too_costly",
                    )
        if s.rouge_l or s.wlcs_weight is not None:
            cand_tokens = sum(len(x) for x in cand.sentences)
            limit = self.max_lcs_cells if s.wlcs_weight is not None else 64 * self.max_lcs_cells
            for ref in refs:
                cells = cand_tokens * sum(len(x) for x in ref.sentences)
                if cells > limit:
                    metric = "ROUGE-W" if s.wlcs_weight is not None else "ROUGE-L"
                    raise RougeInputError(
                        f"{metric} would fill {cells} table cells (candidate x reference tokens), over the "
                        f"limit of {limit} (RougeScorer max_lcs_cells)",
                        reason="too_costly",
                    )

    def _per_reference(self, tag: str, cand: PreparedText, refs: list[PreparedText]) -> list[ReferenceCounts]:
        s = self.settings
        if tag == "ROUGE-L":
            return [self._lcs_counts(cand, ref) for ref in refs]
        if tag.startswith("ROUGE-W-"):
            return [self._wlcs_counts(cand, ref) for ref in refs]
        if tag.startswith("ROUGE-S"):
            with_unigrams = tag.startswith("ROUGE-SU")
            peer = cand.skip_bigrams(s.gap_limit, with_unigrams)
            tables = [ref.skip_bigrams(s.gap_limit, with_unigrams) for ref in refs]
            clip = skip_bigram.clipped_code_hits
        else:
            n = int(tag[len("ROUGE-") :])
            peer = cand.ngrams(n)
            tables = [ref.ngrams(n) for ref in refs]
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
        weights = [self._f(k) for k in range(longest + 2)]
        hits = lcs.union_wlcs_hits(
            ref.sentences, cand.sentences, weights, Counter(ref.tokens), Counter(cand.tokens)
        )
        base = perl_sum(weights[len(sentence)] for sentence in ref.sentences)
        # ROUGE-1.5.5 dies here ("Illegal division by zero", l.2450) when the
        # reference has no tokens; we score that reference 0, as ROUGE-L does.
        best_key = perl_divide(hits, base) ** (1 / self._weight) if base else 0
        return ReferenceCounts(hits, self._f(base), self._f(len(cand.tokens)), best_key)

    def _f(self, x):
        """ROUGE-W's weighting f(x) = x**w, in Perl's arithmetic (`wlcsWeight`)."""
        return perl_pow(x, self._weight, self._weight_as_integer)

    def _combine(self, tag: str, per_reference: list[ReferenceCounts]) -> MetricStats:
        inverse = 1 / self._weight if tag.startswith("ROUGE-W-") else None
        mode = self.settings.multi_reference
        if mode == "average":
            # -f A: hits and both totals add up over references (l.1170): the
            # candidate total is counted once per reference.
            return self._finish(
                perl_sum(c.hits for c in per_reference),
                perl_sum(c.reference_total for c in per_reference),
                perl_sum(c.candidate_total for c in per_reference),
                inverse,
            )
        if mode == "best" or len(per_reference) == 1:
            return self._finish(*_best(per_reference)[:3], inverse)
        # Jackknife (Lin 2004, section 2.1): the best reference of each set of
        # M-1 references, with R, P and F (and the counts) averaged over the M sets.
        held_out = [
            self._finish(*_best(per_reference[:k] + per_reference[k + 1 :])[:3], inverse)
            for k in range(len(per_reference))
        ]
        m = len(held_out)
        return MetricStats(
            *(sequential_sum(column) / m for column in list(zip(*held_out))[:3]),
            *(round5(sequential_sum(column) / m) for column in list(zip(*held_out))[3:]),
        )

    def _finish(self, hits: float, reference_total: float, candidate_total: float, inverse) -> MetricStats:
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
            f_measure(recall, precision, self._alpha),
        )


def _best(per_reference: list[ReferenceCounts]) -> ReferenceCounts:
    """-f B: the first reference whose key is strictly greater than all before it."""
    best = per_reference[0]
    for counts in per_reference[1:]:
        if counts.best_key > best.best_key:
            best = counts
    return best
