"""Reading sharded JSONL / JSONL.gz / Parquet (local paths, or gs://, s3:// and
hdfs:// URLs through Beam's FileSystems with the matching Beam extras), and turning
rows into candidates and references, with every bad row as an error record.

The one row reader of the project: `run` (in Beam workers, pipeline.beam.read),
`score` and the line-aligned text reader all go through it."""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import json
import logging
import os
import re
import stat
import zlib
from typing import Iterable, NamedTuple, Optional

import numpy as np
import orjson

from pipeline.config import InputConfig
from pipeline.io import files
from pipeline.io.names import MAX_ID_CHARS, id_problem, shown
from pipeline.records import Candidate, ErrorRecord, ReferenceRow, SourceRow, make

log = logging.getLogger("rouge-pipeline")


# Names of row tables (JSON Lines, Parquet).  A file or glob named by the user is read
# whatever its name; in a folder, only these and names without an extension (Beam's and
# Hadoop's `part-00000`) are rows, and the rest (a README, _SUCCESS, .crc files) is skipped.
TABLE_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson", ".parquet")


def _in_folder_is_table(path: str) -> bool:
    name = os.path.basename(path)
    if name.startswith((".", "_")):  # hidden, or Hadoop's and Spark's markers (_SUCCESS, _metadata)
        return False
    return name.lower().endswith(TABLE_SUFFIXES) or "." not in name


def _tables_in_folder(folder: str, matched: dict[str, int]) -> dict[str, int]:
    """The row tables among a folder's files; the others named in one warning."""
    kept = {path: size for path, size in matched.items() if _in_folder_is_table(path)}
    skipped = sorted(os.path.basename(p) for p in matched if p not in kept)
    if skipped:
        more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
        log.warning("%s: skipped %d file(s) not named as JSON Lines or Parquet (%s): %s%s", shown(folder),
                    len(skipped), ", ".join(TABLE_SUFFIXES), ", ".join(shown(n) for n in skipped[:3]), more)
    return kept


def expand_globs(patterns: Iterable[str]) -> tuple[list[str], list[ErrorRecord], int]:
    """Resolve globs to sorted file paths; a glob that matches nothing is an error
    row.  Also returns the files' total size in bytes.  A folder names the row tables
    in it (TABLE_SUFFIXES; the other files skipped, with a warning).  A file named
    twice (by two globs, or through a link) is read once, under its first name in
    sorted order: read twice, every row of it would be a duplicate."""
    found: dict[str, int] = {}
    errors: list[ErrorRecord] = []
    for pattern in patterns:
        try:
            matched = files.match(pattern)
        except Exception as err:  # the filesystem's own error says why (bad scheme, no access)
            matched = {}
            reason = f"cannot list {pattern!r}: {err}"
        else:
            folder = not files.is_url(pattern) and os.path.isdir(pattern)
            reason = f"the folder {pattern!r} holds no file" if folder else f"no file matches {pattern!r}"
            if folder and matched:
                matched = _tables_in_folder(pattern, matched)
                reason = f"the folder {pattern!r} holds no JSON Lines or Parquet file ({', '.join(TABLE_SUFFIXES)})"
        if not matched:
            errors.append(ErrorRecord(None, None, pattern, None, "missing_path", reason))
        found.update(matched)
    unique: dict = {}
    for path in sorted(found):
        first = unique.setdefault(files.identity(path) or path, path)
        if first != path:
            log.warning("%s is the same file as %s: read once", shown(path), shown(first))
    paths = sorted(unique.values())
    return paths, errors, sum(found[p] for p in paths)


def read_lines(fh, limit: int):
    """The lines of a binary file without their line ends; None for a line longer
    than `limit` bytes, which is skipped without ever being held in memory.

    Line ends are those of Python's universal newlines, for `run` and `score`
    alike: `\n`, `\r\n` and a lone `\r` (a JSON line cannot hold a raw CR inside a
    string, so splitting at one never cuts a value).
    """
    pending = bytearray()
    overflow = False
    # read1: what is decoded so far, never more; a damaged .gz raises on the call
    # after the last good bytes, so every row before the damage is kept.
    read = getattr(fh, "read1", fh.read)
    while True:
        try:
            chunk = read(1 << 16)
        except (OSError, EOFError, zlib.error):
            # The last line before the damage, cut or whole, is still a row to
            # account for (a cut JSON line becomes an invalid_json error row).
            if pending and not overflow:
                yield from _cr_lines(bytes(pending))
            raise
        if not chunk:
            break
        first = chunk.find(b"\n")
        if first == -1:
            if not overflow:
                pending += chunk
                if len(pending) > limit:
                    overflow = True
                    pending.clear()
            continue
        # The line the chunk ends, then its whole lines (split at once, in C: a
        # find and a copy per line cost a microsecond), then the start of the next.
        if overflow:
            yield None
        else:
            pending += chunk[:first]
            if len(pending) <= limit:
                yield from _cr_lines(bytes(pending))
            else:
                yield None
        pending.clear()
        overflow = False
        lines = chunk[first + 1 :].split(b"\n")
        pending += lines.pop()
        if b"\r" in chunk:
            for line in lines:
                yield from _cr_lines(line) if len(line) <= limit else (None,)
        elif limit >= len(chunk):
            yield from lines
        else:
            for line in lines:
                yield line if len(line) <= limit else None
        if len(pending) > limit:
            overflow = True
            pending.clear()
    if overflow:
        yield None
    elif pending:
        yield from _cr_lines(bytes(pending))


def _cr_lines(line: bytes):
    if line.endswith(b"\r"):
        line = line[:-1]
    if b"\r" in line:
        yield from line.split(b"\r")
    else:
        yield line


class HugeInteger(int):
    """An integer literal past Python's digit limit, kept as a marker: a field that
    is used rejects it as a wrong type, an unused one is dropped."""


def _parse_int(literal: str):
    if len(literal) > 4000:  # int() refuses more than sys.get_int_max_str_digits() (4300)
        return HugeInteger(0)
    return int(literal)


_DECODER = json.JSONDecoder(parse_int=_parse_int)  # (json.loads with an option builds one per call)


