"""rouge-score's `rouge_score.rouge_scorer`: `RougeScorer` and its LCS helpers.

`RougeScorer(rouge_types, use_stemmer=False, split_summaries=False, tokenizer=None)`
with `score(target, prediction)` and `score_multi(targets, prediction)` gives the
same floats as rouge-score 0.1.2, key for key:

* rouge types: `rouge1` .. `rouge9` (n-gram overlap), `rougeL` (LCS of the whole
  texts), `rougeLsum` (summary-level union LCS over the `\\n`-separated lines, or
  NLTK's sentences with `split_summaries=True`); another name raises ValueError
  when scoring, as in rouge-score;
* with the default tokenizer and no sentence splitter, pairs are scored by the
  compiled kernel (rouge_core/_rouge_score_kernel.c) when it is built and not
  switched off (`ROUGE_CORE_KERNEL=python`); otherwise, and for a tokenizer of
  your own, by the Python below, which follows rouge-score's code step by step
  (its LCS computed bit-parallel by `rouge_core.lcs`, with rouge-score's walk);
* `score_multi` scores each target and keeps, per type, the target of the
  highest F (the first on ties: `np.argmax`).
"""

from __future__ import annotations

import collections

import numpy as np

from rouge_core import kernel as kernel_module
from rouge_core import lcs as _lcs
from rouge_core import names
from rouge_core import ngram as _ngram
from rouge_core.compat import scoring, tokenizers
from rouge_core.compat.tokenize import ensure_str
from rouge_core.presets.rouge_score import porter_stem


