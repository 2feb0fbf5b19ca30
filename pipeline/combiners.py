"""CombineFns over the per-document scores of one (system, metric).

Each accumulator holds exact quantities (integers in 1e-5 score units, exact
fractions, or integer arrays), so merging in any order, on any number of
workers, gives bit-identical results.  The statistics themselves are pure
functions in `rouge_core.resampling`; these classes only accumulate.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import apache_beam as beam
import numpy as np

from rouge_core.resampling import (
    SCORE_UNITS,
    jackknife_bucket,
    jackknife_standard_error,
    percentile_interval,
    poisson_weights,
    to_units,
)

# Input to every CombineFn here: (doc_id, MetricStats).


def _units(stats) -> tuple[int, int, int]:
    return to_units(stats.recall), to_units(stats.precision), to_units(stats.f_measure)


def _exact(value):
    """A count as an exact number: an int when it is whole (most are), else a Fraction."""
    return int(value) if float(value).is_integer() else Fraction(value)


@lru_cache(maxsize=256)
def _weights(doc_id: str, replicates: int, seed: int) -> np.ndarray:
    """poisson_weights, remembered: a document reaches the bootstrap once per system
    and metric, one after the other.  Read-only, so a cached array cannot change."""
    weights = poisson_weights(doc_id, replicates, seed)
    weights.flags.writeable = False
    return weights


def _merge_into_first(accumulators):
    """Element-wise sum into the first accumulator (a list, or an array by rows),
    reading the rest as a stream, as Beam allows a CombineFn to."""
    accumulators = iter(accumulators)
    total = next(accumulators)
    for acc in accumulators:
        for i in range(len(total)):
            total[i] += acc[i]
    return total


class MeanCombineFn(beam.CombineFn):
    """Order-free mean R/P/F over documents, and the document count."""

    def create_accumulator(self):
        return [0, 0, 0, 0]  # n, sum R, sum P, sum F (units)

    def add_input(self, acc, element):
        _, stats = element
        r, p, f = _units(stats)
        acc[0] += 1
        acc[1] += r
        acc[2] += p
        acc[3] += f
        return acc

    def merge_accumulators(self, accumulators):
        return _merge_into_first(accumulators)

    def extract_output(self, acc):
        n = acc[0]
        if n == 0:
            return {"documents": 0, "recall": None, "precision": None, "f_measure": None}
        return {
            "documents": n,
            "recall": acc[1] / (n * SCORE_UNITS),
            "precision": acc[2] / (n * SCORE_UNITS),
            "f_measure": acc[3] / (n * SCORE_UNITS),
        }


class MicroCombineFn(beam.CombineFn):
    """Corpus-level (micro) R/P/F from pooled counts, as ROUGE-1.5.5 `-t 1` forms
    them: R = sum(hits) / sum(reference totals), P likewise, no f^-1 for ROUGE-W."""

    def __init__(self, alpha: float):
        self.alpha = alpha

    def create_accumulator(self):
        return [Fraction(0), Fraction(0), Fraction(0)]  # reference total, candidate total, hits

    def add_input(self, acc, element):
        _, stats = element
        acc[0] += _exact(stats.reference_total)
        acc[1] += _exact(stats.candidate_total)
        acc[2] += _exact(stats.hits)
        return acc

    def merge_accumulators(self, accumulators):
        return _merge_into_first(accumulators)

    def extract_output(self, acc):
        reference, candidate, hits = acc
        recall = float(hits / reference) if reference else 0.0
        precision = float(hits / candidate) if candidate else 0.0
        denominator = (1 - self.alpha) * precision + self.alpha * recall
        f = recall * precision / denominator if denominator > 0 else 0.0
        return {"recall": recall, "precision": precision, "f_measure": f}


class PoissonBootstrapCombineFn(beam.CombineFn):
    """Confidence intervals of the mean R/P/F by a Poisson bootstrap whose weights
    come from a hash of (seed, doc_id, replicate): mergeable and order-free, for
    corpora too large to gather on one worker."""

    def __init__(self, replicates: int, seed: int, confidence: float):
        self.replicates = replicates
        self.seed = seed
        self.confidence = confidence

    def create_accumulator(self):
        return np.zeros((4, self.replicates), dtype=np.int64)  # weight sums, weighted R, P, F

    def add_input(self, acc, element):
        doc_id, stats = element
        weights = _weights(doc_id, self.replicates, self.seed)
        acc[0] += weights
        for row, value in enumerate(_units(stats), 1):
            acc[row] += weights * value
        return acc

    def merge_accumulators(self, accumulators):
        return _merge_into_first(accumulators)

    def extract_output(self, acc):
        weight = acc[0]
        used = weight > 0
        out = {}
        for row, name in enumerate(("recall", "precision", "f_measure"), 1):
            if not used.any():
                out[name] = (None, None)
                continue
            means = acc[row][used] / (weight[used] * SCORE_UNITS)
            out[name] = percentile_interval(means, self.confidence)
        return out


class JackknifeCombineFn(beam.CombineFn):
    """Delete-a-group jackknife standard errors of the mean R/P/F; a document's
    group is a stable hash of its doc_id."""

    def __init__(self, buckets: int):
        self.buckets = buckets

    def create_accumulator(self):
        return np.zeros((4, self.buckets), dtype=np.int64)  # counts, sums of R, P, F

    def add_input(self, acc, element):
        doc_id, stats = element
        bucket = jackknife_bucket(doc_id, self.buckets)
        acc[0, bucket] += 1
        for row, value in enumerate(_units(stats), 1):
            acc[row, bucket] += value
        return acc

    def merge_accumulators(self, accumulators):
        return _merge_into_first(accumulators)

    def extract_output(self, acc):
        return {
            name: jackknife_standard_error(acc[row] / SCORE_UNITS, acc[0])
            for row, name in enumerate(("recall", "precision", "f_measure"), 1)
        }


class GatherDocumentsCombineFn(beam.CombineFn):
    """All (doc_id, MetricStats) of one key, sorted by doc_id: ROUGE-1.5.5's printed
    averages need every document, in the script's order, on one worker."""

    def create_accumulator(self):
        return []

    def add_input(self, acc, element):
        acc.append(element)
        return acc

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators)
        for acc in accumulators:
            total.extend(acc)
        return total

    def extract_output(self, acc):
        return sorted(acc, key=lambda item: item[0])