def _fast_row(raw: bytes, fields: frozenset[str]) -> Optional[dict]:
    """A JSON object row as orjson reads it, when json would read it the same: None
    for anything else, which json then reads (and reports).  orjson refuses what
    json reports (bad UTF-8, bad JSON) and some of what json reads (lone surrogate
    escapes, NaN, numbers past a double), and reads integers past 64 bits as
    floats: so a row whose used field is not a text or a list of texts is left to
    json too, which says what is wrong with it exactly as before."""
    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(row) is not dict:
        return None
    for key, value in row.items():
        if key in fields and type(value) is not str and not (type(value) is list and _all_str(value)):
            return None
    return row


def _all_str(values: list) -> bool:
    for value in values:
        if type(value) is not str:
            return False
    return True


def _sniff(fh) -> bytes:
    if hasattr(fh, "peek"):
        return fh.peek(4)[:4]
    head = fh.read(4)
    fh.seek(0)
    return head


class HashingReader:
    """A binary file read once, front to back, hashing every byte as it goes: the
    run record's fingerprint is of the bytes that were parsed, not of the file as
    it is after the run (which may have changed, or be a pipe that is gone)."""

    def __init__(self, raw):
        self.raw = raw
        self.sha256 = hashlib.sha256()
        self.size = 0
        self._head = b""

    def _take(self, data: bytes) -> bytes:
        self.sha256.update(data)
        self.size += len(data)
        return data

    def peek(self, n: int = 1) -> bytes:
        """The next bytes without consuming them (read once from the file, kept)."""
        if len(self._head) < n:
            self._head += self._take(self.raw.read(n - len(self._head)))
        return self._head

    def read(self, n: int = -1) -> bytes:
        if self._head:
            head, self._head = (self._head, b"") if n < 0 or n >= len(self._head) else (self._head[:n], self._head[n:])
            if n < 0:
                return head + self._take(self.raw.read())
            return head
        return self._take(self.raw.read(n))

    read1 = read

    def readable(self) -> bool:
        return True

    def drain(self) -> None:
        """Hash what is left unread (after a damaged block), so the digest is the file's."""
        self._head = b""
        while self._take(self.raw.read(1 << 20)):
            pass

    def digest(self) -> dict:
        return {"bytes": self.size, "sha256": self.sha256.hexdigest()}


def _parquet_digest(raw_file) -> tuple[dict, Optional[tuple]]:
    """A Parquet file is read by seeking (footer first), so it is hashed in one pass
    through the same open file first; its (size, mtime) is returned to tell, after
    parsing, whether it changed in between."""
    reader = HashingReader(raw_file)
    reader.drain()
    raw_file.seek(0)
    return reader.digest(), _stat_of(raw_file)


def _changed(raw_file, opened: Optional[tuple], read: int) -> Optional[str]:
    """How a regular file changed since it was opened, its `read` bytes parsed: it grew
    (an append after the reader reached its end: those bytes were not read), shrank, or
    was written while it was read; None when it did not."""
    now = _stat_of(raw_file)
    if now is None or opened is None or not stat.S_ISREG(now[2]):
        return None
    if now[0] > read:
        return f"it grew by {now[0] - read} bytes after it was read; the {read} bytes read are what was scored"
    if now[0] < read:
        return f"it shrank to {now[0]} bytes after {read} were read; the bytes read are what was scored"
    if now != opened:
        return "it was written while it was read: its rows may mix two versions of it"
    return None


def _stat_of(raw_file) -> Optional[tuple]:
    try:
        st = os.fstat(raw_file.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_mode)


def iter_rows(path: str, config: InputConfig, fields: Optional[frozenset[str]], digest: Optional[dict] = None):
    """Every row of one file, as a `SourceRow` holding only `fields` (None: every
    field), or an `ErrorRecord`; a file that cannot be read ends with one
    `unreadable_file` error.  Memory is bounded by config's limits whatever the
    file holds (`max_line_bytes` a line, `max_text_bytes` a Parquet cell, the
    Parquet page bounds): `run`, `score` and meta-eval's tables read through it.

    The format comes from the extension (any case: `.parquet`, `.jsonl`, `.json`,
    `.gz`) and, for gzip, from the file's first bytes.  `run` (one call per file,
    in a Beam worker) and `score` read through this same function.

    `digest`, when given, is filled with {"bytes", "sha256"} of the bytes read
    (the file is opened once and read once; JSON Lines are hashed as they are
    parsed), or {"error": ...} when the file could not be opened.
    """
    rows = 0
    try:
        if path == "-":  # stdin (score): JSON Lines
            yield from _jsonl_rows(files.stdin(), "<stdin>", config, fields)
            return
        with files.open_read(path, pipe_ok=True) as raw_file:  # (score reads a pipe once; run refuses it)
            if path.lower().endswith(".parquet"):
                before = (None, None)
                if digest is not None:
                    before = _parquet_digest(raw_file)
                    digest.update(before[0])
                read = _parquet_rows(raw_file, path, config, fields)
                reader = None
            else:
                opened = _stat_of(raw_file)
                reader = HashingReader(raw_file)
                read = _jsonl_rows(reader, path, config, fields)
            completed = False
            try:
                for item in read:
                    rows += 1
                    yield item
                completed = True
            finally:
                if reader is not None and digest is not None:
                    if not completed:  # (stopped early, at damage: the rest is hashed, so the digest is the file's)
                        reader.drain()
                    digest.update(reader.digest())  # (else exactly the bytes that were parsed, never more)
                    change = _changed(raw_file, opened, reader.size) if completed else None
                    if change:
                        digest["changed"] = change
            if reader is None and before[1] is not None and _stat_of(raw_file) != before[1]:
                raise OSError(f"{path} changed while it was being read; its rows may mix two versions")
    except (OSError, EOFError, zlib.error) as err:  # EOFError, zlib.error: a truncated or corrupt .gz
        if digest is not None and not digest:
            digest["error"] = str(err)
        yield ErrorRecord(
            None, None, path, None, "unreadable_file", f"cannot read {path} after {rows} rows: {err}"
        )
    except Exception as err:  # the last resort: the file stops here, and says so
        if digest is not None and not digest:
            digest["error"] = f"{type(err).__name__}: {err}"
        yield ErrorRecord(
            None, None, path, None, "unreadable_file",
            f"unexpected {type(err).__name__} reading {path} after {rows} rows: {str(err)[:300]!r}",
        )


