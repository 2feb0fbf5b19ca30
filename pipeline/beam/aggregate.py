"""Per-system aggregation: every (profile, system)'s documents combined into its
table rows, the ROUGE-1.5.5 report, and the tables written.

Two stages, each with an element per worker that is bounded:

* the statistics (means, pooled counts, bootstrap and jackknife) come from a
  lifted CombineFn whose accumulator does not grow with the documents
  (pipeline.beam.combiners);
* the ROUGE-1.5.5 report's printed averages (rouge155 preset profiles only: the
  other presets have no report) need every document of a system in
  evaluation-id order (the script's bootstrap walks them in that order), so they
  have a stage of their own: the documents grouped per system (through spill
  files, pipeline.beam.spill: the runner holds only their places), each system's
  report block (with `-d`, its per-document lines) written to a part file of its
  own, and only the small averages sent on.  The report is the part files joined
  in system order; no list of report lines is ever gathered.
"""

from __future__ import annotations

import json
import shutil

import apache_beam as beam

from pipeline.beam.combiners import Gathered, SystemCombineFn
from pipeline.beam.documents import scored_documents
from pipeline.beam.progress import tally
from pipeline.beam.spill import SpilledGroupByKey
from pipeline.config import Profile, RunConfig, profiles_signature
from pipeline.coverage import Coverage, run_rejected
from pipeline.io import files
from pipeline.io.tables import SYSTEM_COLUMNS, csv_text, parquet_bytes
from pipeline.render import tables as views
from pipeline.summaries import report_block, table_rows
from rouge_core.resampling import stable_hash

PARTS = "_rouge155"  # the report's part files, under the staging folder (removed once joined)
REPORT_INDEX = "_rouge155_index.json"  # where each system's part lies in the report (moved into run.json)


def report_part(staging: str, profile: str, system: str) -> str:
    return files.join(staging, PARTS, f"{stable_hash(profile):016x}-{stable_hash(system):016x}.txt")


def system_report(element, profiles: dict[str, Profile], staging: str) -> tuple:
    """((profile, system), [(eval id, values), ...]) -> ((profile, system), printed
    averages per metric); the system's ROUGE-1.5.5 report block written to its part
    file."""
    (name, system), documents = element
    averages, lines = report_block(system, dict(documents), profiles[name])
    files.write_bytes(report_part(staging, name, system), "".join(line + "\n" for line in lines).encode("utf-8"))
    tally("aggregating", "systems")  # after its bootstrap, most of a system's wait
    return (name, system), averages


def system_rows(element, profiles: dict[str, Profile], facts: dict) -> list:
    """((profile, system), {"stats": [SystemStats per metric], "averages": [printed
    averages per metric]}) -> per metric (profile, system, metric, table row);
    `facts`: what the run adds to the signature (`RunConfig.facts`)."""
    (name, system), joined = element
    (metrics,) = joined["stats"]
    (averages,) = joined["averages"] or [[None] * len(profiles[name].tags)]  # a profile without the report
    out = table_rows(name, system, metrics, profiles[name], averages, facts)
    if not profiles[name].reports_rouge155:  # (a reported system was counted by its report)
        tally("aggregating", "systems")
    return out


