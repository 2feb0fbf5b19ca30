"""Per-system aggregation: every (profile, system)'s documents combined into its
table rows and ROUGE-1.5.5 report lines, and the tables written."""

from __future__ import annotations

import apache_beam as beam

from pipeline.beam.combiners import SystemCombineFn
from pipeline.beam.progress import tally
from pipeline.config import Profile, profiles_signature
from pipeline.io import files
from pipeline.io.tables import SYSTEM_COLUMNS, csv_text, parquet_bytes
from rouge_core.types import MEASURES
from pipeline.render import tables as views
from rouge_core import MetricStats, RougeSettings
from rouge_core.report import averages_of, evaluation_ids, metric_block


def system_summaries(element, profiles: dict[str, Profile], eval_ids: dict) -> list:
    """((profile, system), SystemCombineFn output) -> per metric (profile, system,
    metric, table row, ROUGE-1.5.5 report lines)."""
    (name, system), (metrics, documents) = element
    profile = profiles[name]
    out = []
    first = 0  # a profile's settings hold consecutive metrics
    for settings in profile.settings:
        tags = settings.metric_tags()
        part = slice(first, first + len(tags))
        # What the script averages: R, P, F (-t 0) or the counts (-t 1), straight from the values.
        averaged = slice(3, 6) if settings.counting == 0 else slice(0, 3)
        averages = averages_of(system, {eval_ids[d]: v[part, averaged] for d, v in documents}, len(tags), settings)
        averages = [None] * len(tags) if averages is None else averages
        # Each document's MetricStats only where the report prints them (-d) or sums them (-t 2).
        by_eval_id = {}
        if settings.per_document or settings.counting == 2:
            by_eval_id = {eval_ids[d]: dict(zip(tags, map(MetricStats._make, v[part].tolist()))) for d, v in documents}
        for k, (tag, stats) in enumerate(zip(tags, metrics[part])):
            block = metric_block(system, tag, {e: scores[tag] for e, scores in by_eval_id.items()}, settings, averages[k])
            out.append((name, system, tag, _system_row(name, system, tag, stats, settings, averages[k]), block))
        first += len(tags)
    tally("aggregating", "systems")
    return out


def _system_row(profile: str, system: str, tag: str, stats, settings: RougeSettings, averages) -> dict:
    row = {"profile": profile, "system": system, "metric": tag, "documents": stats.documents}
    # The script's printed averages exist only in its own convention (and not under -t 2).
    printed = averages if settings.preset == "rouge155" and averages else [(None, None, None)] * 3
    for name, mean, micro, se, interval in zip(MEASURES, stats.means, stats.micro(settings.alpha_value), stats.jackknife_se, printed):
        row[name], row[f"micro_{name}"], row[f"jackknife_se_{name}"] = mean, micro, se
        row[f"rouge155_{name}"], row[f"rouge155_{name}_low"], row[f"rouge155_{name}_high"] = (
            None if v is None else float(v) for v in interval
        )
    row["bootstrap_f_measure_low"], row["bootstrap_f_measure_high"] = stats.bootstrap_interval(float(settings.confidence))
    row["signature"] = settings.signature()
    return row


def write_system_tables(summaries: list, staging: str, profiles: list[Profile]) -> None:
    """system_scores.{parquet,csv,md} sorted by profile (in the config's order), system
    and metric order; the ROUGE-1.5.5 report of a run with one profile as
    rouge155.txt, else one rouge155-<profile>.txt per profile."""
    order = {(p.name, tag): (i, j) for i, p in enumerate(profiles) for j, tag in enumerate(p.tags)}
    summaries = sorted(summaries, key=lambda s: (order[s[0], s[2]][0], s[1], order[s[0], s[2]][1]))
    rows = [s[3] for s in summaries]
    metadata = {"signature": profiles_signature(profiles)}
    files.write_bytes(files.join(staging, "system_scores.parquet"), parquet_bytes(rows, SYSTEM_COLUMNS, metadata))
    files.write_bytes(files.join(staging, "system_scores.csv"), csv_text(rows).encode("utf-8"))
    files.write_bytes(files.join(staging, "system_scores.md"), views.profiles_markdown(rows, profiles).encode("utf-8"))
    for profile in profiles:
        report = "".join(line + "\n" for s in summaries if s[0] == profile.name for line in s[4])
        name = "rouge155.txt" if len(profiles) == 1 else f"rouge155-{profile.name}.txt"
        files.write_bytes(files.join(staging, name), report.encode("utf-8"))


class AggregatePerSystem(beam.PTransform):
    """ScoredDocuments in; system_scores.{parquet,csv,md} and the ROUGE-1.5.5
    report(s) written to `staging`.  Returns the evaluation ids ({doc_id: id}, one
    element), which number the documents for the report."""

    def __init__(self, profiles: list[Profile], statistics, eval_ids: str, staging: str):
        super().__init__()
        self.profiles, self.statistics, self.eval_ids, self.staging = profiles, statistics, eval_ids, staging

    def expand(self, documents):
        stats = self.statistics
        combine = SystemCombineFn(stats.bootstrap_replicates, stats.bootstrap_seed, stats.jackknife_buckets)
        aggregates = (
            documents
            | "KeyBySystem" >> beam.Map(lambda d: ((d.profile, d.system), (d.doc_id, d.values)))
            | "CombinePerSystem" >> beam.CombinePerKey(combine)
        )
        eval_ids = (
            documents
            | "DocIds" >> beam.Map(lambda d: d.doc_id)
            | "DistinctDocIds" >> beam.Distinct()
            | "EvalIds" >> beam.combiners.ToList()
            | "NumberDocs" >> beam.Map(evaluation_ids, self.eval_ids)
        )
        (
            aggregates
            | "Rouge155Averages"
            >> beam.FlatMap(system_summaries, {p.name: p for p in self.profiles}, beam.pvalue.AsSingleton(eval_ids))
            | "GatherSummaries" >> beam.combiners.ToList()
            | "WriteSystemTables" >> beam.Map(write_system_tables, self.staging, self.profiles)
        )
        return eval_ids
