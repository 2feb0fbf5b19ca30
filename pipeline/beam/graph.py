"""The pipeline graph, stage by stage (see DESIGN.md section 3)."""

from __future__ import annotations

import apache_beam as beam

from pipeline import combiners, tables
from pipeline.config import RunConfig
from pipeline.documents import HUMAN, UNUSED, GroupDocuments, ScoreDocumentFn
from pipeline.read import ERRORS, ReadSummaries
from pipeline.significance import PairedSignificance, write_significance_tables
from rouge_core.report import evaluation_ids


def build_pipeline(p: beam.Pipeline, config: RunConfig, inputs: dict, staging: str) -> None:
    """Read, validate, score, aggregate per system, and write every table to `staging`.

    `inputs` holds the resolved file lists ("candidates", "references") and the
    error rows of globs that matched nothing ("missing").
    """
    profiles = config.profile_list()
    first = profiles[0].name  # the counts count rows once: in the first profile
    tags = {profile.name: profile.tags for profile in profiles}
    stats = config.statistics
    read = p | "ReadSummaries" >> ReadSummaries(
        config.input, inputs["candidates"], inputs["references"], staging, config.run.progress_seconds
    )
    keep_conflicts = config.input.conflicting_references == "keep"
    grouped = (read["candidates"], read["references"]) | "GroupDocuments" >> GroupDocuments(keep_conflicts)
    human = config.human.name if config.human.enabled else ""
    scored = grouped.documents | "ScoreDocuments" >> beam.ParDo(
        ScoreDocumentFn(profiles, config.run.progress_seconds, human)
    ).with_outputs(ERRORS, HUMAN, main="documents")
    # Every table shows the human pseudo-system next to the systems; the counts do not.
    documents = (scored.documents, scored[HUMAN]) | "WithHuman" >> beam.Flatten()
    errors = (grouped[ERRORS], scored[ERRORS]) | "CollectErrors" >> beam.Flatten()
    error_count = errors | "CountErrors" >> beam.combiners.Count.Globally()

    aggregates = (
        documents
        | "KeyBySystem" >> beam.Map(lambda d: ((d.profile, d.system), (d.doc_id, d.values)))
        | "AggregatePerSystem"
        >> beam.CombinePerKey(
            combiners.SystemCombineFn(stats.bootstrap_replicates, stats.bootstrap_seed, stats.jackknife_buckets)
        )
    )
    eval_ids = (
        documents
        | "DocIds" >> beam.Map(lambda d: d.doc_id)
        | "DistinctDocIds" >> beam.Distinct()
        | "EvalIds" >> beam.combiners.ToList()
        | "NumberDocs" >> beam.Map(evaluation_ids, config.rouge.eval_ids)
    )
    summaries = aggregates | "Rouge155Averages" >> beam.FlatMap(
        tables.system_summaries, {p.name: p for p in profiles}, beam.pvalue.AsSingleton(eval_ids)
    )

    (
        summaries
        | "GatherSummaries" >> beam.combiners.ToList()
        | "WriteSystemTables" >> beam.Map(tables.write_system_tables, staging, profiles)
    )
    if config.significance.enabled:
        test = PairedSignificance(
            tags,
            config.significance.baseline or "all",
            config.significance.replicates,
            config.significance.seed,
            float(profiles[0].settings[0].confidence),
            config.significance.adjust,
        )
        (
            documents
            | "PairedSignificance" >> test
            | "GatherSignificance" >> beam.combiners.ToList()
            | "WriteSignificance"
            >> beam.Map(write_significance_tables, staging, tags, test.describe())
        )
    once = scored.documents | "FirstProfile" >> beam.Filter(lambda d: d.profile == first)
    scored_count = once | "CountScored" >> beam.combiners.Count.Globally()
    documents | "WritePerDocument" >> tables.ShardedWrite(
        lambda d: f"{d.system}\x1f{d.doc_id}",
        tables.per_document_writer(staging, config.output.per_document_formats, profiles),
        documents | "CountDocumentScores" >> beam.combiners.Count.Globally(),
        config.output.per_document_shards,
    )
    errors | "WriteErrors" >> tables.ShardedWrite(
        lambda e: f"{e.source}\x1f{e.position}", tables.errors_writer(staging), error_count
    )
    counts = {
        "read_counts": read["counts"] | "SumReadCounts" >> beam.CombineGlobally(tables.merge_read_counts),
        "scored": scored_count,
        "errors_by_reason": errors
        | "ReasonOf" >> beam.Map(lambda e: e.reason)
        | "CountReasons" >> beam.combiners.Count.PerElement()
        | "ReasonsToList" >> beam.combiners.ToList(),
        "reference_rows": read["references"] | "CountReferenceRows" >> beam.combiners.Count.Globally(),
        "reference_rows_unused": grouped[UNUSED] | "SumUnusedReferences" >> beam.CombineGlobally(sum),
        "documents": eval_ids | "CountDocuments" >> beam.Map(len),
        "human_documents": scored[HUMAN]
        | "HumanFirstProfile" >> beam.Filter(lambda d: d.profile == first)
        | "CountHuman" >> beam.combiners.Count.Globally(),
        "documents_by_system": documents
        | "OneProfile" >> beam.Filter(lambda d: d.profile == first)
        | "SystemOf" >> beam.Map(lambda d: d.system)
        | "CountPerSystem" >> beam.combiners.Count.PerElement()
        | "SystemsToList" >> beam.combiners.ToList(),
    }
    (
        p
        | "Once" >> beam.Create([None])
        | "WriteCounts"
        >> beam.Map(
            tables.write_counts, staging, **{name: beam.pvalue.AsSingleton(pc) for name, pc in counts.items()}
        )
    )
