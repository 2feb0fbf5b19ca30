"""The pipeline graph, stage by stage (see DESIGN.md section 3): one composite
transform per stage, each in its own module and tested alone."""

from __future__ import annotations

from typing import Optional

import apache_beam as beam

from pipeline.beam.aggregate import AggregatePerSystem, report_name
from pipeline.beam.counts import CountRows
from pipeline.beam.documents import GroupDocuments, ScoreDocuments
from pipeline.beam.read import ReadSummaries, bucket_count
from pipeline.beam.reuse import CopyCarried, ReadPrevious, reuse_tasks
from pipeline.beam.significance import SignificanceTables
from pipeline.beam.write import WriteErrors, WriteResults
from pipeline.config import RunConfig
from pipeline.io.rows import most_texts
from pipeline.reuse import ReusePlan, with_carried_counts


def build_pipeline(p: beam.Pipeline, config: RunConfig, inputs: dict, staging: str,
                   reuse: Optional[ReusePlan] = None) -> None:
    """Read, validate, score, aggregate per system, and write every table to `staging`.

    `inputs` holds the resolved file lists ("candidates", "references").  Rows
    travel in batches: read in batches per bucket of documents, joined and scored a
    bucket at a time, and every later stage takes scored batches (per profile, a
    list of (system, doc_id, values, digest), a document's systems together).
    With `reuse` (pipeline.reuse: a previous run's rows and systems this run may
    take), the previous rows join the documents of their bucket and a row scored
    before with the same digests is not scored again; systems carried whole are
    not read, their files and table rows are copied, and significance, which needs
    every system of a document together, comes from the per-document files.
    """
    profiles = config.profile_list()
    human = config.human.name if config.human.enabled else ""
    buckets = bucket_count(inputs["candidates"] + inputs["references"])
    carried = reuse.carried if reuse else ()
    read = p | "ReadSummaries" >> ReadSummaries(
        config.input, inputs["candidates"], inputs["references"], staging, config.run.progress_seconds, buckets,
    )
    reports = {report_name(q.name, profiles): q.name for q in profiles if q.reports_rouge155}
    tasks = p | "ReuseTasks" >> beam.Create(reuse_tasks(reuse, reports)) if reuse else None
    previous = tasks | "ReadPrevious" >> ReadPrevious(reuse, buckets) if reuse else None
    grouped = (read["candidates"], read["references"], *([previous["items"]] if reuse else [])) | "GroupDocuments" >> (
        GroupDocuments(staging, config.input.conflicting_references == "keep", most_texts(config.input))
    )
    scored = grouped["documents"] | "ScoreDocuments" >> ScoreDocuments(profiles, config.run.progress_seconds, human)
    errors = (grouped["errors"], scored["errors"]) | "CollectErrors" >> beam.Flatten()
    written = scored["documents"] | "WriteResults" >> WriteResults(staging, config.output, profiles)
    copied = tasks | "CopyCarried" >> CopyCarried(reuse, staging) if carried else None
    significance = None
    if config.significance.enabled:
        tables = (written, copied["files"]) | "AllDocumentFiles" >> beam.Flatten() if carried else scored["documents"]
        significance = tables | "Significance" >> SignificanceTables(config.significance, profiles, staging,
                                                                       bool(carried), reuse)
    counts = {
        "read_counts": read["counts"],
        "references": read["references"],
        "unused": grouped["unused"],
        "human": scored["human"],
        "documents": scored["documents"],
        "errors": errors,
        "text_checks": scored["text_checks"],
        "references_per_document": scored["references"],  # (the signature's; with systems carried, pipeline.reuse)
    }
    if reuse:
        parts = (previous["reuse"], grouped["reuse"], scored["reuse"], *([copied["reuse"]] if carried else []),
                 *([significance["reuse"]] if significance and "reuse" in significance else []))
        counts["reuse"] = parts | "ReuseCounts" >> beam.Flatten()
    counted = counts | "CountRows" >> CountRows(staging, profiles[0].name,
                                                reuse.references_per_document if carried else None)
    errors | "WriteErrors" >> WriteErrors(staging, counted["error_rows"])
    counts = counted["counts"]
    if carried:  # the per-system table counts the carried systems' rows as a full run does
        counts = counts | "CarriedCounts" >> beam.Map(with_carried_counts, reuse)
    scored["documents"] | "AggregatePerSystem" >> AggregatePerSystem(config, staging, counts, reuse if carried else None)
