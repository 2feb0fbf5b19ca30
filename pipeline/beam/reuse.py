"""`run --reuse` in the graph (pipeline.reuse holds the plan and what proves a reuse
exact; DESIGN.md section 15):

    ReadPrevious       the previous run's rows of the systems this run reads again,
                       and the documents of the systems it carries whole, keyed by
                       bucket of the join (GroupDocuments' third input)
    MatchPrevious      a list of DocumentGroups with their documents' previous rows
                       -> `Matched`: each candidate's digest and, where the previous
                       run scored the same row, its values (ScoreDocuments scores
                       the rest)
    CopyCarried        the carried systems' per-document files, copied verified

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

from pipeline.beam.batches import batched
from pipeline.beam.documents import Matched
from pipeline.beam.read import BATCH_ROWS, bucket_of
from pipeline.io import files
from pipeline.io.result_folder import ResultFolderError
from pipeline.reuse import REUSE_COUNTS, ReusePlan, carried_documents, previous_rows



class ReadPreviousFn(beam.DoFn):
    """A task in: ("rows", system) (the previous rows of a system read again) or
    ("documents",) (every document of the carried systems, with its references'
    digest); out (bucket, items) batches of at most BATCH_ROWS items, or the
    message of a file that failed its check ("refused" on REUSE_COUNTS)."""

    def __init__(self, plan: ReusePlan, buckets: int):
        self.plan, self.buckets = plan, buckets

    def setup(self):
        self.bucket_of: dict = {}  # doc_id -> its bucket: the tasks share documents, and a key takes 2-3 us to make

    def process(self, task):
        try:
            pending: dict = {}
            if task[0] == "rows":
                system = task[1]
                for rows in previous_rows(self.plan, system):  # (a part of the files at a time)
                    yield from self._batches(pending, [("row", system, *row) for row in rows])
            else:
                items = [("doc", doc_id, refs) for doc_id, refs in carried_documents(self.plan).items()]
                yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("carried_documents", len(items)))
                yield from self._batches(pending, items)
        except ResultFolderError as err:
            yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("refused", str(err)))
            return
        for bucket, held in sorted(pending.items()):
            if held:
                yield bucket, held

    def _batches(self, pending: dict, items: list):
        """The items into `pending` ({bucket: items}); a bucket's out once it holds BATCH_ROWS."""
        known = self.bucket_of
        for item in items:
            doc_id = item[2] if item[0] == "row" else item[1]
            bucket = known.get(doc_id)
            if bucket is None:
                bucket = known[doc_id] = bucket_of(doc_id, self.buckets)
            held = pending.setdefault(bucket, [])
            held.append(item)
            if len(held) >= BATCH_ROWS:
                yield bucket, held
                pending[bucket] = []


class ReadPrevious(beam.PTransform):
    """The previous run's items for the join (see ReadPreviousFn): a dict, "items"
    ((bucket, items) batches) and "reuse" (its counts: REUSE_COUNTS)."""

    def __init__(self, plan: ReusePlan, buckets: int):
        super().__init__()
        self.plan, self.buckets = plan, buckets

    def expand(self, pbegin):
        tasks = [("rows", system) for system in self.plan.systems] + ([("documents",)] if self.plan.carried else [])
        read = (
            pbegin
            | "Tasks" >> beam.Create(tasks)
            | "Read" >> beam.ParDo(ReadPreviousFn(self.plan, self.buckets)).with_outputs(REUSE_COUNTS, main="items")
        )
        return {"items": read["items"], "reuse": read[REUSE_COUNTS]}


def match_previous(element) -> Matched:
    """(DocumentGroups, their candidates' digests, their documents' previous rows
    ({doc_id: {system: (digest, values)}}), the carried documents among them) ->
    Matched: a candidate's previous values are
    reused when the previous run scored the same (system, doc_id) with the same
    digests."""
    groups, digests, rows, carried = element
    reused, i, none = [], 0, {}
    for group in groups:
        previous = rows.get(group.doc_id, none)
        for c, _ in group.candidates:
            found = previous.get(c.system)
            reused.append(found[1] if found is not None and found[0] == digests[i] else None)
            i += 1
    return Matched(groups, digests, reused, carried)


class MatchPrevious(beam.PTransform):
    """(DocumentGroups, digests, previous rows, carried documents) in, as GroupDocuments
    makes them with a previous run; Matched out, for ScoreDocuments."""

    def expand(self, documents):
        return batched(documents | "Match" >> beam.Map(match_previous))


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
        yield profile, (system, target)


class CopyCarried(beam.PTransform):
    """The carried systems' per-document files (every format the previous run wrote
    of them: its output settings are this run's) copied into `staging`: a dict,
    "files" ((profile, (system, path)) of each Parquet file) and "reuse" (REUSE_COUNTS)."""

    def __init__(self, plan: ReusePlan, staging: str):
        super().__init__()
        self.plan, self.staging = plan, staging

    def expand(self, pbegin):
        listed = self.plan.folder.names("per_document/*")
        tasks = []
        for system in self.plan.carried:
            for profile, names in self.plan.document_files(system).items():
                stems = {name.rsplit(".", 1)[0] for name in names}
                tasks += [(profile, system, name) for name in listed if name.rsplit(".", 1)[0] in stems]
        copied = (
            pbegin
            | "CarriedFiles" >> beam.Create(sorted(tasks))
            | "Copy" >> beam.FlatMap(copy_file, self.plan, self.staging).with_outputs(REUSE_COUNTS, main="files")
        )
        return {"files": copied["files"], "reuse": copied[REUSE_COUNTS]}
