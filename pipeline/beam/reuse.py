"""`run --reuse` in the graph (pipeline.reuse holds the plan and what proves a reuse
exact; DESIGN.md section 15):

    reuse_tasks        what ReadPrevious and CopyCarried do, in one Create
    ReadPrevious       the previous run's rows of the systems this run reads again,
                       and the documents of the systems it carries whole, as blocks
                       of columns keyed by bucket of the join (GroupDocuments' third
                       input, where a candidate scored before with the same digests
                       takes its previous values: pipeline.reuse.BucketPrevious)
    CopyCarried        the carried systems' per-document files and ROUGE-1.5.5
                       report blocks, copied verified

(With systems carried whole, a document's systems are no longer together in one
scored batch: the significance table comes from the per-document files then,
pipeline.beam.significance.SignificanceFromTables.)

A previous file that fails its check while the run reads it (changed since its run
wrote it, not a table of this version) is not an error of the run: its message goes
on REUSE_COUNTS ("refused"), and the run is done again reusing nothing
(pipeline.beam.run).
"""

from __future__ import annotations

import apache_beam as beam
import numpy as np

from pipeline.beam.aggregate import report_part
from pipeline.beam.read import BATCH_ROWS, bucket_of
from pipeline.io import files
from pipeline.io.result_folder import ResultFolderError
from pipeline.io.tables import DOCUMENT_COLUMNS, DOCUMENTS_PER_ROW_GROUP, parquet_footer, schema_problem
from pipeline.reuse import REUSE_COUNTS, ReusePlan, carried_documents, previous_rows


class ReadPreviousFn(beam.DoFn):
    """A task in (`reuse_tasks`; CopyCarried's kinds pass by): ("rows", system) (the
    previous rows of a system read again) or ("documents",) (every document of the
    carried systems, with its references' digest); out (bucket, [block]): a bucket's rows or documents as columns
    (pipeline.reuse.BucketPrevious), at least BATCH_ROWS of them a block but a
    bucket's last, or the message of a file that failed its check ("refused" on REUSE_COUNTS)."""

    KNOWN_BUCKETS = 1 << 20  # doc_ids whose bucket is remembered (the tasks share documents; a key takes 2-3 us)

    def __init__(self, plan: ReusePlan, buckets: int):
        self.plan, self.buckets = plan, buckets

    def setup(self):
        self.known: dict = {}

    def process(self, task):
        if task[0] not in ("rows", "documents"):  # (CopyCarried's)
            return
        pending: dict = {}  # bucket -> [its held parts, rows held]
        try:
            if task[0] == "rows":
                system = task[1]
                for ids, digests, values in previous_rows(self.plan, system):  # (a part of the files at a time)
                    yield from self._blocks(pending, ("rows", system), ids, [digests, *values])
            else:
                ids, references = carried_documents(self.plan)
                yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("carried_documents", len(ids)))
                for start in range(0, len(ids), DOCUMENTS_PER_ROW_GROUP):
                    part = slice(start, start + DOCUMENTS_PER_ROW_GROUP)
                    yield from self._blocks(pending, ("documents",), ids[part], [references[part]])
        except ResultFolderError as err:
            yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("refused", str(err)))
            return
        for bucket in sorted(pending):
            yield bucket, [_block(*pending[bucket][:2])]

    def _blocks(self, pending: dict, head: tuple, ids: list, columns: list):
        """A part's rows (`ids` and numpy `columns` alike) into `pending`, by bucket; a
        bucket's block out once it holds BATCH_ROWS rows."""
        known, buckets = self.known, self.buckets
        if len(known) > self.KNOWN_BUCKETS:
            known.clear()
        of = np.fromiter((known[d] if d in known else known.setdefault(d, bucket_of(d, buckets)) for d in ids),
                         np.int64, len(ids))
        order = np.argsort(of, kind="stable")
        for rows in np.split(order, np.flatnonzero(np.diff(of[order])) + 1) if len(ids) else ():
            bucket = int(of[rows[0]])
            held = pending.setdefault(bucket, [head, [], 0])
            held[1].append(([ids[i] for i in rows.tolist()], [c[rows].tobytes() for c in columns]))
            held[2] += len(rows)
            if held[2] >= BATCH_ROWS:
                yield bucket, [_block(*pending.pop(bucket)[:2])]


def _block(head: tuple, parts: list) -> tuple:
    """A bucket's held parts as one block: head + (doc_ids, each column's bytes)."""
    ids = [doc_id for part in parts for doc_id in part[0]]
    return (*head, ids, *(b"".join(c) for c in zip(*(part[1] for part in parts))))


