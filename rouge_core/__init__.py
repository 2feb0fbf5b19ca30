"""rouge_core: the official ROUGE-1.5.5 scores, exactly, in pure Python.

>>> from rouge_core import RougeScorer, RougeSettings
>>> scorer = RougeScorer(RougeSettings.from_flags("-n 2 -m"))
>>> scorer.score(candidate="Cats are running.", references=["A cat runs."])["ROUGE-1"].recall
0.66667
"""

from rouge_core.corpus import CorpusScore, MetricScore, corpus_score
from rouge_core.errors import RougeConfigError, RougeInputError
from rouge_core.kernel import kernel_info
from rouge_core.presets import PRESETS
from rouge_core.report import render_report
from rouge_core.scoring import RougeScorer
from rouge_core.settings import RougeSettings
from rouge_core.signature import Signature
from rouge_core.types import MetricStats
from rouge_core.version import __version__

__all__ = [
    "CorpusScore",
    "MetricScore",
    "PRESETS",
    "MetricStats",
    "RougeConfigError",
    "RougeInputError",
    "RougeScorer",
    "RougeSettings",
    "Signature",
    "corpus_score",
    "kernel_info",
    "render_report",
    "__version__",
]
