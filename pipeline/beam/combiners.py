"""The CombineFn over one system's scored documents (every metric at once), and
`Gathered`, the graph's gathering of a few elements into one.

One element per (scored batch, system): [(doc_id, values), ...], `values` the float64 bytes
of an array of shape (metrics, 6) holding each metric's MetricStats fields in
order (reference total, candidate total, hits, R, P, F).  The accumulator is
`rouge_core.aggregate.SystemSums` (exact, so merging in any order, on any number
of workers, gives bit-identical results); this class only hands Beam its
create / add / merge / extract steps.
"""

from __future__ import annotations

import apache_beam as beam

from rouge_core.aggregate import SystemSums


class SystemCombineFn(beam.CombineFn):
    """Lists of (doc_id, values) of one system in; out, per metric its sufficient statistics
    (`SystemStats`: mean R/P/F, pooled counts, Poisson-bootstrap replicate means,
    jackknife standard errors).

    The bootstrap weights come from a hash of (seed, doc_id, replicate) and a
    document's jackknife group from a hash of its doc_id: mergeable and order-free,
    for corpora too large to gather statistics on one worker.  The accumulator's
    size does not grow with the documents (see SystemSums), so Beam's combiner
    lifting sends small partial sums across the shuffle, not documents.
    """

    def __init__(self, replicates: int, seed: int, buckets: int):
        self.replicates, self.seed, self.buckets = replicates, seed, buckets

    def create_accumulator(self):
        return SystemSums(self.replicates, self.buckets)

    def add_input(self, acc, documents):
        return acc.extend(documents, self.seed)

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators)
        for acc in accumulators:
            total.merge(acc, self.seed)
        return total

    def extract_output(self, acc):
        acc.flush(self.seed)
        return [acc.metric(m) for m in range(acc.metrics)]


class Gathered(beam.PTransform):
    """A PCollection in; out one element, the list of all its elements (in no set
    order; [] when it has none), held by one worker: what `beam.combiners.ToList()`
    gives, for the few elements a table is written from (a row per system, a block
    per metric).  ToList is a CombineGlobally, with its default for an empty input:
    9 transforms and 3 of the runner's stages, about 0.09 CPU-s a run on the local
    runner whatever the input; this is a one-element Create (every runner
    translates it; the Dask runner no bare Impulse) and a side input, 0.03."""

    def expand(self, pcoll):
        return (
            pcoll.pipeline
            | "Once" >> beam.Create([None])
            | "All" >> beam.Map(lambda _, items: list(items), beam.pvalue.AsList(pcoll))
        )