def reuse_tasks(plan: ReusePlan, reports: dict) -> list:
    """Every task of a run reusing `plan`, sorted, for one Create that ReadPrevious and
    CopyCarried share (a Create is a few transforms and a stage of the runner's):
    ("rows", system) of each system read again, and with systems carried
    ("documents",), ("file", profile, system, name) of each of their per-document
    files and ("report", name, profile) of each ROUGE-1.5.5 report file (`reports`:
    {report file: its profile}) that holds their blocks."""
    tasks = [("rows", system) for system in plan.systems]
    if plan.carried:
        tasks += [("documents",)] + [("file", *key) for key in plan.carried_files()]
        tasks += [("report", name, profile) for name, profile in reports.items() if name in plan.report_parts]
    return sorted(tasks)


class ReadPrevious(beam.PTransform):
    """`reuse_tasks` in; the previous run's items for the join (see ReadPreviousFn): a
    dict, "items" ((bucket, [block]) elements) and "reuse" (its counts: REUSE_COUNTS)."""

    def __init__(self, plan: ReusePlan, buckets: int):
        super().__init__()
        self.plan, self.buckets = plan, buckets

    def expand(self, tasks):
        read = tasks | "Read" >> beam.ParDo(ReadPreviousFn(self.plan, self.buckets)).with_outputs(
            REUSE_COUNTS, main="items")
        return {"items": read["items"], "reuse": read[REUSE_COUNTS]}


def copy_carried(task, plan: ReusePlan, staging: str):
    """One of `reuse_tasks`: a "file" (`copy_file`) or a "report" (`copy_report_blocks`)
    copied into the staging folder; others are ReadPrevious's."""
    if task[0] == "file":
        yield from copy_file(task[1:], plan, staging)
    elif task[0] == "report":
        yield from copy_report_blocks(task[1:], plan, staging)


def copy_file(task, plan: ReusePlan, staging: str):
    """Copy one carried per-document file, (profile, system, its name in the previous
    run), into the staging folder; out (profile, (system, its path)) for a Parquet
    file, or the message of a file that failed its check ("refused" on REUSE_COUNTS)."""
    profile, system, name = task
    target = files.join(staging, name)
    try:
        plan.folder.copy_to(name, target)
    except ResultFolderError as err:
        yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("refused", str(err)))
        return
    if name.endswith(".parquet"):
        most = plan.document_rows(system, profile)
        try:
            schema, rows = parquet_footer(target)
            problem = schema_problem(schema, DOCUMENT_COLUMNS)  # (published as it is: this version's table)
        except (OSError, ValueError) as err:  # (Arrow's errors are these)
            problem, rows = f"not a Parquet file ({type(err).__name__}: {err})", 0
        if problem is None and rows > most:  # (read later, by the significance tests: a few KB can hold a billion rows)
            problem = f"{rows} rows where its run recorded {most}"
        if problem:
            yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("refused", f"{plan.folder.location(name)}: {problem}"))
            return
        yield profile, (system, target)


def copy_report_blocks(task, plan: ReusePlan, staging: str):
    """The carried systems' blocks of one previous ROUGE-1.5.5 report file, (its name,
    its profile), each into the system's part file in `staging` (pipeline.beam.aggregate
    joins every system's part), read from the file as verified: a report replaced or
    edited since the plan read it gives the message ("refused" on REUSE_COUNTS), never
    another run's blocks."""
    name, profile = task
    try:
        with plan.folder.verified(name) as fh:
            for system, (offset, length) in sorted(plan.report_parts.get(name, {}).items()):
                fh.seek(offset)
                with files.create(report_part(staging, profile, system)) as out:
                    copied = files.copy_stream(fh, out, length)
                if copied != length:
                    raise ResultFolderError(f"{plan.folder.location(name)}: the block of {system!r} ends past the file")
    except ResultFolderError as err:
        yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("refused", str(err)))


class CopyCarried(beam.PTransform):
    """`reuse_tasks` in; the carried systems' per-document files (every format the
    previous run wrote of them: its output settings are this run's) copied into
    `staging`, and their blocks of each ROUGE-1.5.5 report into their part files
    there: a dict, "files" ((profile, (system, path)) of each Parquet file) and
    "reuse" (REUSE_COUNTS)."""

    def __init__(self, plan: ReusePlan, staging: str):
        super().__init__()
        self.plan, self.staging = plan, staging

    def expand(self, tasks):
        copied = tasks | "Copy" >> beam.FlatMap(copy_carried, self.plan, self.staging).with_outputs(
            REUSE_COUNTS, main="files")
        return {"files": copied["files"], "reuse": copied[REUSE_COUNTS]}