def parquet_file_rows(raw_file, source: str, config: InputConfig, fields: frozenset[str]):
    """The rows of a Parquet file already open (a result folder's table, checked
    against its manifest: pipeline.io.result_folder), with every bound `iter_rows`
    reads Parquet with: a `SourceRow` or an `ErrorRecord` each."""
    return _parquet_rows(raw_file, source, config, fields)


def _jsonl_rows(raw_file, path: str, config: InputConfig, fields: frozenset[str]):
    # Python's gzip, unlike Beam's decompressor, raises EOFError on a truncated
    # file instead of silently ending it early.
    gzipped = path.lower().endswith(".gz") or _sniff(raw_file)[:2] == b"\x1f\x8b"
    fh = gzip.GzipFile(fileobj=raw_file) if gzipped else raw_file
    for number, raw in enumerate(read_lines(fh, config.max_line_bytes), 1):
        if raw is None:
            yield row_error(path, number, "line_too_long", f"line longer than {config.max_line_bytes} bytes")
            continue
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        if not raw or raw.isspace():  # (what strip() would leave empty, without a copy)
            continue
        row = _fast_row(raw, fields) if fields is not None else None  # (every field: json's own reading)
        if row is not None:
            yield make(SourceRow, (path, number, _used(row, fields)))
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            if config.invalid_utf8 != "replace":
                yield row_error(path, number, "undecodable", f"not valid UTF-8 at byte {err.start}")
                continue
            line = raw.decode("utf-8", "replace")
        try:
            row = _DECODER.decode(line)
        except RecursionError:
            yield row_error(path, number, "invalid_json", "JSON nested too deeply to read")
            continue
        except ValueError as err:
            yield row_error(path, number, "invalid_json", f"not valid JSON: {err}")
            continue
        if not isinstance(row, dict):
            yield row_error(path, number, "not_an_object", f"expected a JSON object, got {type(row).__name__}")
            continue
        yield SourceRow(path, number, _used(row, fields))


def _used(row: dict, fields: Optional[frozenset[str]]) -> dict:
    """The row's used fields (the row itself when it holds no other, or `fields` is None: all)."""
    return row if fields is None or row.keys() <= fields else {k: v for k, v in row.items() if k in fields}


# A Parquet batch holds at most this many bytes of the used text columns' pages (by
# their headers: what the batch's rows can decode to), or one row.
_BATCH_BYTES = 32 << 20
_BATCH_ROWS = 4096
# What one leaf value costs in memory beyond its text (offsets, validity, an index):
# counted against a row's max_text_bytes, so that a run-length encoded list of a
# hundred million empty strings is refused from the metadata, before it is decoded.
VALUE_OVERHEAD = 16
# Arrow decodes a list column (references) a whole row group at a time, whatever
# the batch size: a row group whose list column would decode to more than this
# (its pages' uncompressed bytes plus VALUE_OVERHEAD a value) is refused unread.
_NESTED_GROUP_BYTES = 1 << 30
# Arrow decodes a page whole, and a dictionary page stays for its row group (each
# value then a Python bytes object): a page that decodes to more than this (its
# uncompressed size, plus _DICTIONARY_VALUE_COST a dictionary value) is refused, from
# its header, before Arrow reads it.  Writers aim at 1 MB pages, but cut a page only
# after a write batch (pyarrow: 1,024 values), so a small file can hold a page that
# decodes to gigabytes: Arrow took 1-2.5 GB to read one of 1 GB.
_PAGE_BYTES = 64 << 20
_DICTIONARY_VALUE_COST = 64
_DICTIONARY_PAGE = 2
# DELTA_BYTE_ARRAY stores each value as a prefix of the one before plus a suffix: a
# page of a few KB can decode to gigabytes, which its header cannot tell.
_DELTA_BYTE_ARRAY = 7
# Arrow reads a column chunk through a buffer of this size (not the whole chunk at
# once: a 2 GB row group's compressed chunks are not held).
_READ_BUFFER = 1 << 20


class _Page(NamedTuple):
    """One page of a column chunk, from its header: its type, the bytes it decodes to
    (uncompressed), its values (a dictionary's, or a data page's: rows and nulls of a
    flat column), its rows where the header says (data page v2), its encoding."""

    kind: int
    size: int
    values: Optional[int]
    rows: Optional[int]
    encoding: Optional[int]


