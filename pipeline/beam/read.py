"""Reading in Beam: one element per input file, its rows parsed by the project's
one row reader (pipeline.io.rows); bad rows go straight to the errors table, good
rows leave in batches keyed by their document's bucket (`bucket_of`), which the
join writes to spill files (pipeline.beam.spill): what it shuffles is their places."""

from __future__ import annotations

import os

import apache_beam as beam

from pipeline.beam.batches import batched
from pipeline.beam.progress import Progress
from pipeline.beam.spill import place_hash
from pipeline.collector import in_worker, this_process
from pipeline.config import InputConfig
from pipeline.documents import document_key
from pipeline.io import files
from pipeline.io.patterns import system_from_path
from pipeline.io.rows import (
    FILE_LEVEL_REASONS, VALUE_OVERHEAD, internal_error, iter_rows, parse_candidate, parse_reference, used_fields,
)
from pipeline.io.tables import ErrorFileWriter, write_fingerprint
from pipeline.records import Candidate, ErrorRecord, SameReferences, SourceRow, make

ERRORS = "errors"
COUNTS = "counts"
BATCH_ROWS = 2_000  # rows a reading worker holds before it sends them on, in one batch per bucket
BATCH_CHARS = 32 << 20  # or characters of text, whichever comes first (rows of long texts)
BUCKET_BYTES = 32 << 20  # input bytes per bucket (a compressed file counted 4 times its size)


def bucket_of(doc_id: str, buckets: int) -> int:
    """The bucket of a row: the same for every row of a document (and of doc_ids that
    print alike, which `split_lookalikes` tells apart), in every process (and 0,
    with no hash, when there is one bucket)."""
    if buckets == 1:
        return 0
    return place_hash(document_key(doc_id)) % buckets  # (a doc_id with a lone surrogate is refused on reading)


