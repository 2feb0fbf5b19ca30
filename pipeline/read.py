"""Reading sharded JSONL / JSONL.gz / Parquet through Beam's FileSystems (so
gs://, s3:// and hdfs:// paths work with the matching Beam extras), and turning
rows into candidates and references, with every bad row tagged as an error."""

from __future__ import annotations

import codecs
import gzip
import json
import re
from typing import Iterable, Optional

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from pipeline.config import InputConfig
from pipeline.progress import Progress
from pipeline.records import Candidate, ErrorRecord, ReferenceRow, SourceRow

ERRORS = "errors"
COUNTS = "counts"


def expand_globs(patterns: Iterable[str]) -> tuple[list[str], list[ErrorRecord]]:
    """Resolve globs to sorted file paths; a glob that matches nothing is an error row."""
    files: list[str] = []
    errors: list[ErrorRecord] = []
    for pattern in patterns:
        try:
            matched = sorted(m.path for m in FileSystems.match([pattern])[0].metadata_list)
        except Exception as err:  # the filesystem's own error says why (bad scheme, no access)
            matched = []
            reason = f"cannot list {pattern!r}: {err}"
        else:
            reason = f"no file matches {pattern!r}"
        if not matched:
            errors.append(ErrorRecord(None, None, pattern, None, "missing_path", reason))
        files += matched
    return sorted(set(files)), errors


def read_lines(fh, limit: int):
    """The lines of a binary file, each with its newline; None for a line longer
    than `limit` bytes, which is skipped without ever being held in memory."""
    pending = bytearray()
    overflow = False
    while chunk := fh.read(1 << 16):
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if overflow:
                yield None
            else:
                pending += chunk[start : end + 1]
                yield bytes(pending) if len(pending) <= limit else None
            pending.clear()
            overflow = False
            start = end + 1
        if not overflow:
            pending += chunk[start:]
            if len(pending) > limit:
                overflow = True
                pending.clear()
    if overflow:
        yield None
    elif pending:
        yield bytes(pending)


class ReadRowsFn(beam.DoFn):
    """A file path in, its parsed rows out (`SourceRow`); bad lines to ERRORS."""

    def __init__(
        self, max_line_bytes: int = 64 << 20, invalid_utf8: str = "reject", progress_seconds: float = 30.0
    ):
        self.max_line_bytes = max_line_bytes
        self.invalid_utf8 = invalid_utf8
        self.progress = Progress("reading", progress_seconds)

    def setup(self):
        self.progress.start()

    def process(self, path: str):
        rows = 0
        try:
            read = self._parquet(path) if path.endswith(".parquet") else self._jsonl(path)
            for output in read:
                rows += 1
                self.progress.add("rows" if isinstance(output, SourceRow) else "bad rows")
                yield output
        except (OSError, EOFError) as err:  # EOFError: a truncated .gz
            yield beam.pvalue.TaggedOutput(
                ERRORS,
                ErrorRecord(
                    None, None, path, None, "unreadable_file", f"cannot read {path} after {rows} rows: {err}"
                ),
            )
        # Every row read becomes exactly one SourceRow or one error row.
        yield beam.pvalue.TaggedOutput(COUNTS, rows)

    def _jsonl(self, path: str):
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as raw_file:
            # Python's gzip, unlike Beam's decompressor, raises EOFError on a
            # truncated file instead of silently ending it early.
            fh = gzip.GzipFile(fileobj=raw_file) if path.endswith(".gz") else raw_file
            for number, raw in enumerate(read_lines(fh, self.max_line_bytes), 1):
                if raw is None:
                    yield _error(
                        path, number, "line_too_long", f"line longer than {self.max_line_bytes} bytes"
                    )
                    continue
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                if not raw.strip():
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    if self.invalid_utf8 != "replace":
                        yield _error(path, number, "undecodable", f"not valid UTF-8 at byte {err.start}")
                        continue
                    line = raw.decode("utf-8", "replace")
                try:
                    row = json.loads(line)
                except (json.JSONDecodeError, RecursionError) as err:
                    yield _error(path, number, "invalid_json", f"not valid JSON: {err}")
                    continue
                if not isinstance(row, dict):
                    yield _error(
                        path, number, "not_an_object", f"expected a JSON object, got {type(row).__name__}"
                    )
                    continue
                yield SourceRow(path, number, row)

    def _parquet(self, path: str):
        import pyarrow.parquet as pq

        number = 0
        with FileSystems.open(path) as fh:
            try:
                for batch in pq.ParquetFile(fh).iter_batches(batch_size=4096):
                    for row in batch.to_pylist():
                        number += 1
                        yield SourceRow(path, number, row)
            except Exception as err:  # pyarrow raises several types for a corrupt file
                yield _error(path, number + 1, "invalid_parquet", f"cannot read Parquet: {err}")


def _error(source: str, position: Optional[int], reason: str, message: str, system=None, doc_id=None):
    return beam.pvalue.TaggedOutput(ERRORS, ErrorRecord(system, doc_id, source, position, reason, message))


def _is_text(value) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))


def _text_bytes(value) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    return sum(len(s.encode("utf-8", "surrogatepass")) + 1 for s in value)


