"""Hugging Face `evaluate`'s "rouge" metric as a function: `compute(predictions=, references=)`.

`evaluate.load("rouge").compute(...)` runs rouge-score as its `metrics/rouge/rouge.py`
does (`Rouge._compute`); `compute` runs the same steps on this package's drop-in:

* `references` holds one string per prediction, or one list of strings (then each
  prediction is scored with `score_multi`: the reference with the highest F);
* `use_aggregator=False`: per type, the list of per-pair F values (exactly
  evaluate's numbers);
* `use_aggregator=True`: per type, the `mid` F of a `BootstrapAggregator` (the
  median of 1000 resampled means), seeded: `seed` (default 0) makes the value the
  same on every run, where evaluate's changes from run to run; `seed=None` draws
  unseeded, as evaluate does;
* `tokenizer`: a callable text -> tokens, replacing rouge-score's tokenizer.

Beyond evaluate: `flags` (ROUGE-1.5.5 command-line flags) and `preset` (`rouge155`,
the default with flags, or `unicode`) score with this package's presets instead:
`use_aggregator=True` gives each metric's official `Average_F` (the average
ROUGE-1.5.5 prints, as a float), `use_aggregator=False` the per-pair F it stores
(rounded to 5 decimals, as the script does).
"""

from __future__ import annotations

from rouge_core import RougeConfigError, RougeInputError, RougeScorer, RougeSettings
from rouge_core.compat import rouge_scorer, scoring
from rouge_core.report import system_averages

DEFAULT_ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


class Tokenizer:
    """A callable wrapped into a class with a `tokenize` method, as rouge-score uses it."""

    def __init__(self, tokenizer_func):
        self.tokenizer_func = tokenizer_func

    def tokenize(self, text):
        return self.tokenizer_func(text)


def compute(
    *,
    predictions,
    references,
    rouge_types=None,
    use_aggregator=True,
    use_stemmer=False,
    tokenizer=None,
    seed: int | None = scoring.DEFAULT_SEED,
    preset: str | None = None,
    flags: str | None = None,
):
    """ROUGE of predictions against references, as evaluate's rouge metric returns it.

    Example:
        >>> result = compute(predictions=["hello there", "general kenobi"],
        ...                  references=["hello there", "general kenobi"])
        >>> {key: float(value) for key, value in result.items()}  # numpy floats, as evaluate's
        {'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0, 'rougeLsum': 1.0}
        >>> compute(predictions=["the cat sat"], references=[["a cat sat", "the dog"]],
        ...         rouge_types=["rouge1"], use_aggregator=False)
        {'rouge1': [0.6666666666666666]}
        >>> compute(predictions=["the cat sat"], references=["a cat sat"], flags="-n 1 -m")
        {'ROUGE-1': 0.66667, 'ROUGE-L': 0.66667}
    """
    predictions, references = list(predictions), list(references)
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must have the same length; got {len(predictions)} predictions "
            f"and {len(references)} references"
        )
    if not predictions:
        raise ValueError("compute needs at least one prediction")
    multi_ref = isinstance(references[0], (list, tuple))
    if flags is not None or preset not in (None, "rouge_score"):
        return _compute_with_flags(predictions, references, multi_ref, use_aggregator, preset, flags, rouge_types,
                                   use_stemmer, tokenizer)
    if rouge_types is None:
        rouge_types = list(DEFAULT_ROUGE_TYPES)
    if tokenizer is not None:
        tokenizer = Tokenizer(tokenizer)
    scorer = rouge_scorer.RougeScorer(rouge_types=rouge_types, use_stemmer=use_stemmer, tokenizer=tokenizer)
    if use_aggregator:
        aggregator = scoring.BootstrapAggregator(seed=seed)
    else:
        scores = []
    for ref, pred in zip(references, predictions):
        score = scorer.score_multi(ref, pred) if multi_ref else scorer.score(ref, pred)
        if use_aggregator:
            aggregator.add_scores(score)
        else:
            scores.append(score)
    if use_aggregator:
        result = aggregator.aggregate()
        for key in result:
            result[key] = result[key].mid.fmeasure
        return result
    return {key: [score[key].fmeasure for score in scores] for key in scores[0]}


def _compute_with_flags(predictions, references, multi_ref, use_aggregator, preset, flags, rouge_types, use_stemmer,
                        tokenizer):
    """compute() under a preset with ROUGE-1.5.5 flags: the official averages."""
    if rouge_types is not None:
        raise RougeConfigError("rouge_types applies to the rouge_score preset; with flags the metrics come from them")
    if use_stemmer:
        raise RougeConfigError("use_stemmer applies to the rouge_score preset; with flags, stem with -m")
    options = {} if tokenizer is None else {"tokenizer": tokenizer}
    settings = RougeSettings.from_preset(preset or "rouge155", flags, **options)
    if settings.counting == 2:
        raise RougeConfigError("-t 2 prints counts, not averages: use use_aggregator=False for per-pair scores")
    scorer = RougeScorer(settings)
    pairs = [(p, list(r) if multi_ref else [r]) for p, r in zip(predictions, references)]
    results = scorer.score_batch(pairs)
    for i, result in enumerate(results):
        if isinstance(result, RougeInputError):
            raise RougeInputError(f"prediction {i}: {result}", reason=result.reason)
    tags = settings.metric_tags()
    if not use_aggregator:
        return {tag: [result[tag].f_measure for result in results] for tag in tags}
    # Documents named by their position, as one system: the script's instance order.
    averages = system_averages("A", {str(i): result for i, result in enumerate(results)}, settings)
    return {tag: float(averages[tag][2].average) for tag in tags}