def bucket_count(paths: list[str]) -> int:
    """Buckets for these input files: one per BUCKET_BYTES of input, so that a
    bucket's rows (grouped on one worker to be joined and scored) stay a bounded
    size whatever the input.  Only the grouping depends on it, never a number."""
    total = 0
    for path in paths:
        try:
            size = sum(files.match(path).values())
        except (OSError, ValueError):  # unreadable: the reader reports it as the file's error row
            continue
        compressed = os.path.splitext(path)[1].lower() in (".gz", ".bz2", ".xz", ".zst", ".zstd")
        total += size * (4 if compressed else 1)
    return max(1, min(65_536, -(-total // BUCKET_BYTES)))


def text_chars(value) -> int:
    """Characters of a text field (a string, or a list of strings or of lists of
    them), and VALUE_OVERHEAD (pipeline.io.rows) for each item of a list: a row
    of many empty references weighs in a batch too."""
    if type(value) is str:
        return len(value)
    chars = 0
    if isinstance(value, (list, tuple)):
        chars = VALUE_OVERHEAD * len(value)
        for v in value:  # (a loop, not sum() of a generator: half the time for a list of texts)
            chars += len(v) if type(v) is str else text_chars(v)
    return chars


def batches(rows: dict) -> list:
    """{bucket: [row tuples]} -> [(bucket, rows)] in bucket order."""
    return sorted(rows.items())


class ReadFileFn(beam.DoFn):
    """A file path in; its parsed rows out (`Candidate`, or `ReferenceRow` for a
    reference file).  Its bad rows never enter the graph: they are written, as they
    are found, to the file's own part of the errors table (`ErrorFileWriter`), so
    a file of millions of bad lines costs bounded memory.  COUNTS gets, per file,
    (rows read, {reason: error rows}): every row read is one output or one error.
    The rows leave as (bucket, [row as a plain tuple, ...]) batches of at most
    BATCH_ROWS rows, or BATCH_CHARS characters of text, in all (the join's SpillFn,
    in the same stage, writes them to spill files).
    """

    def __init__(self, config: InputConfig, kind: str, joined: bool, errors_folder: str, progress_seconds: float,
                 buckets: int = 1):
        self.config = config
        self.buckets = buckets
        self.kind = kind
        self.joined = joined
        self.errors_folder = errors_folder
        self.progress = Progress(f"reading_{kind}", progress_seconds)
        self.driver = this_process()

    def setup(self):
        in_worker(self.driver)  # gc thresholds in a worker process (pipeline.collector)
        self.fields = used_fields(self.config)
        self.pattern = system_from_path(self.config.system_from_path)
        self.progress.start()

    def finish_bundle(self):
        self.progress.flush(force=True)

    def _parse(self, item: SourceRow):
        try:
            if self.kind == "candidates":
                return parse_candidate(item, self.config, self.joined, self.pattern)
            return parse_reference(item, self.config)
        except Exception as err:  # counted and reported, never a failed run
            return internal_error(item.source, item.position, "parsing", err)

    def process(self, path: str):
        self.progress.flush(force=True)  # (a file begins: the stall watch sees the workers counting)
        rows = 0
        errors = ErrorFileWriter(self.errors_folder, path)
        digest: dict = {}
        systems: dict = {}  # good candidate rows per system
        pending: dict = {}
        held = chars = 0
        candidates, buckets = self.kind == "candidates", self.buckets
        run = None  # (doc_id, references, position) of the row whose references the next rows may repeat
        try:
            for item in iter_rows(path, self.config, self.fields, digest):
                if isinstance(item, SourceRow):
                    rows += 1
                    item = self._parse(item)
                else:
                    rows += item.reason not in FILE_LEVEL_REASONS
                if isinstance(item, ErrorRecord):
                    self.progress.add("bad rows")
                    errors.add(item)
                else:
                    if candidates:
                        systems[item.system] = systems.get(item.system, 0) + 1
                    if candidates and item.references is not None:  # joined form: a document's references once
                        if run is not None and item.doc_id == run[0] and item.references == run[1]:
                            item = make(Candidate, (*item[:3], SameReferences(run[2]), *item[4:]))
                        else:
                            run = (item.doc_id, item.references, item.position)
                    bucket = bucket_of(item.doc_id, buckets)
                    held_rows = pending.get(bucket)
                    if held_rows is None:
                        pending[bucket] = held_rows = []
                    held_rows.append(tuple(item))
                    held += 1
                    chars += text_chars(item.references) + (text_chars(item.text) if candidates else 0)
                    if held >= BATCH_ROWS or chars >= BATCH_CHARS:
                        self.progress.add("rows", held)  # (counted a batch at a time, as they leave)
                        yield from batches(pending)
                        pending, held, chars = {}, 0, 0
            if held:
                self.progress.add("rows", held)
            yield from batches(pending)
        finally:
            errors.close()
        write_fingerprint(self.errors_folder, path, digest, rows, sum(errors.by_reason.values()), systems)
        yield beam.pvalue.TaggedOutput(COUNTS, (rows, dict(errors.by_reason)))


class ReadSummaries(beam.PTransform):
    """Read candidate (and, in split form, reference) files.

    Output: a dict of PCollections: "candidates" (batches of Candidate tuples),
    "references" (batches of ReferenceRow tuples: list form with reference_id None,
    one reference per row with a reference_id, "" when the row has none), each
    batch (bucket, rows) as `ReadFileFn` makes them, and "counts" ((rows read, {reason:
    error rows}) per file, for the `input = scored + errors` check); the bad rows
    themselves are already in `errors_folder`.
    """

    def __init__(
        self,
        config: InputConfig,
        candidate_files: list[str],
        reference_files: list[str],
        errors_folder: str,
        progress_seconds: float = 30.0,
        buckets: int = 1,
    ):
        super().__init__()
        self.buckets = buckets
        self.config = config
        self.candidate_files = candidate_files
        self.reference_files = reference_files
        self.errors_folder = errors_folder
        self.progress_seconds = progress_seconds

    def _read(self, pbegin, kind: str, files: list[str]):
        reader = ReadFileFn(self.config, kind, not self.reference_files, self.errors_folder, self.progress_seconds,
                            self.buckets)
        name = kind.capitalize()
        return (
            pbegin
            | f"List{name}Files" >> beam.Create(files)
            | f"Read{name}" >> beam.ParDo(reader).with_outputs(COUNTS, main=kind)
        )

    def expand(self, pbegin):
        candidates = self._read(pbegin, "candidates", self.candidate_files)
        references = self._read(pbegin, "references", self.reference_files)
        counts = (candidates[COUNTS], references[COUNTS]) | "FlattenReadCounts" >> beam.Flatten()
        return {"candidates": batched(candidates.candidates), "references": batched(references.references), "counts": counts}
