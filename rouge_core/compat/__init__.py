"""A drop-in for Google's rouge-score 0.1.2 and Hugging Face `evaluate`'s "rouge".

Change one import line::

    from rouge_score import rouge_scorer, scoring          # before
    from rouge_core.compat import rouge_scorer, scoring    # after

and every per-pair number is the same float as rouge-score's (rouge1..rouge9,
rougeL, rougeLsum, with and without stemming, `score` and `score_multi`), computed
by the compiled kernel when it is built (`rouge_core.kernel_info()`), else by the
pure-Python reference.  One thing differs on purpose: `scoring.BootstrapAggregator`
is seeded (seed 0 by default), so the same call gives the same numbers on every
run; `seed=None` restores rouge-score's unseeded draws.

`compute(predictions=..., references=...)` is `evaluate.load("rouge").compute`.

>>> from rouge_core.compat import rouge_scorer
>>> scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
>>> scorer.score("The quick brown fox jumps over the lazy dog",
...              "The quick brown dog jumps on the log.")["rouge1"]
Score(precision=0.75, recall=0.6666666666666666, fmeasure=0.7058823529411765)
"""

from rouge_core.compat import rouge_scorer, scoring, tokenize, tokenizers
from rouge_core.compat.hf_evaluate import compute

__all__ = ["compute", "rouge_scorer", "scoring", "tokenize", "tokenizers"]
