"""rouge-score's `rouge_score.scoring`: Score, AggregateScore, BootstrapAggregator, fmeasure.

The same names and fields as rouge-score 0.1.2.  One difference, on purpose:
`BootstrapAggregator` is **seeded**.  rouge-score draws its bootstrap samples from
NumPy's global random state, so the same `aggregate()` gives different intervals
(and a different `mid`, which is the median of the resampled means, not the mean)
on every run.  Here the draws come from `numpy.random.RandomState(seed)`, seed 0
unless given: the same scores give the same numbers on every run and machine.  The
algorithm is rouge-score's, step for step, so `BootstrapAggregator(seed=s)` gives
exactly what rouge-score's gives after `numpy.random.seed(s)`; `seed=None` draws
from the global state as rouge-score does.
"""

from __future__ import annotations

import abc
import collections
from typing import Dict

import numpy as np

DEFAULT_SEED = 0


class Score(collections.namedtuple("Score", ["precision", "recall", "fmeasure"])):
    """Tuple containing precision, recall, and f-measure values."""

    __slots__ = ()


class BaseScorer(metaclass=abc.ABCMeta):
    """Base class for Scorer objects: `score(target, prediction)` -> {type: Score}."""

    @abc.abstractmethod
    def score(self, target: str, prediction: str) -> Dict[str, Score]:
        """Calculates score between the target and prediction."""


class AggregateScore(collections.namedtuple("AggregateScore", ["low", "mid", "high"])):
    """Tuple containing confidence intervals for scores."""

    __slots__ = ()


class BootstrapAggregator:
    """Aggregates scores to provide confidence intervals (bootstrap of the mean).

    Args:
        confidence_interval: the interval's coverage, in [0, 1] (0.95: the 2.5th
            and 97.5th percentiles of the resampled means).
        n_samples: bootstrap samples, > 0.
        seed: the seed of the draws (default 0, so results repeat); None draws
            from NumPy's global random state, as rouge-score does.

    Example:
        >>> aggregator = BootstrapAggregator()
        >>> aggregator.add_scores({"rouge1": Score(1.0, 0.5, 2 / 3)})
        >>> aggregator.add_scores({"rouge1": Score(0.5, 0.5, 0.5)})
        >>> result = aggregator.aggregate()["rouge1"]
        >>> float(result.mid.precision), float(result.low.precision), float(result.high.precision)
        (0.75, 0.5, 1.0)
    """

    def __init__(self, confidence_interval=0.95, n_samples=1000, seed: int | None = DEFAULT_SEED):
        if confidence_interval < 0 or confidence_interval > 1:
            raise ValueError("confidence_interval must be in range [0, 1]")
        if n_samples <= 0:
            raise ValueError("n_samples must be positive")
        self._n_samples = n_samples
        self._confidence_interval = confidence_interval
        self._seed = seed
        self._scores = collections.defaultdict(list)

    def add_scores(self, scores):
        """Adds a sample: a dict mapping score types to Score (or any named tuple)."""
        for score_type, score in scores.items():
            self._scores[score_type].append(score)

    def aggregate(self):
        """A dict mapping each score type to an AggregateScore(low, mid, high).

        Each call draws afresh from the seed, so calling it twice gives the same result.
        """
        random = np.random.mtrand._rand if self._seed is None else np.random.RandomState(self._seed)
        result = {}
        for score_type, scores in self._scores.items():
            score_matrix = np.vstack(tuple(scores))  # (sample, measure)
            percentiles = self._bootstrap_resample(score_matrix, random)
            intervals = tuple(scores[0].__class__(*percentiles[j, :]) for j in range(3))
            result[score_type] = AggregateScore(low=intervals[0], mid=intervals[1], high=intervals[2])
        return result

    def _bootstrap_resample(self, matrix, random):
        """(low, mid, high) x measure: percentiles of the means of n_samples resamples.

        rouge-score's loop, draw for draw (`choice` of row indices with replacement,
        the mean of the drawn rows), so that its numbers are reproduced exactly.
        """
        sample_mean = np.zeros((self._n_samples, matrix.shape[1]))
        rows = np.arange(matrix.shape[0])
        for i in range(self._n_samples):
            sample_idx = random.choice(rows, size=matrix.shape[0])
            sample_mean[i, :] = np.mean(matrix[sample_idx, :], axis=0)
        percentile_delta = (1 - self._confidence_interval) / 2
        q = 100 * np.array([percentile_delta, 0.5, 1 - percentile_delta])
        return np.percentile(sample_mean, q, axis=0)


def fmeasure(precision, recall):
    """F1 = 2 * P * R / (P + R), in rouge-score's order of operations; 0.0 when P + R is 0.

    Example:
        >>> fmeasure(0.5, 0.25)
        0.3333333333333333
    """
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
