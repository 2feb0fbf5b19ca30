"""Scoring one candidate against its references, every metric family at once.

Each text is read, cut, tokenized, filtered and stemmed once (`prepare`, with the
preset's analyzer); the metric families then count overlaps on the shared
tokens.  The preset's metric semantics (`rouge_core.presets`) turn each
reference's counts into the document's `MetricStats`: for ROUGE-1.5.5,
`presets.rouge155.Rouge155Metrics`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from rouge_core import kernel as kernel_module
from rouge_core.errors import RougeInputError
from rouge_core.presets import get_preset
from rouge_core.settings import RougeSettings
from rouge_core.text import Text, limit_bytes, limit_words
from rouge_core.types import MetricStats, PreparedText, ReferenceCounts

_LONGEST_CACHED = 100_000  # characters
_LARGEST_VOCABULARY = 1 << 22  # token ids; past it the vocabulary and the cache start afresh

__all__ = ["MetricStats", "PreparedText", "ReferenceCounts", "RougeScorer"]


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
        preset = get_preset(settings.preset)
        self._analyzer = preset.analyzer(settings)  # the preset's reading
        self.metrics = preset.metrics(settings)  # the preset's metric semantics
        self._vocabulary: dict[str, int] = {}
        # References recur (one per system for every document): prepare each once.
        self._prepare_cached = lru_cache(maxsize=512)(self._prepare)
        # The compiled kernel (rouge_core.kernel), when built and not switched off:
        # "auto"/None, "c" or "python".  It gives the same statistics as the preset's
        # semantics in Python, for the presets it scores (`Preset.uses_kernel`).
        self._kernel_request = kernel
        self.kernel = kernel_module.choose(kernel) if preset.uses_kernel else "python"
        self._compiled = preset.compiled(self) if self.kernel == "c" else None
        if self._compiled is None:
            self.kernel = "python"

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
        ids = [vocabulary.setdefault(t, len(vocabulary)) for t in tokens]
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
                try:
                    candidate, references = pairs[i]
                    results[i] = self.score(candidate=candidate, references=references)
                except RougeInputError as error:
                    results[i] = error
        return results

    def score_batch_values(self, pairs) -> list:
        """`score_batch` with each pair's statistics as `rouge_core.aggregate.stats_bytes`
        packs them (float64 bytes of (metrics, 6), metrics in `self.tags` order), or the
        `RougeInputError`: what the pipeline keeps of a pair, made by the compiled
        kernel without a dict of MetricStats per pair where it can.

        Example:
            >>> scorer = RougeScorer(RougeSettings.from_flags("-n 1"))
            >>> import numpy as np
            >>> values = scorer.score_batch_values([("a cat", ["the cat"])])[0]
            >>> scorer.tags, np.frombuffer(values).reshape(-1, 6).tolist()  # counts, R, P, F per tag
            (['ROUGE-1', 'ROUGE-L'], [[2.0, 2.0, 1.0, 0.5, 0.5, 0.5], [2.0, 2.0, 1.0, 0.5, 0.5, 0.5]])
        """
        from rouge_core.aggregate import stats_bytes  # noqa: PLC0415 (numpy's sums, not needed to score)

        pairs = list(pairs)
        compiled = self._compiled
        packs = compiled is not None and getattr(compiled, "packs", False)
        results = compiled.score_batch(pairs, packed=True) if packs else self.score_batch(pairs)
        for i, result in enumerate(results):
            if result is None:
                try:
                    candidate, references = pairs[i]
                    result = self.score(candidate=candidate, references=references)
                except RougeInputError as error:
                    result = error
            if isinstance(result, dict):
                result = stats_bytes(result, self.tags)
            results[i] = result
        return results

    def prepare_pair(
        self, candidate: Text, references: Sequence[Text]
    ) -> tuple[PreparedText, list[PreparedText]]:
        """The candidate and its references read by the preset (`prepare`), their token
        ids from one vocabulary.

        Raises:
            RougeInputError: no references, or a text that is not a string or a list of strings.
        """
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise RougeInputError(f"references must be a list of texts; got {type(references).__name__}")
        if not references:
            raise RougeInputError("a candidate needs at least one reference; got none")
        if len(self._vocabulary) > _LARGEST_VOCABULARY:  # between pairs: ids stay consistent within one
            self._vocabulary.clear()
            self._prepare_cached.cache_clear()
        return self.prepare(candidate), [self.prepare(r) for r in references]

    def _score_python(self, candidate: Text, references: Sequence[Text]) -> dict[str, MetricStats]:
        """`score` in pure Python: the reference the compiled kernel must equal."""
        cand, refs = self.prepare_pair(candidate, references)
        self._check_cost(cand, refs)
        metrics = self.metrics
        return {tag: metrics.combine(tag, metrics.per_reference(tag, cand, refs)) for tag in self.tags}

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