def write_system_tables(summaries: list, staging: str, profiles: list[Profile], facts: dict, counts: dict,
                        max_rejected: float, carried=None) -> None:
    """system_scores.{parquet,csv,md} sorted by profile (in the config's order), system
    and metric order, each system's documents had from the run's `counts`
    (`pipeline.io.tables.run_counts`), the .md headed by the rejected-rows warning
    when the rejected share is past `max_rejected`, the signature with the run's
    `facts`; the ROUGE-1.5.5 report of a run with one profile as rouge155.txt, else
    one rouge155-<profile>.txt per profile that has one (`Profile.reports_rouge155`),
    joined from the systems' part files in system order (streamed: the report is
    never held whole), and where each system's part lies in it written to
    REPORT_INDEX (for run.json: what a later run copies of a system that did not
    change).  `carried` (a pipeline.reuse.ReusePlan): the systems a reusing run
    takes whole from its previous run, with their table rows (their signature and
    documents had this run's; their report blocks are copied into their part files,
    pipeline.beam.reuse.CopyCarried); `counts` then count them too
    (pipeline.reuse.with_carried_counts).  Nothing of the report is written when a
    previous file was refused (`counts`' reuse): the run is done again."""
    order = {(p.name, tag): (i, j) for i, p in enumerate(profiles) for j, tag in enumerate(p.metric_order)}
    if carried is not None:
        summaries = summaries + carried_rows(carried.system_rows, profiles, facts)
    summaries = sorted(summaries, key=lambda s: (order[s[0], s[2]][0], s[1], order[s[0], s[2]][1]))
    coverage = Coverage.from_counts(counts)
    rows = [table_row(s[3], coverage.had(s[1])) for s in summaries]
    warning = run_rejected(counts, max_rejected)["warning"]
    metadata = {"signature": profiles_signature(profiles, **facts)}
    files.write_bytes(files.join(staging, "system_scores.parquet"), parquet_bytes(rows, SYSTEM_COLUMNS, metadata))
    files.write_bytes(files.join(staging, "system_scores.csv"), csv_text(rows).encode("utf-8"))
    table = views.profiles_markdown(rows, profiles, facts)
    files.write_bytes(files.join(staging, "system_scores.md"),
                      ((f"**{warning}**\n\n" if warning else "") + table).encode("utf-8"))
    if carried is not None and (counts.get("reuse") or {}).get("refused"):
        return  # (a carried system's report block is missing: the run is done again, reusing nothing)
    parts, index = [], {}
    reported = [p for p in profiles if p.reports_rouge155]
    for profile in reported:
        systems = sorted({s[1] for s in summaries if s[0] == profile.name})
        name = report_name(profile.name, profiles)
        index[name], offset = [], 0
        with files.create(files.join(staging, name)) as out:
            for system in systems:  # (a carried system's part: its previous block, pipeline.beam.reuse.CopyCarried)
                part = report_part(staging, profile.name, system)
                length = append_file(out, part)
                parts.append(part)
                index[name].append([system, offset, length])
                offset += length
    files.delete(parts)
    if not files.is_url(staging):
        shutil.rmtree(files.join(staging, PARTS), ignore_errors=True)
    files.write_bytes(files.join(staging, REPORT_INDEX), json.dumps(index).encode("utf-8"))


def carried_rows(rows: list, profiles: list[Profile], facts: dict) -> list:
    """A carried system's (profile, system, metric, row) rows with this run's signature:
    every other value depends on its rows alone, the signature on the run's documents
    too (the references per document)."""
    signatures = {(p.name, tag): s.signature(**facts) for p in profiles for s in p.settings for tag in s.metric_tags()}
    return [(profile, system, metric, dict(row, signature=signatures[profile, metric])) for profile, system, metric, row in rows]


def report_name(profile: str, profiles: list[Profile]) -> str:
    """The ROUGE-1.5.5 report's file of a profile: rouge155.txt when the run has one
    profile, else rouge155-<profile>.txt."""
    reported = [p for p in profiles if p.reports_rouge155]
    return "rouge155.txt" if len(reported) == 1 and len(profiles) == 1 else f"rouge155-{profile}.txt"


def append_file(out, path: str) -> int:
    """Copy the file `path` to the end of `out`, a chunk at a time; returns its bytes."""
    with files.open_read(path) as fh:
        return files.copy_stream(fh, out)


def table_row(row: dict, had: int) -> dict:
    """A row of the per-system table: its columns in order, numbers as Python's
    (as the table's readers get them back), and the documents the system had."""
    out = {}
    for name, kind in SYSTEM_COLUMNS:
        value = had if name == "documents_had" else row.get(name)
        out[name] = float(value) if kind == "float64" and value is not None else value
    return out


def per_system(batch) -> list:
    """A scored batch -> ((profile, system), [(doc_id, values), ...]) per system in it:
    the elements of the per-system CombineFn (which Beam combines in the stage that
    makes them) and of the report's grouping."""
    profile, rows = batch
    out: dict = {}
    for row in rows:
        out.setdefault(row[0], []).append((row[1], row[2]))
    return [((profile, system), documents) for system, documents in out.items()]