class _PageHeaders:
    """The page headers of one column chunk, read with just enough of Thrift's
    compact protocol, in order: `_Page`s.  Every header is read, whatever the footer
    says of the chunk's uncompressed size (a footer can understate it)."""

    def __init__(self, raw_file, chunk):
        self.raw_file = raw_file
        dictionary = chunk.has_dictionary_page and chunk.dictionary_page_offset
        self.offset = chunk.dictionary_page_offset if dictionary else chunk.data_page_offset
        self.end = self.offset + chunk.total_compressed_size

    def __iter__(self):
        offset = self.offset
        while offset < self.end:
            size = 256
            while True:  # a header with statistics can be long: read more until it parses
                self.raw_file.seek(offset)
                self.data, self.position = self.raw_file.read(size), 0
                try:
                    fields = self._struct()
                    break
                except IndexError:
                    if len(self.data) < size or size >= 1 << 24:
                        raise ValueError(f"a page header at byte {offset} cannot be read") from None
                    size *= 8
            if 1 not in fields or 2 not in fields or 3 not in fields:
                raise ValueError(f"a page header at byte {offset} lacks its type or sizes")
            dictionary, v1, v2 = (fields.get(k) or {} for k in (7, 5, 8))
            header = dictionary or v1 or v2
            yield _Page(fields[1], fields[2], header.get(1), v2.get(3), v1.get(2, v2.get(4)))
            offset += self.position + fields[3]

    def _byte(self) -> int:
        byte = self.data[self.position]
        self.position += 1
        return byte

    def _varint(self) -> int:
        shift = result = 0
        while True:
            byte = self._byte()
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result

    def _int(self) -> int:
        n = self._varint()
        return (n >> 1) ^ -(n & 1)

    def _struct(self, depth: int = 0) -> dict:
        """A struct's integer fields {id: value} (the page header's, and those of its
        data page (5), dictionary page (7) and data page v2 (8) headers); the rest skipped."""
        fields: dict = {}
        field = 0
        while True:
            byte = self._byte()
            kind, delta = byte & 0x0F, byte >> 4
            if kind == 0:
                return fields
            field = field + delta if delta else self._int()
            if kind in (4, 5, 6) and depth < 2:
                fields[field] = self._int()  # 1 type, 2 uncompressed size, 3 compressed size; 1 values ...
            elif kind == 12 and depth == 0 and field in (5, 7, 8):
                fields[field] = self._struct(depth + 1)
            else:
                self._skip(kind)

    def _skip(self, kind: int) -> None:
        if kind in (1, 2):  # a boolean field: the value is in the type
            return
        if kind == 3:
            self.position += 1
        elif kind in (4, 5, 6):
            self._varint()
        elif kind == 7:
            self.position += 8
        elif kind == 8:
            length = self._varint()  # (read before `position` is: the varint moves it)
            self.position += length
        elif kind in (9, 10):
            header = self._byte()
            count, element = header >> 4, header & 0x0F
            if count == 15:
                count = self._varint()
            for _ in range(count):
                self._skip(3 if element in (1, 2) else element)
        elif kind == 11:
            count = self._varint()
            if count:
                types = self._byte()
                for _ in range(count):
                    self._skip(types >> 4)
                    self._skip(types & 0x0F)
        elif kind == 12:
            self._struct(depth=2)
        else:
            raise ValueError(f"unknown Thrift type {kind} in a page header")
        if self.position > len(self.data):
            raise IndexError


def _text_pages(raw_file, meta, columns) -> dict:
    """{leaf path: [_Page, ...]} of the row group's text (BYTE_ARRAY) column chunks of
    `columns`, from their page headers."""
    return {
        chunk.path_in_schema: list(_PageHeaders(raw_file, chunk))
        for chunk in (meta.column(i) for i in range(meta.num_columns))
        if chunk.path_in_schema.split(".")[0] in columns and chunk.physical_type == "BYTE_ARRAY"
    }


def _page_problem(pages: dict, group: int) -> Optional[str]:
    """Why a row group cannot be read within the bounds, from its text pages: a page
    (a dictionary, with its values' cost) that decodes to more than _PAGE_BYTES, or
    a DELTA_BYTE_ARRAY page; None when every page is fine."""
    bound = f"over the reader's bound of {_PAGE_BYTES >> 20} MiB a page"
    for leaf, found in pages.items():
        top = leaf.split(".")[0]
        for page in found:
            if page.kind == _DICTIONARY_PAGE and page.size + _DICTIONARY_VALUE_COST * (page.values or 0) > _PAGE_BYTES:
                return (f"row group {group}, column {top!r}: its dictionary decodes to {page.size} bytes "
                        f"({page.values} value(s)), {bound}")
            if page.kind != _DICTIONARY_PAGE and page.size > _PAGE_BYTES:
                return f"row group {group}, column {top!r}: a page decodes to {page.size} bytes, {bound}"
            if page.kind != _DICTIONARY_PAGE and page.encoding == _DELTA_BYTE_ARRAY:
                return (f"row group {group}, column {top!r}: a page is DELTA_BYTE_ARRAY-encoded, whose values can "
                        "decode to far more than the page (each is a prefix of the one before and more)")
    return None


