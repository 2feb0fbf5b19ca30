"""Reading in Beam: one element per input file, its rows parsed by the project's
one row reader (pipeline.io.rows); bad rows go straight to the errors table."""

from __future__ import annotations

import re

import apache_beam as beam

from pipeline.beam.progress import Progress
from pipeline.config import InputConfig
from pipeline.io.rows import FILE_LEVEL_REASONS, isolated, iter_rows, parse_candidate, parse_reference, used_fields
from pipeline.io.tables import ErrorFileWriter, write_fingerprint
from pipeline.records import ErrorRecord, SourceRow

ERRORS = "errors"
COUNTS = "counts"


class ReadFileFn(beam.DoFn):
    """A file path in; its parsed rows out (`Candidate`, or `ReferenceRow` for a
    reference file).  Its bad rows never enter the graph: they are written, as they
    are found, to the file's own part of the errors table (`ErrorFileWriter`), so
    a file of millions of bad lines costs bounded memory.  COUNTS gets, per file,
    (rows read, {reason: error rows}): every row read is one output or one error.
    """

    def __init__(self, config: InputConfig, kind: str, joined: bool, errors_folder: str, progress_seconds: float):
        self.config = config
        self.kind = kind
        self.joined = joined
        self.errors_folder = errors_folder
        self.progress = Progress(f"reading_{kind}", progress_seconds)

    def setup(self):
        self.fields = used_fields(self.config)
        self.pattern = re.compile(self.config.system_from_path) if self.config.system_from_path else None
        self.progress.start()

    def finish_bundle(self):
        self.progress.flush(force=True)

    def _parse(self, item: SourceRow):
        with isolated(item.source, item.position, "parsing") as out:
            if self.kind == "candidates":
                out.append(parse_candidate(item, self.config, self.joined, self.pattern))
            else:
                out.append(parse_reference(item, self.config))
        return out[0]

    def process(self, path: str):
        rows = 0
        errors = ErrorFileWriter(self.errors_folder, path)
        digest: dict = {}
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
                    self.progress.add("rows")
                    yield item
        finally:
            errors.close()
        write_fingerprint(self.errors_folder, path, digest)
        yield beam.pvalue.TaggedOutput(COUNTS, (rows, dict(errors.by_reason)))


def tagged(items):
    for item in items:
        yield beam.pvalue.TaggedOutput(ERRORS, item) if isinstance(item, ErrorRecord) else item


class ReadSummaries(beam.PTransform):
    """Read candidate (and, in split form, reference) files.

    Output: a dict of PCollections: "candidates" (Candidate), "references"
    (ReferenceRow: list form with reference_id None, one reference per row with
    a reference_id, "" when the row has none) and "counts" ((rows read, {reason:
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
    ):
        super().__init__()
        self.config = config
        self.candidate_files = candidate_files
        self.reference_files = reference_files
        self.errors_folder = errors_folder
        self.progress_seconds = progress_seconds

    def _read(self, pbegin, kind: str, files: list[str]):
        reader = ReadFileFn(self.config, kind, not self.reference_files, self.errors_folder, self.progress_seconds)
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
        return {"candidates": candidates.candidates, "references": references.references, "counts": counts}
