"""Turning aggregates into result tables, and writing them.

Every table (or shard of one, for per-document scores and errors) is written whole
by one worker, sorted, through Beam's FileSystems, so the bytes do not depend on the
runner, the worker count or the input order.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from typing import Optional

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from pipeline import views
from pipeline.combiners import MEASURES
from pipeline.config import Profile, profiles_signature
from pipeline.records import ERROR_COLUMNS, ErrorRecord
from rouge_core import RougeSettings
from rouge_core.report import averages_of, metric_block
from rouge_core.scoring import MetricStats
from rouge_core.resampling import stable_hash

SYSTEM_COLUMNS = [
    ("profile", pa.string()),
    ("system", pa.string()),
    ("metric", pa.string()),
    ("documents", pa.int64()),
    ("recall", pa.float64()),
    ("precision", pa.float64()),
    ("f_measure", pa.float64()),
    ("rouge155_recall", pa.float64()),
    ("rouge155_recall_low", pa.float64()),
    ("rouge155_recall_high", pa.float64()),
    ("rouge155_precision", pa.float64()),
    ("rouge155_precision_low", pa.float64()),
    ("rouge155_precision_high", pa.float64()),
    ("rouge155_f_measure", pa.float64()),
    ("rouge155_f_measure_low", pa.float64()),
    ("rouge155_f_measure_high", pa.float64()),
    ("micro_recall", pa.float64()),
    ("micro_precision", pa.float64()),
    ("micro_f_measure", pa.float64()),
    ("bootstrap_f_measure_low", pa.float64()),
    ("bootstrap_f_measure_high", pa.float64()),
    ("jackknife_se_recall", pa.float64()),
    ("jackknife_se_precision", pa.float64()),
    ("jackknife_se_f_measure", pa.float64()),
    ("signature", pa.string()),
]
DOCUMENT_SCHEMA = pa.schema(
    [
        ("profile", pa.string()),
        ("system", pa.string()),
        ("doc_id", pa.string()),
        ("metric", pa.string()),
        ("recall", pa.float64()),
        ("precision", pa.float64()),
        ("f_measure", pa.float64()),
        ("hits", pa.float64()),
        ("reference_total", pa.float64()),
        ("candidate_total", pa.float64()),
    ]
)
ERROR_SCHEMA = pa.schema(
    [
        ("system", pa.string()),
        ("doc_id", pa.string()),
        ("source", pa.string()),
        ("position", pa.int64()),
        ("reason", pa.string()),
        ("message", pa.string()),
    ]
)


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


def _write_bytes(path: str, data: bytes) -> None:
    with FileSystems.create(path) as fh:
        fh.write(data)


def _parquet_bytes(rows: list[dict], schema: pa.Schema) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    return sink.getvalue()


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(rows: list[dict], names: Optional[list[str]] = None, decimals: Optional[int] = 6) -> str:
    """Rows as CSV (by default the per-system table's columns that the rows have):
    scores with six decimals (the Parquet tables keep full precision; `decimals=None`
    writes every float in full, for p-values), text cells neutralised against formulas."""
    if names is None:
        names = [name for name, _ in SYSTEM_COLUMNS if not rows or name in rows[0]]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=names, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows({k: csv_cell(r.get(k), decimals) for k in names} for r in rows)
    return text.getvalue()


def csv_cell(value, decimals: Optional[int] = 6) -> str:
    """A CSV cell that a spreadsheet cannot run: text starting with = + - @ tab or CR
    gets a leading apostrophe (OWASP's advice on CSV injection); numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if decimals is None else f"{value:.{decimals}f}"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _markdown_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "%.5f" % value
    text = str(value)
    for ch in "\\|`*_[]<>#":
        text = text.replace(ch, "\\" + ch)
    return text


def write_system_tables(summaries: list, staging: str, profiles: list[Profile]) -> None:
    """system_scores.{parquet,csv,md} sorted by profile (in the config's order), system
    and metric order; the ROUGE-1.5.5 report of a run with one profile as
    rouge155.txt, else one rouge155-<profile>.txt per profile."""
    order = {(p.name, tag): (i, j) for i, p in enumerate(profiles) for j, tag in enumerate(p.tags)}
    summaries = sorted(summaries, key=lambda s: (order[s[0], s[2]][0], s[1], order[s[0], s[2]][1]))
    rows = [s[3] for s in summaries]
    schema = pa.schema(SYSTEM_COLUMNS, metadata={"signature": profiles_signature(profiles)})
    _write_bytes(FileSystems.join(staging, "system_scores.parquet"), _parquet_bytes(rows, schema))
    _write_bytes(FileSystems.join(staging, "system_scores.csv"), csv_text(rows).encode("utf-8"))
    _write_bytes(FileSystems.join(staging, "system_scores.md"), views.profiles_markdown(rows, profiles).encode("utf-8"))
    for profile in profiles:
        report = "".join(line + "\n" for s in summaries if s[0] == profile.name for line in s[4])
        name = "rouge155.txt" if len(profiles) == 1 else f"rouge155-{profile.name}.txt"
        _write_bytes(FileSystems.join(staging, name), report.encode("utf-8"))


def write_table(folder: str, stem: str, rows: list[dict], schema: pa.Schema, markdown: str) -> None:
    """`stem`.parquet, `stem`.csv (floats in full: p-values) and `stem`.md in `folder`,
    the rows in the order given."""
    _write_bytes(FileSystems.join(folder, f"{stem}.parquet"), _parquet_bytes(rows, schema))
    _write_bytes(FileSystems.join(folder, f"{stem}.csv"), csv_text(rows, schema.names, None).encode("utf-8"))
    _write_bytes(FileSystems.join(folder, f"{stem}.md"), markdown.encode("utf-8"))


class ShardedWrite(beam.PTransform):
    """Write a PCollection as `folder/part-NNNNN-of-MMMMM.*`: element e goes to shard
    stable_hash(key(e)) mod M, every shard is written (an empty one too, so the layout
    is fixed), and `write(shard, M, elements)` sorts and writes one.  M is `shards`,
    or with shards = 0, one shard per `per_shard` elements (from their count): no
    worker ever holds more than a bounded part."""

    def __init__(self, key, write, count, shards: int = 0, per_shard: int = 100_000):
        super().__init__()
        self.key, self.write, self.count, self.shards, self.per_shard = key, write, count, shards, per_shard

    def expand(self, elements):
        key, write, fixed, per_shard = self.key, self.write, self.shards, self.per_shard  # no `self` in closures

        def shards(count: int) -> int:
            return fixed or max(1, -(-count // per_shard))

        count = beam.pvalue.AsSingleton(self.count)
        keyed = elements | "ShardOf" >> beam.Map(lambda e, n: (stable_hash(key(e)) % shards(n), e), count)
        empty = self.count | "AllShards" >> beam.FlatMap(lambda n: [(i, None) for i in range(shards(n))])
        return (
            (keyed, empty)
            | "FlattenShards" >> beam.Flatten()
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShard"
            >> beam.Map(lambda kv, n: write(kv[0], shards(n), [e for e in kv[1] if e is not None]), count)
        )


def per_document_writer(staging: str, formats: tuple, profiles: list[Profile]):
    """per_document/part-NNNNN-of-MMMMM.parquet (and .csv, .jsonl on request): one row
    per (profile, system, doc_id, metric), sorted within each shard (profiles in the
    config's order)."""
    tags = {p.name: p.tags for p in profiles}
    order = {p.name: i for i, p in enumerate(profiles)}

    def write(shard: int, shards: int, documents: list):
        rows = [
            {
                "profile": d.profile,
                "system": d.system,
                "doc_id": d.doc_id,
                "metric": tag,
                "recall": s.recall,
                "precision": s.precision,
                "f_measure": s.f_measure,
                "hits": float(s.hits),
                "reference_total": float(s.reference_total),
                "candidate_total": float(s.candidate_total),
            }
            for d in sorted(documents, key=lambda d: (order[d.profile], d.system, d.doc_id))
            for tag, s in d.scores(tags[d.profile]).items()
        ]
        name = FileSystems.join(staging, "per_document", f"part-{shard:05d}-of-{shards:05d}")
        _write_bytes(name + ".parquet", _parquet_bytes(rows, DOCUMENT_SCHEMA))
        if "csv" in formats:
            _write_bytes(name + ".csv", csv_text(rows, DOCUMENT_SCHEMA.names).encode("utf-8"))
        if "jsonl" in formats:
            _write_bytes(name + ".jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))
        return name

    return write


def _sort_key(e: ErrorRecord):
    return (
        e.source,
        -1 if e.position is None else e.position,
        e.reason,
        e.system or "",
        e.doc_id or "",
        e.message,
    )


class ErrorFileWriter:
    """The errors table's part for one input file, `errors/file-<hash of path>.{jsonl,parquet}`,
    written as the file is read, in its order, in batches: memory stays bounded
    however many rows are bad.  Opened at the first error (a clean file writes
    nothing); a retried read rewrites the same bytes."""

    BATCH = 10_000

    def __init__(self, folder: str, source: str):
        self.name = FileSystems.join(folder, "errors", f"file-{stable_hash(source):016x}")
        self.by_reason: Counter = Counter()
        self.pending: list[dict] = []
        self.jsonl = self.parquet = self.parquet_file = None

    def add(self, error: ErrorRecord) -> None:
        self.by_reason[error.reason] += 1
        self.pending.append(dict(zip(ERROR_COLUMNS, error)))
        if len(self.pending) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        if self.jsonl is None:
            self.jsonl = FileSystems.create(self.name + ".jsonl")
            self.parquet_file = FileSystems.create(self.name + ".parquet")
            self.parquet = pq.ParquetWriter(self.parquet_file, ERROR_SCHEMA)
        self.jsonl.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.pending).encode("utf-8"))
        self.parquet.write_table(pa.Table.from_pylist(self.pending, schema=ERROR_SCHEMA))
        self.pending = []

    def close(self) -> None:
        self._flush()
        if self.jsonl is not None:
            self.jsonl.close()
            self.parquet.close()
            self.parquet_file.close()


def errors_writer(staging: str):
    """errors/part-NNNNN-of-MMMMM.{parquet,jsonl}: the rows that failed after reading
    (grouping, scoring), sorted by source and position within each shard.  (Rows that
    failed while being read are in errors/file-*, written by their reader.)"""

    def write(shard: int, shards: int, errors: list):
        rows = [dict(zip(ERROR_COLUMNS, e)) for e in sorted(errors, key=_sort_key)]
        name = FileSystems.join(staging, "errors", f"part-{shard:05d}-of-{shards:05d}")
        _write_bytes(name + ".parquet", _parquet_bytes(rows, ERROR_SCHEMA))
        _write_bytes(name + ".jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))
        return name

    return write


def write_counts(
    _,
    staging: str,
    read_counts: tuple,
    scored: int,
    errors_by_reason: list,
    reference_rows: int,
    reference_rows_unused: int,
    human_documents: int,
    documents: int,
    documents_by_system: list,
) -> None:
    """The run's counts, for run.json.  Systems that scored fewer than all documents
    are listed: their averages are over different document sets."""
    by_system = dict(sorted(documents_by_system))
    rows_read, read_errors = read_counts
    by_reason = Counter(read_errors) + Counter(dict(errors_by_reason))
    counts = {
        "rows_read": rows_read,
        "scored": scored,
        "errors": sum(by_reason.values()),
        "errors_by_reason": dict(sorted(by_reason.items())),
        "reference_rows": reference_rows,
        "reference_rows_unused": reference_rows_unused,
        "human_documents": human_documents,
        "documents": documents,
        "documents_by_system": by_system,
        "systems_missing_documents": {s: documents - n for s, n in by_system.items() if n < documents},
    }
    _write_bytes(FileSystems.join(staging, "_counts.json"), json.dumps(counts, indent=1).encode("utf-8"))


def read_system_rows(folder: str) -> list[dict]:
    """system_scores.parquet of a result folder (any Beam filesystem) as dicts."""
    with FileSystems.open(FileSystems.join(folder, "system_scores.parquet")) as fh:
        return pq.read_table(io.BytesIO(fh.read())).to_pylist()


def read_json(path: str) -> Optional[dict]:
    with FileSystems.open(path) as fh:
        return json.loads(fh.read().decode("utf-8"))


def merge_read_counts(counts) -> tuple:
    """Per-file (rows, {reason: n}) summed over files."""
    rows, by_reason = 0, Counter()
    for n, reasons in counts:
        rows += n
        by_reason.update(reasons)
    return rows, dict(by_reason)
