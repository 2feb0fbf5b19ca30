"""Paired significance between systems, as a Beam transform (DESIGN.md section 7).

    scored documents (ScoredDocument: every metric's stats of one (system, doc_id))
      -> by doc_id: every pair of systems that both scored the document
      -> ((system_a, system_b), (doc_id, a's R/P/F units, b's)), every metric at once
      -> CombinePerKey: exact per-replicate sums (rouge_core.significance.PairedSums)
         per (metric, measure)
      -> per (metric, measure): Holm (or Benjamini-Hochberg) across the pairs
      -> rows of significance.{parquet,csv,md}

The statistics are the pure functions of `rouge_core.significance`; the
CombineFn only accumulates.  The random draws are functions of (seed, doc_id,
replicate), so the table is the same on every runner, sharding and order.

Cost: every document yields one element per pair of systems; each key holds
3 x `replicates` int64 per metric and measure (24 bytes per replicate), and
replicates are bounded by `rouge_core.significance.MAX_REPLICATES` (100,000).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import apache_beam as beam
import numpy as np

from rouge_core.aggregate import one_blas_thread, stack, units
from pipeline.io.tables import SIGNIFICANCE_COLUMNS, names, write_table
from rouge_core.types import MEASURES
from pipeline.render.significance import markdown_table
from rouge_core.errors import RougeConfigError
from rouge_core.significance import (
    ADJUSTMENTS,
    check_confidence,
    check_replicates,
    paired_sums,
    paired_test,
)

class PairedSignificanceCombineFn(beam.CombineFn):
    """(doc_id, a, b) of one pair of systems in, a & b their ScoredDocument values;
    out, one `PairedResult` per (metric, measure).

    The accumulator is a `PairedBlock`: per score column a `PairedSums` (integer
    counts and int64 arrays of per-replicate sums, so merging is exact and
    order-free), and documents waiting to enter them a block at a time
    (`paired_sums`: the draws made once per document, the sums as matrix products).
    """

    def __init__(self, replicates: int, seed: int, confidence: float):
        self.replicates = check_replicates(replicates)
        self.seed = seed
        self.confidence = check_confidence(confidence)

    def create_accumulator(self):
        return PairedBlock()

    def add_input(self, acc, element):
        acc.pending.append(element)
        if len(acc.pending) >= _BLOCK:
            acc.flush(self.replicates, self.seed)
        return acc

    def compact(self, acc):
        return acc.flush(self.replicates, self.seed)

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators).flush(self.replicates, self.seed)
        for acc in accumulators:
            total.merge(acc.flush(self.replicates, self.seed))
        return total

    def extract_output(self, acc):
        acc.flush(self.replicates, self.seed)
        return [paired_test(sums, self.confidence) for sums in acc.sums or []]


_BLOCK = 512  # documents per `paired_sums` call


class PairedBlock:
    """PairedSignificanceCombineFn's accumulator: the sums so far and the documents
    waiting to enter them."""

    def __init__(self):
        self.sums = None  # list of PairedSums, one per score column, once a document came
        self.pending = []

    def flush(self, replicates: int, seed: int) -> PairedBlock:
        if self.pending:
            one_blas_thread()
            ids = [doc_id for doc_id, _, _ in self.pending]
            a = _units([a for _, a, _ in self.pending])
            b = _units([b for _, _, b in self.pending])
            self.pending = []
            self.merge_sums(paired_sums(ids, list(zip(a.T, b.T)), replicates, seed))
        return self

    def merge_sums(self, sums) -> None:
        if self.sums is None:
            self.sums = sums
        elif sums is not None:
            for mine, theirs in zip(self.sums, sums):
                mine.merge(theirs)

    def merge(self, other: PairedBlock) -> PairedBlock:
        self.merge_sums(other.sums)
        return self


def _units(values: list[bytes]) -> np.ndarray:
    """ScoredDocument values -> R/P/F units, one row per document."""
    return units(stack(values)).reshape(len(values), -1)


def _by_document(element):
    """A ScoredDocument keyed by (profile, doc_id)."""
    return (element.profile, element.doc_id), (element.system, element.values)


def system_pairs(systems: Sequence[str], pairs_mode: str) -> list[tuple[str, str]]:
    """The (system_a, system_b) pairs to test among the sorted `systems`.

    "all": every pair, system_a < system_b by name.  A baseline's name: every
    other system against it, system_b = the baseline, so a positive difference
    means better than the baseline.

    Example:
        >>> system_pairs(["a", "b", "c"], "all")
        [('a', 'b'), ('a', 'c'), ('b', 'c')]
        >>> system_pairs(["a", "b", "c"], "b")
        [('a', 'b'), ('c', 'b')]
    """
    if pairs_mode == "all":
        return list(combinations(systems, 2))
    if pairs_mode not in systems:
        return []
    return [(s, pairs_mode) for s in systems if s != pairs_mode]


def pair_document(element, pairs_mode: str):
    """((profile, doc_id), [(system, values), ...]) ->
    ((profile, system_a, system_b), (doc_id, a values, b values))
    for every pair of systems that scored the document."""
    (profile, doc_id), systems = element
    by_system = {}
    for system, scores in systems:
        if system in by_system:
            raise ValueError(f"system {system!r} scored document {doc_id!r} twice")
        by_system[system] = scores
    for a, b in system_pairs(sorted(by_system), pairs_mode):
        yield (profile, a, b), (doc_id, by_system[a], by_system[b])


def pair_rows(element, tags: dict[str, list[str]]):
    """((profile, system_a, system_b), one PairedResult per score column) ->
    ((profile, metric, measure), ((profile, metric, measure, a, b), result)) per column."""
    (profile, a, b), results = element
    columns = [(tag, measure) for tag in tags[profile] for measure in MEASURES]
    for (tag, measure), result in zip(columns, results):
        yield (profile, tag, measure), ((profile, tag, measure, a, b), result)


def adjusted_rows(element, adjust: str) -> list[dict]:
    """((profile, metric, measure), [((profile, metric, measure, a, b), PairedResult), ...])
    -> table rows, with p_permutation adjusted across the pairs of this metric and measure."""
    _, results = element
    results = sorted(results, key=lambda kv: kv[0])
    adjusted = ADJUSTMENTS[adjust]([result.p_permutation for _, result in results])
    return [
        {
            "profile": profile,
            "metric": metric,
            "measure": measure,
            "system_a": a,
            "system_b": b,
            **result._asdict(),
            "p_adjusted": p,
        }
        for ((profile, metric, measure, a, b), result), p in zip(results, adjusted)
    ]


class PairedSignificance(beam.PTransform):
    """Scored documents in, one row per (profile, metric, measure, system_a, system_b) out
    (the columns of SIGNIFICANCE_COLUMNS), on the documents both systems scored.

    Args:
        tags: profile -> its metric tags, in order (the columns of the values).
        pairs_mode: "all" (every pair of systems) or the name of a baseline system.
        replicates: bootstrap replicates = random sign patterns, 1 .. 100,000.
        seed: the seed of the counter-based draws.
        confidence: of the bootstrap interval of the difference, in percent.
        adjust: "holm" (family-wise error) or "bh" (Benjamini-Hochberg, false
            discovery rate), applied to p_permutation across the pairs of each
            (metric, measure).
    """

    def __init__(
        self,
        tags: dict[str, list[str]],
        pairs_mode: str = "all",
        replicates: int = 1000,
        seed: int = 0,
        confidence: float = 95.0,
        adjust: str = "holm",
    ):
        super().__init__()
        if adjust not in ADJUSTMENTS:
            raise RougeConfigError(f"adjust must be one of {sorted(ADJUSTMENTS)}, got {adjust!r}")
        if not pairs_mode:
            raise RougeConfigError('pairs_mode must be "all" or the name of a baseline system')
        self.tags = dict(tags)
        self.pairs_mode = pairs_mode
        self.adjust = adjust
        self.combine_fn = PairedSignificanceCombineFn(replicates, seed, confidence)

    def describe(self) -> str:
        fn = self.combine_fn
        family = "Holm" if self.adjust == "holm" else "Benjamini-Hochberg"
        return (
            f"Paired tests on the documents both systems scored: bootstrap ({fn.replicates} Poisson "
            f"replicates, {fn.confidence:g}% percentile interval) and approximate randomization "
            f"({fn.replicates} sign flips), seed {fn.seed}; p_adjusted: {family} on p_permutation "
            "across the pairs of each metric and measure."
        )

    def expand(self, documents):
        return (
            documents
            | "KeyByDocument" >> beam.Map(_by_document)
            | "GroupByDocument" >> beam.GroupByKey()
            | "PairSystems" >> beam.FlatMap(pair_document, self.pairs_mode)
            | "PairedTests" >> beam.CombinePerKey(self.combine_fn)
            | "KeyByMetricMeasure" >> beam.FlatMap(pair_rows, self.tags)
            | "GroupPairs" >> beam.GroupByKey()
            | "AdjustPValues" >> beam.FlatMap(adjusted_rows, self.adjust)
        )


def sort_rows(rows: list[dict], tags: dict[str, list[str]]) -> list[dict]:
    """By profile and metric (in the order of `tags`: profile -> its metric tags),
    measure, system_a, system_b."""
    order = {(p, tag): i for i, (p, tag) in enumerate((p, t) for p, ts in tags.items() for t in ts)}
    measure = {m: i for i, m in enumerate(MEASURES)}
    return sorted(
        rows,
        key=lambda r: (
            order.get((r["profile"], r["metric"]), len(order)),
            r["profile"],
            r["metric"],
            measure[r["measure"]],
            r["system_a"],
            r["system_b"],
        ),
    )


def write_significance_tables(rows: list[dict], folder: str, tags: dict[str, list[str]], description: str = "") -> None:
    """significance.{parquet,csv,md} in `folder` (any Beam filesystem), sorted by
    profile, metric, measure and the pair (`tags`: profile -> metric tags, in order);
    `description` (e.g. PairedSignificance.describe()) heads the Markdown table."""
    rows = sort_rows(rows, tags)
    rows = [{name: row[name] for name in names(SIGNIFICANCE_COLUMNS)} for row in rows]
    write_table(folder, "significance", rows, SIGNIFICANCE_COLUMNS, markdown_table(rows, description))


class SignificanceTables(beam.PTransform):
    """ScoredDocuments in; significance.{parquet,csv,md} written to `staging`, with the
    run's [significance] settings (`config`)."""

    def __init__(self, config, profiles, staging: str):
        super().__init__()
        self.tags = {profile.name: profile.tags for profile in profiles}
        self.staging = staging
        self.test = PairedSignificance(
            self.tags,
            config.baseline or "all",
            config.replicates,
            config.seed,
            float(profiles[0].settings[0].confidence),
            config.adjust,
        )

    def expand(self, documents):
        return (
            documents
            | "PairedSignificance" >> self.test
            | "GatherSignificance" >> beam.combiners.ToList()
            | "WriteSignificance" >> beam.Map(write_significance_tables, self.staging, self.tags, self.test.describe())
        )