class RougeScorer(scoring.BaseScorer):
    """Calculate rouge scores between two blobs of text.

    Example:
        >>> scorer = RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
        >>> scores = scorer.score("The quick brown fox jumps over the lazy dog",
        ...                       "The quick brown dog jumps on the log.")
        >>> scores["rougeL"]
        Score(precision=0.625, recall=0.5555555555555556, fmeasure=0.5882352941176471)
    """

    def __init__(self, rouge_types, use_stemmer=False, split_summaries=False, tokenizer=None):
        self.rouge_types = rouge_types
        self._tokenizer = tokenizer if tokenizer else tokenizers.DefaultTokenizer(use_stemmer)
        self._split_summaries = split_summaries
        self._engine_for = None  # (rouge types, tokenizer, stemming) the compiled engine was built for
        self._engine = None

    # ------------------------------------------------------------ the compiled path
    def _compiled(self):
        """The compiled kernel for the current rouge types, or None (score in Python).

        Built on first use and again whenever `rouge_types` or the tokenizer has
        changed since (rouge-score reads both on every call)."""
        tokenizer = self._tokenizer
        if self._split_summaries or type(tokenizer) is not tokenizers.DefaultTokenizer:
            return None
        if type(self.rouge_types) not in (list, tuple):
            return None  # a generator, a set, a string ...: rouge-score's own reading, from the Python path
        built_for = self._engine_for
        if built_for is not None and built_for == (self.rouge_types, tokenizer, tokenizer.use_stemmer):
            return self._engine
        types = tuple(dict.fromkeys(self.rouge_types))  # a repeated type is scored once, as a dict key
        if not all(type(t) is str for t in types):
            return None  # bytes ...: as rouge-score reads (or refuses) them, from the Python path
        try:
            metrics = [names.rouge_score_type(t) for t in types]
        except ValueError:
            return None  # refused, by the Python path, after the texts are read (rouge-score's order)
        self._engine = None
        spelled = all(m.tag() == t for m, t in zip(metrics, types))  # ("rouge1\n" passes rouge-score's test)
        if types and spelled and kernel_module.choose(None) == "c" and kernel_module.rouge_score_kernel_available():
            self._engine = kernel_module.CompiledRougeScore(
                metrics,
                stem=porter_stem() if tokenizer.use_stemmer else None,
                result_type=scoring.Score,
                layout=0,
            )
        self._engine_for = (list(self.rouge_types), tokenizer, tokenizer.use_stemmer)
        return self._engine

    # ------------------------------------------------------------ rouge-score's API
    def score_multi(self, targets, prediction):
        """Scores against each target; per type, the target with the highest F.

        Args:
            targets: list of texts containing the targets.
            prediction: text containing the predicted text.

        Returns:
            A dict mapping each rouge type to a Score.

        Raises:
            ValueError: an invalid rouge type, or no targets.
        """
        engine = self._compiled() if _texts(prediction) and type(targets) in (list, tuple) and targets \
            and all(map(_texts, targets)) else None
        if engine is not None:
            result = engine.score(prediction, targets)
            if result is not None:
                return result
        score_dicts = [self.score(t, prediction) for t in targets]
        max_score = {}
        for k in self.rouge_types:
            index = np.argmax([s[k].fmeasure for s in score_dicts])
            max_score[k] = score_dicts[index][k]
        return max_score

    def score(self, target, prediction):
        """Calculates rouge scores between the target and prediction.

        Returns:
            A dict mapping each rouge type to a Score.

        Raises:
            ValueError: if an invalid rouge type is encountered.
        """
        engine = self._compiled() if _texts(target) and _texts(prediction) else None
        if engine is not None:
            result = engine.score(prediction, (target,))
            if result is not None:
                return result
        return self._score_python(target, prediction)

    def score_batch(self, targets, predictions):
        """`[self.score(t, p) for t, p in zip(targets, predictions)]` in one call (not in
        rouge-score; rouge-score-rs has it): the compiled kernel scores the whole batch.

        Raises:
            ValueError: targets and predictions of different lengths.
        """
        targets, predictions = list(targets), list(predictions)
        if len(targets) != len(predictions):
            raise ValueError(
                f"targets and predictions differ in length: {len(targets)} targets, {len(predictions)} predictions"
            )
        engine = self._compiled() if all(map(_texts, targets)) and all(map(_texts, predictions)) else None
        if engine is None:
            return [self.score(t, p) for t, p in zip(targets, predictions)]
        results = engine.score_batch([(p, (t,)) for t, p in zip(targets, predictions)])
        return [r if r is not None else self._score_python(t, p) for r, t, p in zip(results, targets, predictions)]

    def _score_python(self, target, prediction):
        """rouge-score's `score`, in its order: the reference for the compiled path."""
        if names.is_rouge_score_lsum_only(self.rouge_types):
            target_tokens = prediction_tokens = None
        else:
            target_tokens = self._tokenizer.tokenize(target)
            prediction_tokens = self._tokenizer.tokenize(prediction)
        result = {}
        for rouge_type in self.rouge_types:
            metric = _rouge_type(rouge_type)  # rouge-score's reading and errors, in its order
            if metric.family == "n":
                scores = _score_ngrams(
                    _create_ngrams(target_tokens, metric.n), _create_ngrams(prediction_tokens, metric.n)
                )
            elif metric.summary_level:  # rougeLsum
                scores = _summary_level_lcs(
                    [self._tokenizer.tokenize(s) for s in self._sentences(target)],
                    [self._tokenizer.tokenize(s) for s in self._sentences(prediction)],
                )
            else:  # rougeL
                scores = _score_lcs(target_tokens, prediction_tokens)
            result[rouge_type] = scores
        return result

    def _sentences(self, text):
        if self._split_summaries:
            import nltk

            sents = nltk.sent_tokenize(text)
        else:
            sents = ensure_str(text).split("\n")  # sentences are separated by newlines
        return [x for x in sents if len(x)]


def _texts(value) -> bool:
    """A text the compiled kernel reads as rouge-score would: a str (bytes and the rest
    take the Python path, where rouge-score's decoding and errors are reproduced)."""
    return type(value) is str


def _rouge_type(rouge_type):
    """`names.rouge_score_type` in rouge-score 0.1.2's own order: "rougeL" and "rougeLsum"
    by equality, any other by `re.match("rouge[0-9]$", six.ensure_str(t))`, so bytes are
    decoded (b"rouge2" is ROUGE-2, b"rougeL" is refused) and what is neither a string nor
    bytes is its TypeError."""
    if type(rouge_type) is str or names.is_rouge_score_lcs(rouge_type):
        return names.rouge_score_type(rouge_type)
    text = ensure_str(rouge_type)
    if names.is_rouge_score_lcs(text):
        raise ValueError("Invalid rouge type: %s" % (rouge_type,))
    return names.rouge_score_type(text)