def _batch_rows(pages: dict, rows: int, spread: int = 0, most: int = _BATCH_ROWS) -> int:
    """Rows per batch for a row group of `rows` rows whose flat text columns have these
    data pages: the most (up to `most`, halving) such that no batch's rows lie
    in pages that decode to more than _BATCH_BYTES in all, or 1.  From the pages the
    rows are in, not from an average: 10,000 one-byte rows and then 30 of 50 MiB are
    read one row at a time where the 50 MiB pages are (each page of a batch is at
    most _PAGE_BYTES, checked before).  `spread`: the bytes of list columns, whose
    pages do not say which rows they hold, counted as if spread evenly."""
    spans = []  # (first row, last row + 1, bytes) of every data page
    for found in pages.values():
        start = 0
        for page in found:
            if page.kind == _DICTIONARY_PAGE:
                continue
            count = page.rows if page.rows is not None else page.values
            if count is None or count < 0:
                return 1  # (a header without its values: no layout to go by)
            spans.append((start, start + count, page.size))
            start += count
        if start != rows:
            return 1
    if rows <= 1:
        return 1
    if not spans:
        spans = [(0, 0, 0)]
    first, last, size = (np.array(column, dtype=np.int64) for column in zip(*spans))
    batch = most
    while batch > 1:
        windows = np.zeros(-(-rows // batch) + 1, dtype=np.int64)
        touched = last > first  # (a page of no rows touches no batch)
        np.add.at(windows, first[touched] // batch, size[touched])
        np.subtract.at(windows, (last[touched] - 1) // batch + 1, size[touched])
        if np.cumsum(windows).max() + spread * batch // rows <= _BATCH_BYTES:
            return batch
        batch //= 2
    return 1


def _parquet_rows(raw_file, path: str, config: InputConfig, fields: Optional[frozenset[str]]):
    """Rows of a Parquet file, reading only the used columns (`fields`; None: every
    column), one row group at a time, in batches that the pages' headers size.

    Memory is bounded by what is decoded, for every encoding, never by what the
    footer claims.  Every page header of the used text columns is read first: a row
    group with a page (a dictionary page or a data page, of any text column, lists
    included) over _PAGE_BYTES, or a DELTA_BYTE_ARRAY page, is refused before Arrow
    reads it; so is a row group whose column chunk could not hold one row within
    `max_text_bytes` (compressed pages or run-length encoded lists), and one whose
    list column, which Arrow decodes whole, is over _NESTED_GROUP_BYTES.  A batch's
    rows lie in pages that decode to at most _BATCH_BYTES, or it is one row.  Text
    columns that have a dictionary page are read dictionary-encoded
    (`read_dictionary`), so a dictionary page of one large text repeated in every
    row stays one text; each row's decoded size is computed from the dictionary's
    value lengths (or the plain values' lengths) before any Python string is made,
    and a row over `max_text_bytes` is an error row naming the file (its source)
    and the column; its cells are never made Python values."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    number = 0
    try:
        probe = pq.ParquetFile(raw_file, buffer_size=_READ_BUFFER, pre_buffer=False)
        columns = [name for name in probe.schema_arrow.names if fields is None or name in fields]
        list_columns = {
            field.name for field in probe.schema_arrow
            if field.name in columns and (pa.types.is_list(field.type) or pa.types.is_large_list(field.type))
        }
        readers: dict = {}  # (`_dictionary_reader`)
        for group in range(probe.num_row_groups):
            meta = probe.metadata.row_group(group)
            rows = meta.num_rows
            pages = _text_pages(raw_file, meta, columns) if rows else {}
            parquet = _dictionary_reader(raw_file, pages, readers)
            refused = _refused(meta, group, pages, columns, list_columns, config) if rows else None
            if refused is not None:  # every row of the row group is one text_too_long error
                for _ in range(rows):
                    number += 1
                    yield row_error(path, number, "text_too_long", refused)
                continue
            flat = {leaf: found for leaf, found in pages.items() if leaf.split(".")[0] not in list_columns}
            spread = sum(p.size for leaf, found in pages.items() if leaf not in flat for p in found)
            batches = parquet.iter_batches(batch_size=_batch_rows(flat, rows, spread), row_groups=[group],
                                           columns=columns)
            dictionaries: dict = {}
            for batch in batches:
                arrays = [batch.column(i) for i in range(batch.num_columns)]
                cell_sizes = [_cell_bytes(array, pa) for array in arrays]
                too_long = [any(sizes[r] > config.max_text_bytes for sizes in cell_sizes) for r in range(batch.num_rows)]
                values = [_batch_values(_without(array, too_long, pa), pa, dictionaries, i)
                          for i, array in enumerate(arrays)]
                for r in range(batch.num_rows):
                    number += 1
                    if too_long[r]:
                        size, column = max((cell_sizes[i][r], columns[i]) for i in range(len(columns)))
                        yield row_error(
                            path,
                            number,
                            "text_too_long",
                            f"field {column!r} decodes to {size} bytes, over input.max_text_bytes "
                            f"({config.max_text_bytes}); the row is not used",
                        )
                        continue
                    try:
                        row = {
                            columns[i]: _decode(values[i][r], config.invalid_utf8)
                            for i in range(len(columns))
                        }
                    except UnicodeDecodeError as err:
                        yield row_error(path, number, "undecodable", f"a cell is not valid UTF-8 at byte {err.start}")
                        continue
                    yield SourceRow(path, number, row)
    except Exception as err:  # pyarrow raises several types for a corrupt file
        yield row_error(path, number + 1, "invalid_parquet", f"cannot read Parquet: {type(err).__name__}: {err}")


def _dictionary_reader(raw_file, pages: dict, readers: dict):
    """The ParquetFile that reads a row group whose text leaves have these `pages` with
    its dictionary-encoded leaves as dictionaries, one kept in `readers` per set of
    such leaves: a chunk read as a dictionary keeps one copy of each value, but a
    chunk of plain pages read as a dictionary is hashed into one, whole (10 GB for a
    2 GB row group)."""
    import pyarrow.parquet as pq

    encoded = tuple(sorted(leaf for leaf, found in pages.items() if any(p.kind == _DICTIONARY_PAGE for p in found)))
    if encoded not in readers:
        raw_file.seek(0)
        readers[encoded] = pq.ParquetFile(raw_file, read_dictionary=list(encoded), buffer_size=_READ_BUFFER,
                                          pre_buffer=False)
    return readers[encoded]


class TableBoundError(ValueError):
    """A Parquet table that `bounded_batches` does not read: the sentence says why."""


_COLUMN_BATCH_ROWS = 1 << 16  # rows a batch of `bounded_batches` by default (and at most _BATCH_BYTES of text pages)
MAX_CELL_BYTES = 4 * MAX_ID_CHARS  # a text cell of a result table: an id of at most 1,000 characters, in UTF-8
TABLE_BYTES = 1 << 30  # what a result table read whole may decode to (1,000 systems' significance: ~300 MB)
STREAMED_TABLE_BYTES = 4 << 30  # and one read a batch at a time (its time, not its memory: 1-2 s to decode)


def bounded_batches(raw_file, columns: Optional[list[str]], max_cell_bytes: int, most_bytes: int,
                    most_rows: Optional[int] = None, batch_rows: int = _COLUMN_BATCH_ROWS):
    """Arrow record batches of a Parquet file (a seekable binary file, read a row
    group at a time, at most `batch_rows` rows a batch), of `columns` (None: every
    column; flat columns only), for a table of untrusted bytes read as columns: a
    result folder's (pipeline.io.result_folder).

    The bounds are `_parquet_rows`': every page header of the text columns is read
    first, and a row group with a page over _PAGE_BYTES or DELTA_BYTE_ARRAY-encoded
    is refused before Arrow reads it; a batch's rows lie in pages of at most
    _BATCH_BYTES; dictionary-encoded text is read as a dictionary and each cell's
    length checked (at most `max_cell_bytes`) before it is decoded.  And what all
    batches decode to, counted from the footer's rows before each row group is read
    (8 bytes a number, a text cell's bytes plus VALUE_OVERHEAD), is at most
    `most_bytes`: a file of a few KB whose run-length encoded rows decode to
    gigabytes is refused, however its consumer holds them; so is one of more than
    `most_rows` rows, when given (what the run that wrote it recorded).  TableBoundError
    otherwise; a file Arrow cannot read raises what Arrow raises."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    probe = pq.ParquetFile(raw_file, buffer_size=_READ_BUFFER, pre_buffer=False)
    schema = probe.schema_arrow
    columns = list(schema.names) if columns is None else columns
    nested = [name for name in columns if name in schema.names and pa.types.is_nested(schema.field(name).type)]
    if nested:
        raise TableBoundError(f"column {nested[0]!r} is nested; a table of this tool has flat columns")
    kinds = {name: schema.field(name).type for name in columns if name in schema.names}
    text = [name for name, kind in kinds.items()  # (a schema Arrow stored may say dictionary: its values' type counts)
            if _is_text_type(kind.value_type if pa.types.is_dictionary(kind) else kind, pa)]
    numbers = len(columns) - len(text)
    if most_rows is not None and probe.metadata.num_rows > most_rows:
        raise TableBoundError(f"it has {probe.metadata.num_rows} rows where its run recorded at most {most_rows}")
    decoded, readers = 0, {}
    for group in range(probe.num_row_groups):
        meta = probe.metadata.row_group(group)
        rows = meta.num_rows
        if rows <= 0:
            continue
        pages = _text_pages(raw_file, meta, text)
        problem = _page_problem(pages, group)
        if problem:
            raise TableBoundError(problem)
        decoded += rows * (8 * numbers + VALUE_OVERHEAD * len(text))
        if decoded > most_bytes:
            raise TableBoundError(f"its rows decode to more than {most_bytes} bytes, this reader's bound")
        size = _batch_rows(pages, rows, most=batch_rows)
        reader = _dictionary_reader(raw_file, pages, readers)
        for batch in reader.iter_batches(batch_size=size, row_groups=[group], columns=columns):
            arrays = []
            for name, array in zip(batch.schema.names, batch.columns):
                dictionary = pa.types.is_dictionary(array.type)
                if name in text:  # (a dictionary's cells measured by its values' lengths, before they are decoded)
                    lengths = (pc.take(pc.binary_length(array.dictionary), array.indices) if dictionary
                               else pc.binary_length(array))
                    longest = pc.max(lengths).as_py() or 0
                    if longest > max_cell_bytes:
                        raise TableBoundError(f"a cell of column {name!r} decodes to {longest} bytes, over this "
                                              f"reader's bound of {max_cell_bytes}")
                    decoded += pc.sum(lengths).as_py() or 0
                    if decoded > most_bytes:
                        raise TableBoundError(f"its rows decode to more than {most_bytes} bytes, this reader's bound")
                arrays.append(array.dictionary_decode() if dictionary else array)
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _refused(meta, group: int, pages: dict, columns: list, list_columns: set, config: InputConfig) -> Optional[str]:
    """Why row group `group` (its metadata `meta`, its text `pages`) is not read, or
    None: a page over the bounds; a column that cannot hold a row within
    max_text_bytes; a list column over _NESTED_GROUP_BYTES.  Sizes are the pages'
    (from their headers), or the footer's where it says more."""
    large = _page_problem(pages, group)
    if large:
        return (f"{large}; not read (write the file with smaller pages: pyarrow's write_batch_size, "
                "data_page_size and dictionary_pagesize_limit)")
    rows = meta.num_rows
    sizes, values_of = {}, {}  # by column: a list column has several leaves under one name
    for i in range(meta.num_columns):
        chunk = meta.column(i)
        top = chunk.path_in_schema.split(".")[0]
        walked = sum(p.size + (_DICTIONARY_VALUE_COST * (p.values or 0) if p.kind == _DICTIONARY_PAGE else 0)
                     for p in pages.get(chunk.path_in_schema, ()))
        sizes[top] = sizes.get(top, 0) + max(chunk.total_uncompressed_size, walked)
        values_of[top] = values_of.get(top, 0) + chunk.num_values
    cost = {name: sizes.get(name, 0) + VALUE_OVERHEAD * values_of.get(name, 0) for name in columns}
    worst = max(columns, key=lambda name: cost[name], default=None)
    if worst is not None and cost[worst] > 4 * config.max_text_bytes and cost[worst] / rows > config.max_text_bytes:
        return (
            f"row group {group} holds {sizes.get(worst, 0)} bytes in {values_of.get(worst, 0)} value(s) "
            f"of column {worst!r} for {rows} row(s), over input.max_text_bytes "
            f"({config.max_text_bytes}) a row; not read"
        )
    nested = [name for name in columns if name in list_columns and cost[name] > _NESTED_GROUP_BYTES]
    if nested:
        return (
            f"row group {group} holds {values_of.get(nested[0], 0)} value(s), {sizes.get(nested[0], 0)} "
            f"bytes, of list column {nested[0]!r} for {rows} row(s): Arrow decodes a list column a row "
            f"group at a time, and this one is over the reader's bound of {_NESTED_GROUP_BYTES >> 20} MiB; "
            "not read (write the file with smaller row groups)"
        )
    return None


def _without(array, drop: list, pa):
    """A flat text array with the cells of the rows in `drop` made null (they are never
    made Python values: a row over the limit costs nothing more than its page)."""
    if not any(drop) or not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
                             or pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type)):
        return array
    import pyarrow.compute as pc  # noqa: PLC0415

    return pc.if_else(pa.array(drop, pa.bool_()), pa.scalar(None, array.type), array)


def _batch_values(array, pa, dictionaries: dict, key) -> list:
    """An Arrow array as Python values, text as bytes (so that a cell with invalid
    UTF-8 fails alone, when it is decoded).  A dictionary's values are converted
    once per row group and shared by the rows that use them, never copied."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        known = _dictionary_values(array.dictionary, pa, dictionaries, key)
        return [None if i is None else known[i] for i in array.indices.to_pylist()]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        offsets = array.offsets.to_pylist()
        base = offsets[0]
        inner = _batch_values(array.values.slice(base, offsets[-1] - base), pa, dictionaries, (key, "item"))
        valid = array.is_valid().to_pylist()
        return [inner[a - base : b - base] if ok else None for a, b, ok in zip(offsets, offsets[1:], valid)]
    if pa.types.is_string(kind):
        return array.cast(pa.binary()).to_pylist()
    if pa.types.is_large_string(kind):
        return array.cast(pa.large_binary()).to_pylist()
    return array.to_pylist()


def _dictionary_values(dictionary, pa, cache: dict, key) -> list:
    address = dictionary.buffers()[-1].address if dictionary.buffers()[-1] is not None else 0
    cached = cache.get(key)
    if cached is None or cached[0] != (address, len(dictionary)):
        kind = dictionary.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            dictionary = dictionary.cast(pa.large_binary() if pa.types.is_large_string(kind) else pa.binary())
        cached = ((address, len(dictionary)), dictionary.to_pylist())
        cache[key] = cached
    return cached[1]


def _cell_bytes(array, pa) -> list[int]:
    """Per row, the bytes of string data the cell decodes to (nested lists summed;
    a dictionary-encoded cell counts its value's length, without decoding it)."""
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = pc.binary_length(array.dictionary) if _is_text_type(kind.value_type, pa) else pa.array(
            [0] * len(array.dictionary), pa.int64()
        )
        return [n or 0 for n in pc.take(lengths, array.indices).to_pylist()]
    if _is_text_type(kind, pa):
        return [n or 0 for n in pc.binary_length(array).to_pylist()]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        offsets = array.offsets.to_pylist()
        base = offsets[0]
        inner = _cell_bytes(array.values.slice(base, offsets[-1] - base), pa)
        return [sum(inner[a - base : b - base]) for a, b in zip(offsets, offsets[1:])]
    return [0] * len(array)


def _is_text_type(kind, pa) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _decode(value, invalid_utf8: str):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace" if invalid_utf8 == "replace" else "strict")
    if isinstance(value, list):
        return [_decode(v, invalid_utf8) for v in value]
    return value


FILE_LEVEL_REASONS = ("missing_path", "unreadable_file")


def used_fields(config: InputConfig) -> frozenset[str]:
    """The fields the pipeline reads; every other field is dropped at read."""
    return frozenset(
        (config.system_field, config.doc_id_field, config.candidate_field, config.references_field,
         config.reference_field, "reference_id")
    )


def row_error(source: str, position: Optional[int], reason: str, message: str, system=None, doc_id=None):
    return ErrorRecord(printable(system), printable(doc_id), source, position, reason, message)


def printable(value) -> Optional[str]:
    """An id as the errors table shows it: a string with control characters and
    lone surrogates escaped (`\\n`, `\\x1b`, `\\ud800`), cut to MAX_ID_CHARS."""
    if not isinstance(value, str):
        return None
    if len(value) > MAX_ID_CHARS:
        value = value[:MAX_ID_CHARS] + "..."
    return shown(value)


_SURROGATE = re.compile("[\ud800-\udfff]")  # (a loop over a non-ASCII text's characters cost 30 us per 1 KB)


def _has_surrogate(text) -> bool:
    if isinstance(text, str):
        return not text.isascii() and _SURROGATE.search(text) is not None
    return any(_has_surrogate(t) for t in text)


def _is_text(value) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))


def _text_bytes(value) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    return sum(len(s.encode("utf-8", "surrogatepass")) + 1 for s in value)


def parse_candidate(item: SourceRow, c: InputConfig, joined: bool, system_pattern):
    """A `SourceRow` of a candidate file -> a `Candidate`, or an `ErrorRecord`.
    `system_pattern`: input.system_from_path as a `pipeline.io.patterns.SystemFromPath`, or None."""
    source, position, row = item
    if c.integer_ids:
        row, problem = _integer_ids(row, c, c.integer_ids)
        if problem:
            return row_error(source, position, *problem)
    system = row.get(c.system_field)
    doc_id = row.get(c.doc_id_field)
    if system_pattern is None and not c.integer_ids:  # the common row, checked in a few C calls
        text = row.get(c.candidate_field)
        references = row.get(c.references_field) if joined else None
        limit = c.max_text_bytes
        if (
            _plain_id(system) and _plain_id(doc_id) and _plain_text(text, limit)
            and (not joined or (type(references) is list and references and _plain_texts(references, limit)))
        ):
            return make(Candidate, (system, doc_id, text, references, source, position))
    from_path = system_pattern is not None and c.system_field not in row
    if from_path:
        system = system_pattern.system(source)  # (pipeline.io.patterns.SystemFromPath: once a file, bounded)
        if not system:
            return row_error(
                source, position, "no_system",
                f"input.system_from_path {c.system_from_path!r} does not match {source!r} "
                "(or its system group is empty)", doc_id=doc_id,
            )
    # Joined form: a row's references (a list), or without them its one reference (a text), as in the split form.
    one_reference = joined and one_reference_a_row(row, c)
    fields = [c.doc_id_field, c.candidate_field] + ([c.reference_field if one_reference else c.references_field]
                                                     if joined else [])
    if not from_path:
        fields.insert(0, c.system_field)
    for name in fields:
        problem = _check_field(row, name, c, list_of_texts=joined and not one_reference and name == c.references_field)
        if problem:
            return row_error(source, position, *problem, system=system, doc_id=doc_id)
    if from_path:
        problem = _check_id("system (from the path)", system)
        if problem:
            return row_error(source, position, *problem, doc_id=doc_id)
    references = ([row[c.reference_field]] if one_reference else row[c.references_field]) if joined else None
    return Candidate(system, doc_id, row[c.candidate_field], references, source, position)


def one_reference_a_row(row: dict, c: InputConfig) -> bool:
    """Whether a row gives one reference (input.reference_field: a text) rather than a
    list of them (input.references_field): it has no list field, or both name one
    column (`--fields reference=COLUMN` says the column holds one text)."""
    return c.reference_field in row and (c.references_field not in row or c.references_field == c.reference_field)


def _integer_ids(row: dict, c: InputConfig, keys):
    """(row, None) with the id fields `keys` (of input.integer_ids) turned from integers
    into their decimal digits, or (None, (reason, message)) when one holds anything
    but an integer (a text "1" beside an integer 1 would merge two documents; 1.0
    is not read as 1)."""
    out = row
    for key in keys:
        name = getattr(c, f"{key}_field")
        value = row.get(name)
        if value is None:
            continue  # (a missing or null field is reported by _check_field)
        if type(value) is not int:
            kind = "an integer of over 4000 digits" if isinstance(value, HugeInteger) else type(value).__name__
            return None, ("wrong_type", f"field {name!r} must be an integer (input.integer_ids, --integer-ids "
                                        f"{key}); got {kind}")
        if out is row:
            out = dict(row)
        out[name] = str(value)
    return out, None


def _plain_id(value) -> bool:
    """An id `_check_field` would pass, and cheaply seen to: printable ASCII within
    the limit (any other goes through the full checks, which say what is wrong)."""
    return (
        type(value) is str and 0 < len(value) <= MAX_ID_CHARS and value.isascii() and value.isprintable()
        and (value[0] != " " or not value.isspace())  # (spaces alone print as nothing)
    )


def _plain_text(value, limit: int) -> bool:
    """A text `_check_field` would pass: an ASCII string (no surrogate; its UTF-8
    bytes are its characters) within the limit."""
    return type(value) is str and value.isascii() and len(value) <= limit


def most_texts(config: InputConfig) -> int:
    """The most texts a list field (a row's references) may hold: its texts' memory
    beyond their characters counted against input.max_text_bytes, as a Parquet cell's
    are (`VALUE_OVERHEAD` a value).  Without it, 3,000,000 empty references in one
    12 MB JSON line took 4.7 GB to score."""
    return config.max_text_bytes // VALUE_OVERHEAD


def _plain_texts(values: list, limit: int) -> bool:
    if len(values) > limit // VALUE_OVERHEAD:  # (most_texts)
        return False
    for value in values:
        if not (type(value) is str and value.isascii() and len(value) <= limit):
            return False
    return True


def parse_reference(item: SourceRow, c: InputConfig):
    """A `SourceRow` of a reference file -> a `ReferenceRow`, or an `ErrorRecord`."""
    source, position, row = item
    if "doc_id" in c.integer_ids:
        row, problem = _integer_ids(row, c, ("doc_id",))
        if problem:
            return row_error(source, position, *problem)
    doc_id = row.get(c.doc_id_field)
    one_per_row = one_reference_a_row(row, c)
    field = c.reference_field if one_per_row else c.references_field
    for name in (c.doc_id_field, field):
        problem = _check_field(row, name, c, list_of_texts=not one_per_row and name == field)
        if problem:
            return row_error(source, position, *problem, doc_id=doc_id)
    if not one_per_row:
        return ReferenceRow(doc_id, row[field], None, source, position)
    reference_id = row.get("reference_id")
    if reference_id is None:
        reference_id = ""
    elif isinstance(reference_id, (str, int)) and not isinstance(reference_id, (bool, HugeInteger)):
        reference_id = str(reference_id)
        problem = _check_id("reference_id", reference_id)
        if problem:
            return row_error(source, position, *problem, doc_id=doc_id)
    else:
        return row_error(
            source, position, "wrong_type",
            f"field 'reference_id' must be a string or an integer; got {type(reference_id).__name__}",
            doc_id=doc_id,
        )
    return ReferenceRow(doc_id, [row[field]], reference_id, source, position)


def internal_error(source: str, position: Optional[int], stage: str, err: Exception, system=None, doc_id=None):
    """The last resort of row isolation: a row whose work raised becomes one
    `internal_error` row (with the exception's type) instead of failing the run."""
    return row_error(
        source, position, "internal_error",
        f"unexpected {type(err).__name__} while {stage} this row: {str(err)[:300]!r}",
        system=system, doc_id=doc_id,
    )


def _check_id(name: str, value: str):
    """("invalid_id", why) for an id that breaks the id rule (pipeline.io.names.id_problem), else None."""
    problem = id_problem(value)
    return None if problem is None else ("invalid_id", f"{name} {problem}")


def _check_field(row: dict, name: str, config: InputConfig, *, list_of_texts: bool):
    """Why a field is unusable, as (reason, message), or None when it is fine."""
    if name not in row:
        return "missing_field", f"missing field {name!r}"
    value = row[name]
    if value is None:
        return "null_value", f"field {name!r} is null"
    if isinstance(value, HugeInteger):
        return "wrong_type", f"field {name!r} holds an integer of over 4000 digits, not a text"
    if name in (config.system_field, config.doc_id_field):
        if not isinstance(value, str) or not value:
            key = "system" if name == config.system_field else "doc_id"
            hint = f" (integers: --integer-ids {key}, input.integer_ids)" if type(value) is int else ""
            return "wrong_type", f"field {name!r} must be a non-empty string; got {type(value).__name__}{hint}"
        return _check_id(f"field {name!r}", value)
    texts = value if list_of_texts else [value]
    if list_of_texts and (not isinstance(value, list) or not value):
        kind = "an empty list" if isinstance(value, list) else type(value).__name__
        hint = (f" (one text a row: --fields reference={name}, input.reference_field)"
                if isinstance(value, str) else "")
        return "wrong_type", f"field {name!r} must be a non-empty list of texts; got {kind}{hint}"
    if list_of_texts and len(value) > most_texts(config):
        return (
            "text_too_long",
            f"field {name!r} holds {len(value)} texts, over the limit of {most_texts(config)} "
            f"(input.max_text_bytes / {VALUE_OVERHEAD}: each text costs {VALUE_OVERHEAD} bytes beside its "
            "characters, as in a Parquet cell)",
        )
    for text in texts:
        if text is None:
            return "null_value", f"field {name!r} holds a null text"
        if not _is_text(text):
            return (
                "wrong_type",
                f"field {name!r} must hold texts (a string or a list of strings); got {type(text).__name__}",
            )
        if _has_surrogate(text):
            return "lone_surrogate", f"field {name!r} holds a lone surrogate (an invalid \\ud800-\\udfff escape)"
        size = _text_bytes(text)
        if size > config.max_text_bytes:
            return (
                "text_too_long",
                f"field {name!r} is {size} bytes, over the limit of {config.max_text_bytes}",
            )
    return None