class ParseCandidateFn(beam.DoFn):
    """A `SourceRow` of a candidate file in, a `Candidate` out (or an error)."""

    def __init__(self, config: InputConfig, joined: bool):
        self.config = config
        self.joined = joined

    def setup(self):
        self._system_pattern = (
            re.compile(self.config.system_from_path) if self.config.system_from_path else None
        )

    def process(self, item: SourceRow):
        c = self.config
        source, position, row = item
        system = row.get(c.system_field)
        doc_id = row.get(c.doc_id_field)
        if self._system_pattern is not None and c.system_field not in row:
            match = self._system_pattern.search(source)
            if not match:
                yield _error(
                    source, position, "no_system", f"system_from_path {c.system_from_path!r} does not match"
                )
                return
            system = match.group("system")
        fields = [c.system_field, c.doc_id_field, c.candidate_field]
        if self.joined:
            fields.append(c.references_field)
        for name in fields:
            if name == c.system_field and self._system_pattern is not None and c.system_field not in row:
                continue
            problem = _check_field(row, name, c, list_of_texts=name == c.references_field)
            if problem:
                reason, message = problem
                yield _error(source, position, reason, message, _str_or_none(system), _str_or_none(doc_id))
                return
        references = row[c.references_field] if self.joined else None
        yield Candidate(system, doc_id, row[c.candidate_field], references, source, position)


class ParseReferenceFn(beam.DoFn):
    """A `SourceRow` of a reference file in, a `ReferenceRow` out (or an error)."""

    def __init__(self, config: InputConfig):
        self.config = config

    def process(self, item: SourceRow):
        c = self.config
        source, position, row = item
        doc_id = row.get(c.doc_id_field)
        one_per_row = c.references_field not in row and c.reference_field in row
        field = c.reference_field if one_per_row else c.references_field
        for name in (c.doc_id_field, field):
            problem = _check_field(row, name, c, list_of_texts=not one_per_row and name == field)
            if problem:
                yield _error(source, position, *problem, doc_id=_str_or_none(doc_id))
                return
        if one_per_row:
            reference_id = row.get("reference_id")
            yield ReferenceRow(
                doc_id, [row[field]], "" if reference_id is None else str(reference_id), source, position
            )
        else:
            yield ReferenceRow(doc_id, row[field], None, source, position)


def _str_or_none(value) -> Optional[str]:
    return value if isinstance(value, str) else None


def _check_field(row: dict, name: str, config: InputConfig, *, list_of_texts: bool):
    """Why a field is unusable, as (reason, message), or None when it is fine."""
    if name not in row:
        return "missing_field", f"missing field {name!r}"
    value = row[name]
    if value is None:
        return "null_value", f"field {name!r} is null"
    if name in (config.system_field, config.doc_id_field):
        if not isinstance(value, str) or not value:
            return "wrong_type", f"field {name!r} must be a non-empty string; got {type(value).__name__}"
        return None
    texts = value if list_of_texts else [value]
    if list_of_texts and (not isinstance(value, list) or not value):
        kind = "an empty list" if isinstance(value, list) else type(value).__name__
        return "wrong_type", f"field {name!r} must be a non-empty list of texts; got {kind}"
    for text in texts:
        if text is None:
            return "null_value", f"field {name!r} holds a null text"
        if not _is_text(text):
            return (
                "wrong_type",
                f"field {name!r} must hold texts (a string or a list of strings); got {type(text).__name__}",
            )
        try:
            size = _text_bytes(text)
        except UnicodeEncodeError:
            return "undecodable", f"field {name!r} holds an unpaired surrogate"
        if size > config.max_text_bytes:
            return (
                "text_too_long",
                f"field {name!r} is {size} bytes, over the limit of {config.max_text_bytes}",
            )
    return None


class ReadSummaries(beam.PTransform):
    """Read candidate (and, in split form, reference) files.

    Output: a dict of PCollections: "candidates" (Candidate), "references"
    (ReferenceRow: list form with reference_id None, one reference per row with
    a reference_id, "" when the row has none), "errors" (ErrorRecord) and
    "rows_read" (rows read per file, for the `input = scored + errors` check).
    """

    def __init__(
        self,
        config: InputConfig,
        candidate_files: list[str],
        reference_files: list[str],
        missing: list[ErrorRecord],
        progress_seconds: float = 30.0,
    ):
        super().__init__()
        self.config = config
        self.progress_seconds = progress_seconds
        self.candidate_files = candidate_files
        self.reference_files = reference_files
        self.missing = missing

    def _reader(self) -> ReadRowsFn:
        return ReadRowsFn(self.config.max_line_bytes, self.config.invalid_utf8, self.progress_seconds)

    def expand(self, pbegin):
        joined = not self.reference_files
        candidates = (
            pbegin
            | "ListCandidateFiles" >> beam.Create(self.candidate_files)
            | "ReadCandidateRows" >> beam.ParDo(self._reader()).with_outputs(ERRORS, COUNTS, main="rows")
        )
        parsed = candidates.rows | "ParseCandidates" >> beam.ParDo(
            ParseCandidateFn(self.config, joined)
        ).with_outputs(ERRORS, main="candidates")
        error_parts = [
            candidates[ERRORS],
            parsed[ERRORS],
            pbegin | "MissingPaths" >> beam.Create(self.missing),
        ]
        count_parts = [candidates[COUNTS]]
        result = {"candidates": parsed.candidates}
        if joined:
            result["references"] = pbegin | "NoReferenceFiles" >> beam.Create([])
        else:
            references = (
                pbegin
                | "ListReferenceFiles" >> beam.Create(self.reference_files)
                | "ReadReferenceRows" >> beam.ParDo(self._reader()).with_outputs(ERRORS, COUNTS, main="rows")
            )
            parsed_refs = references.rows | "ParseReferences" >> beam.ParDo(
                ParseReferenceFn(self.config)
            ).with_outputs(ERRORS, main="references")
            result["references"] = parsed_refs.references
            error_parts += [references[ERRORS], parsed_refs[ERRORS]]
            count_parts.append(references[COUNTS])
        result["errors"] = error_parts | "FlattenReadErrors" >> beam.Flatten()
        result["rows_read"] = count_parts | "FlattenRowCounts" >> beam.Flatten()
        return result