# ---------------------------------------------------------------- rouge-score's helpers
def _create_ngrams(tokens, n):
    """A Counter of the n-grams (tuples of n tokens) of a token list."""
    return collections.Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _score_ngrams(target_ngrams, prediction_ngrams):
    """Clipped n-gram overlap: P = hits / max(prediction n-grams, 1), R = hits / max(target n-grams, 1)."""
    intersection_ngrams_count = _ngram.clipped_hits(target_ngrams, prediction_ngrams)
    target_ngrams_count = sum(target_ngrams.values())
    prediction_ngrams_count = sum(prediction_ngrams.values())
    precision = intersection_ngrams_count / max(prediction_ngrams_count, 1)
    recall = intersection_ngrams_count / max(target_ngrams_count, 1)
    return scoring.Score(precision=precision, recall=recall, fmeasure=scoring.fmeasure(precision, recall))


def _score_lcs(target_tokens, prediction_tokens):
    """rougeL: the LCS of the two token lists; Score(0, 0, 0) (ints) when either is empty."""
    if not target_tokens or not prediction_tokens:
        return scoring.Score(precision=0, recall=0, fmeasure=0)
    # One LCS path marks exactly LCS-length reference positions; its clipping
    # against the unigram tables never removes one.
    lcs_length = _lcs.union_lcs_hits(
        [target_tokens],
        [(prediction_tokens, _lcs.bit_masks(prediction_tokens))],
        collections.Counter(target_tokens),
        collections.Counter(prediction_tokens),
    )
    precision = lcs_length / len(prediction_tokens)
    recall = lcs_length / len(target_tokens)
    return scoring.Score(precision=precision, recall=recall, fmeasure=scoring.fmeasure(precision, recall))


def _lcs_table(ref, can):
    """The (len(ref) + 1) x (len(can) + 1) LCS length table."""
    rows, cols = len(ref), len(can)
    lcs_table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        for j in range(1, cols + 1):
            if ref[i - 1] == can[j - 1]:
                lcs_table[i][j] = lcs_table[i - 1][j - 1] + 1
            else:
                lcs_table[i][j] = max(lcs_table[i - 1][j], lcs_table[i][j - 1])
    return lcs_table


def _backtrack_norec(t, ref, can):
    """The reference indices of one LCS: diagonal on equal tokens, left only when
    the left cell is strictly greater, else up."""
    i, j = len(ref), len(can)
    lcs = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            lcs.insert(0, i - 1)
            i -= 1
            j -= 1
        elif t[i][j - 1] > t[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return lcs


def lcs_ind(ref, can):
    """Returns one of the longest LCS (as reference indices)."""
    return _backtrack_norec(_lcs_table(ref, can), ref, can)


def _find_union(lcs_list):
    """The sorted union of several LCS index lists."""
    return sorted(set().union(*lcs_list))


def _union_lcs(ref, c_list):
    """The reference tokens on the union of the LCS of ref with each candidate sentence."""
    return [ref[i] for i in _find_union([lcs_ind(ref, c) for c in c_list])]


def _summary_level_lcs(ref_sent, can_sent):
    """rougeLsum of tokenized sentences (section 3.2 of Lin 2004, as ROUGE-1.5.5 clips it).

    Example:
        >>> _summary_level_lcs([[1, 2, 3, 4, 5]], [[1, 2, 6, 7, 8], [1, 3, 8, 9, 5]]).recall
        0.8
    """
    if not ref_sent or not can_sent:
        return scoring.Score(precision=0, recall=0, fmeasure=0)
    m = sum(map(len, ref_sent))
    n = sum(map(len, can_sent))
    if not n or not m:
        return scoring.Score(precision=0, recall=0, fmeasure=0)
    token_cnts_r = collections.Counter(t for s in ref_sent for t in s)
    token_cnts_c = collections.Counter(t for s in can_sent for t in s)
    # rouge_core.lcs walks each LCS back as rouge-score's _backtrack_norec does.
    hits = _lcs.union_lcs_hits(ref_sent, [(s, _lcs.bit_masks(s)) for s in can_sent], token_cnts_r, token_cnts_c)
    recall = hits / m
    precision = hits / n
    return scoring.Score(precision=precision, recall=recall, fmeasure=scoring.fmeasure(precision, recall))
