"""rouge_core: the official ROUGE-1.5.5 scores, exactly, in pure Python.

>>> from rouge_core import RougeScorer, RougeSettings
>>> scorer = RougeScorer(RougeSettings.from_flags("-n 2 -m"))
>>> scorer.score(candidate="Cats are running.", references=["A cat runs."])["ROUGE-1"].recall
0.66667

The report and the corpus-level aggregates need numpy: they are imported on first
use of their names (`corpus_score`, `render_report`, ...), so that `import
rouge_core` and scoring with the compiled kernel stay light (PEP 562).
"""

from importlib import import_module

from rouge_core.errors import RougeConfigError, RougeInputError
from rouge_core.kernel import kernel_info
from rouge_core.names import MetricName
from rouge_core.presets import PRESETS
from rouge_core.scoring import RougeScorer
from rouge_core.settings import RougeSettings
from rouge_core.signature import Signature
from rouge_core.types import MetricStats
from rouge_core.version import __version__

# Name -> module, imported when the name is first read.
_ON_FIRST_USE = {
    "CorpusScore": "rouge_core.corpus",
    "MetricScore": "rouge_core.corpus",
    "corpus_score": "rouge_core.corpus",
    "render_report": "rouge_core.report",
}

__all__ = [
    "PRESETS",
    "CorpusScore",
    "MetricName",
    "MetricScore",
    "MetricStats",
    "RougeConfigError",
    "RougeInputError",
    "RougeScorer",
    "RougeSettings",
    "Signature",
    "__version__",
    "corpus_score",
    "kernel_info",
    "render_report",
]


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        value = getattr(import_module(_ON_FIRST_USE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rouge_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ON_FIRST_USE))
