"""Per-system aggregation: every (profile, system)'s documents combined into its
table rows and ROUGE-1.5.5 report lines, and the tables written."""

from __future__ import annotations

import apache_beam as beam

from pipeline.beam.combiners import SystemCombineFn
from pipeline.beam.progress import tally
from pipeline.config import Profile, profiles_signature
from pipeline.io import files
from pipeline.io.tables import SYSTEM_COLUMNS, csv_text, parquet_bytes
from pipeline.render import tables as views
from pipeline.summaries import system_summaries
from rouge_core.report import evaluation_ids


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


def summarise(element, profiles: dict[str, Profile], eval_ids: dict) -> list:
    """`system_summaries` of one (profile, system), counted for the progress view."""
    out = system_summaries(element, profiles, eval_ids)
    tally("aggregating", "systems")
    return out


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
            >> beam.FlatMap(summarise, {p.name: p for p in self.profiles}, beam.pvalue.AsSingleton(eval_ids))
            | "GatherSummaries" >> beam.combiners.ToList()
            | "WriteSystemTables" >> beam.Map(write_system_tables, self.staging, self.profiles)
        )
        return eval_ids