class EvaluationIds(beam.PTransform):
    """Scored batches in; ((profile, system), [(eval id, values), ...]) out: the eval id is
    the doc_id itself, or with `mode` "index" the document's number 1..N in sorted
    doc_id order (as pyrouge numbers its sorted files), found by a sorted pass:
    the doc_ids are counted per leading-byte range, each range sorts its own ids
    and numbers them from the count of the ranges before it, and the numbers join
    the documents by doc_id.  No list of every doc_id is gathered or broadcast."""

    def __init__(self, mode: str):
        super().__init__()
        self.mode = mode

    def expand(self, documents):
        if self.mode == "doc_id":
            return documents | "BySystem" >> beam.FlatMap(per_system)
        documents = documents | "Documents" >> beam.FlatMap(scored_documents)
        ids = documents | "DocIds" >> beam.Map(lambda d: d.doc_id) | "DistinctDocIds" >> beam.Distinct()
        ranged = ids | "ByRange" >> beam.Map(lambda d: (id_range(d), d))
        sizes = ranged | "RangeSizes" >> beam.combiners.Count.PerKey() | "AllSizes" >> beam.combiners.ToDict()
        numbers = (
            ranged
            | "GroupRanges" >> beam.GroupByKey()
            | "NumberRange" >> beam.FlatMap(number_range, beam.pvalue.AsSingleton(sizes))
        )
        by_doc = documents | "ByDocId" >> beam.Map(lambda d: (d.doc_id, ((d.profile, d.system), d.values)))
        return (
            {"number": numbers, "documents": by_doc}
            | "JoinNumbers" >> beam.CoGroupByKey()
            | "Numbered" >> beam.FlatMap(numbered)
        )


def id_range(doc_id: str) -> bytes:
    """The doc_id's first two UTF-8 bytes: byte order is code point order, so every
    id of a lower range sorts before every id of a higher one (at most 65,536
    ranges, whose sizes are the only thing broadcast)."""
    return doc_id.encode("utf-8", "surrogatepass")[:2]


def number_range(element, sizes: dict):
    """(range, its doc_ids) -> (doc_id, number) for each, numbered on from the ranges
    below it."""
    key, ids = element
    start = sum(n for k, n in sizes.items() if k < key)
    for i, doc_id in enumerate(sorted(ids), start + 1):
        yield doc_id, str(i)


def numbered(element):
    _, joined = element
    (number,) = joined["number"]
    for key, values in joined["documents"]:
        yield key, [(number, values)]


class AggregatePerSystem(beam.PTransform):
    """Scored batches in; system_scores.{parquet,csv,md} and the ROUGE-1.5.5
    report(s) written to `staging`, once the run's `counts` (a singleton PCollection,
    `CountRows`) are known: each system's documents had, the rejected share and,
    for the signature, the references per document (`RunConfig.counted_facts`).
    The rows and report blocks of the systems a reusing run carries whole
    (`carried`, a pipeline.reuse.ReusePlan) are copied; `counts` must then count
    them (pipeline.reuse.with_carried_counts)."""

    def __init__(self, config: RunConfig, staging: str, counts, carried=None):
        super().__init__()
        self.config, self.staging, self.counts, self.carried = config, staging, counts, carried
        self.profiles, self.statistics, self.eval_ids = config.profile_list(), config.statistics, config.rouge.eval_ids

    def expand(self, documents):
        stats = self.statistics
        by_name = {p.name: p for p in self.profiles}
        combine = SystemCombineFn(stats.bootstrap_replicates, stats.bootstrap_seed, stats.jackknife_buckets)
        by_system = documents | "KeyBySystem" >> beam.FlatMap(per_system)  # (a KV collection: Beam's coder)
        aggregates = by_system | "CombinePerSystem" >> beam.CombinePerKey(combine)
        reported = {p.name for p in self.profiles if p.reports_rouge155}
        if self.eval_ids == "doc_id":  # the evaluation ids are the doc_ids: the same elements
            evaluated = by_system | "ReportedProfiles" >> beam.Filter(lambda element: element[0][0] in reported)
        else:
            evaluated = (
                documents
                | "ReportedProfiles" >> beam.Filter(lambda batch: batch[0] in reported)
                | "EvaluationIds" >> EvaluationIds(self.eval_ids)
            )
        staging = self.staging
        averages = evaluated | "Rouge155Report" >> SpilledGroupByKey(
            staging, "report", then=lambda documents: system_report(documents, by_name, staging)
        )
        config = self.config
        facts = beam.pvalue.AsSingleton(self.counts | "SignatureFacts" >> beam.Map(config.counted_facts))
        return (
            {"stats": aggregates, "averages": averages}
            | "JoinPerSystem" >> beam.CoGroupByKey()
            | "SystemRows" >> beam.FlatMap(system_rows, by_name, facts)
            | "GatherSummaries" >> Gathered()
            | "WriteSystemTables" >> beam.Map(write_system_tables, self.staging, self.profiles, facts,
                                               beam.pvalue.AsSingleton(self.counts), config.run.max_rejected,
                                               self.carried)
        )
