"""Paired significance between systems, as a Beam transform (DESIGN.md section 7).

    scored documents ((system, doc_id) -> {metric tag: stats})
      -> by doc_id: every pair of systems that both scored the document
      -> ((metric, measure, system_a, system_b), (doc_id, a, b))
      -> CombinePerKey: exact per-replicate sums (rouge_core.significance.PairedSums)
      -> per (metric, measure): Holm (or Benjamini-Hochberg) across the pairs
      -> rows of significance.{parquet,csv,md}

The statistics are the pure functions of `rouge_core.significance`; the
CombineFn only accumulates.  The random draws are functions of (seed, doc_id,
replicate), so the table is the same on every runner, sharding and order.

Cost: every document yields one element per pair of systems, metric and
measure; each key holds 3 x `replicates` int64 (24 bytes per replicate), and
replicates are bounded by `rouge_core.significance.MAX_REPLICATES` (100,000).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import apache_beam as beam
import pyarrow as pa

from pipeline.tables import _markdown_cell, write_table
from rouge_core.errors import RougeConfigError
from rouge_core.resampling import to_units
from rouge_core.significance import (
    ADJUSTMENTS,
    PairedSums,
    check_confidence,
    check_replicates,
    paired_test,
)

MEASURES = ("recall", "precision", "f_measure")
SIGNIFICANCE_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("measure", pa.string()),
        ("system_a", pa.string()),
        ("system_b", pa.string()),
        ("documents", pa.int64()),
        ("mean_a", pa.float64()),
        ("mean_b", pa.float64()),
        ("difference", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("p_bootstrap", pa.float64()),
        ("p_permutation", pa.float64()),
        ("p_adjusted", pa.float64()),
    ]
)


class PairedSignificanceCombineFn(beam.CombineFn):
    """(doc_id, a, b) with scores on the 0-1 scale in, a `PairedResult` out.

    The accumulator is a `PairedSums`: integer counts and int64 arrays of
    per-replicate sums, so merging is exact and order-free.
    """

    def __init__(self, replicates: int, seed: int, confidence: float):
        self.replicates = check_replicates(replicates)
        self.seed = seed
        self.confidence = check_confidence(confidence)

    def create_accumulator(self):
        return PairedSums(self.replicates)

    def add_input(self, acc, element):
        doc_id, a, b = element
        return acc.add(doc_id, to_units(a), to_units(b), self.seed)

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators)
        for acc in accumulators:
            total.merge(acc)
        return total

    def extract_output(self, acc):
        return paired_test(acc, self.confidence)


def _by_document(element):
    """A ScoredDocument (or ((system, doc_id), scores)) keyed by its doc_id."""
    if hasattr(element, "scores"):
        return element.doc_id, (element.system, element.scores)
    (system, doc_id), scores = element
    return doc_id, (system, scores)


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
    """(doc_id, [(system, scores), ...]) -> ((metric, measure, a, b), (doc_id, a value, b value))
    for every pair of systems that scored the document and every metric both have."""
    doc_id, systems = element
    by_system = {}
    for system, scores in systems:
        if system in by_system:
            raise ValueError(f"system {system!r} scored document {doc_id!r} twice")
        by_system[system] = scores
    for a, b in system_pairs(sorted(by_system), pairs_mode):
        scores_a, scores_b = by_system[a], by_system[b]
        for tag in sorted(scores_a.keys() & scores_b.keys()):
            for measure in MEASURES:
                yield (
                    (tag, measure, a, b),
                    (
                        doc_id,
                        getattr(scores_a[tag], measure),
                        getattr(scores_b[tag], measure),
                    ),
                )


def adjusted_rows(element, adjust: str) -> list[dict]:
    """((metric, measure), [((metric, measure, a, b), PairedResult), ...]) -> table rows,
    with p_permutation adjusted across the pairs of this metric and measure."""
    _, results = element
    results = sorted(results, key=lambda kv: kv[0])
    adjusted = ADJUSTMENTS[adjust]([result.p_permutation for _, result in results])
    return [
        {
            "metric": metric,
            "measure": measure,
            "system_a": a,
            "system_b": b,
            **result._asdict(),
            "p_adjusted": p,
        }
        for ((metric, measure, a, b), result), p in zip(results, adjusted)
    ]


class PairedSignificance(beam.PTransform):
    """Scored documents in, one row per (metric, measure, system_a, system_b) out
    (the columns of SIGNIFICANCE_SCHEMA), on the documents both systems scored.

    Args:
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
            | "KeyByMetricMeasure" >> beam.Map(lambda kv: ((kv[0][0], kv[0][1]), kv))
            | "GroupPairs" >> beam.GroupByKey()
            | "AdjustPValues" >> beam.FlatMap(adjusted_rows, self.adjust)
        )


def sort_rows(rows: list[dict], metric_tags: Sequence[str] | None = None) -> list[dict]:
    """By metric (in `metric_tags` order when given, else by name), measure, system_a, system_b."""
    order = {tag: i for i, tag in enumerate(metric_tags or ())}
    measure = {m: i for i, m in enumerate(MEASURES)}
    return sorted(
        rows,
        key=lambda r: (
            order.get(r["metric"], len(order)),
            r["metric"],
            measure[r["measure"]],
            r["system_a"],
            r["system_b"],
        ),
    )


def as_points(x: float | None) -> str:
    """A 0-1 score for people: x 100, two decimals."""
    return "" if x is None else f"{100 * x:.2f}"


def format_p(p: float | None) -> str:
    """A p-value for people: four decimals, or two significant digits below 0.001."""
    if p is None:
        return ""
    return f"{p:.1e}" if p < 0.001 else f"{p:.4f}"


def markdown_table(rows: list[dict], description: str = "") -> str:
    lines = [description, ""] if description else []
    lines += [
        "Scores x 100; difference = mean A - mean B on the documents both scored.",
        "",
        (
            "| metric | measure | system A | system B | docs | A | B | difference (CI) | p bootstrap "
            "| p permutation | p adjusted |"
        ),
        "|---|---|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        difference = as_points(r["difference"])
        if r["ci_low"] is not None:
            difference += f" ({as_points(r['ci_low'])} to {as_points(r['ci_high'])})"
        cells = [
            r["metric"],
            r["measure"],
            _markdown_cell(r["system_a"]),
            _markdown_cell(r["system_b"]),
            str(r["documents"]),
            as_points(r["mean_a"]),
            as_points(r["mean_b"]),
            difference,
            format_p(r["p_bootstrap"]),
            format_p(r["p_permutation"]),
            format_p(r["p_adjusted"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_significance_tables(
    rows: list[dict], folder: str, metric_tags: Sequence[str] | None = None, description: str = ""
) -> None:
    """significance.{parquet,csv,md} in `folder` (any Beam filesystem), sorted by
    metric, measure and the pair; `description` (e.g. PairedSignificance.describe())
    heads the Markdown table."""
    rows = sort_rows(rows, metric_tags)
    rows = [{name: row[name] for name in SIGNIFICANCE_SCHEMA.names} for row in rows]
    write_table(folder, "significance", rows, SIGNIFICANCE_SCHEMA, markdown_table(rows, description))
