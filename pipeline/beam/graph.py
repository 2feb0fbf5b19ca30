"""The pipeline graph, stage by stage (see DESIGN.md section 3): one composite
transform per stage, each in its own module and tested alone."""

from __future__ import annotations

import apache_beam as beam

from pipeline.beam.aggregate import AggregatePerSystem
from pipeline.beam.counts import CountRows
from pipeline.beam.documents import GroupDocuments, ScoreDocuments
from pipeline.beam.read import ReadSummaries, bucket_count
from pipeline.beam.significance import SignificanceTables
from pipeline.beam.write import WriteResults
from pipeline.config import RunConfig


def build_pipeline(p: beam.Pipeline, config: RunConfig, inputs: dict, staging: str) -> None:
    """Read, validate, score, aggregate per system, and write every table to `staging`.

    `inputs` holds the resolved file lists ("candidates", "references").  Rows
    travel in batches: read in batches per bucket of documents, joined and scored a
    bucket at a time, and every later stage takes scored batches (per profile, a
    list of (system, doc_id, values), a document's systems together).
    """
    profiles = config.profile_list()
    human = config.human.name if config.human.enabled else ""
    read = p | "ReadSummaries" >> ReadSummaries(
        config.input, inputs["candidates"], inputs["references"], staging, config.run.progress_seconds,
        bucket_count(inputs["candidates"] + inputs["references"]),
    )
    grouped = (read["candidates"], read["references"]) | "GroupDocuments" >> GroupDocuments(
        staging, config.input.conflicting_references == "keep"
    )
    scored = grouped["documents"] | "ScoreDocuments" >> ScoreDocuments(profiles, config.run.progress_seconds, human)
    errors = (grouped["errors"], scored["errors"]) | "CollectErrors" >> beam.Flatten()
    counts = {
        "read_counts": read["counts"],
        "references": read["references"],
        "unused": grouped["unused"],
        "human": scored["human"],
        "documents": scored["documents"],
        "errors": errors,
        "text_checks": scored["text_checks"],
        "references_per_document": scored["references"],
    } | "CountRows" >> CountRows(staging, profiles[0].name)
    scored["documents"] | "AggregatePerSystem" >> AggregatePerSystem(config, staging, counts)
    if config.significance.enabled:
        scored["documents"] | "Significance" >> SignificanceTables(config.significance, profiles, staging)
    (scored["documents"], errors) | "WriteResults" >> WriteResults(staging, config.output, profiles)
