"""Reading a published result folder, local or on any Beam filesystem: the one way
every command reads one (`compare`, `meta-eval --run`, `history`, `run --reuse`).

    folder = ResultFolder.open("gs://bucket/nightly/today")   # or a local path
    folder.run_id, folder.record, folder.signature            # run.json, checked
    folder.names("per_document/*.parquet")                    # what the manifest lists
    for number, row in folder.rows(name, {"system": TEXT, "f_measure": NUMBER}): ...
    folder.table("significance.parquet")                      # as Arrow columns, bounded
    folder.read_bytes("system_scores.md")
    folder.copy_to("per_document/part-00000-of-00001.parquet", "gs://bucket/next/...")

`open` reads the completion marker, `_SUCCESS`, once: its manifest
(pipeline.io.manifest) lists every file of the run with its size and SHA-256.  A
folder without it (a run still working, killed, or not this tool's), or one whose
listed files are missing or of another size, is refused with a sentence.  Only
listed files are read (a stale shard of an earlier run, beside them, never is), and
each file is checked against the manifest as it is read: a folder replaced while it
is read (`run --overwrite` publishing meanwhile) is refused (`FolderChanged`),
never read half old, half new.  A local file is hashed through the descriptor it is
then parsed from; a file on a store is copied once to a local temporary file while
it is hashed, and parsed from there (a store may serve a newer object to a second
read).

A result folder is untrusted input: run.json must be a JSON object whose signature
parses and whose run_id is the manifest's; Parquet tables are read with `run`'s
bounds for untrusted Parquet (pipeline.io.rows: pages, row groups, batches) and
every text cell at most MAX_CELL_BYTES (an id is at most 1,000 characters), so a
small file that decodes to gigabytes is refused before it is decoded.  Every
problem is a `ResultFolderError` (a RougeInputError: exit 2) naming the folder or
file.
"""

from __future__ import annotations

import fnmatch
import os
import tempfile
from typing import Iterator, Optional

from pipeline.config import InputConfig, parse_profiles_signature
from pipeline.io import files
from pipeline.io.manifest import MARKER, MAX_BYTES, SUCCESS, Manifest, ManifestError, parse_json
from pipeline.io.rows import MAX_CELL_BYTES, TABLE_BYTES, TableBoundError, bounded_batches, parquet_file_rows
from pipeline.io.stores import object_store
from pipeline.io.tables import schema_problem
from pipeline.records import ErrorRecord
from rouge_core import RougeConfigError, RougeInputError

TEXT, NUMBER = "text", "number"  # column kinds for `rows`; "text?" / "number?": may be absent
MAX_RECORD_BYTES = 64 << 20  # run.json, and any file read whole by read_bytes


class ResultFolderError(RougeInputError):
    """A folder that is not a complete result folder of this tool, or a file of it that
    cannot be read as one; the message names which and why."""


class FolderChanged(ResultFolderError):
    """A listed file differs from the manifest read when the folder was opened: the
    folder was replaced (or edited) while it was read."""


class ResultFolder:
    """A complete result folder, opened once (`ResultFolder.open`).

    Attributes: `path` (as given, without a trailing '/'), `manifest` (its `files`:
    {relative path: Entry(size, sha256)}), `run_id`, `record` (run.json as a dict)
    and `signature` (its profiles signature).  It holds no open file: it pickles, so
    Beam workers can read through it."""

    def __init__(self, path: str, manifest: Manifest, record: dict):
        self.path, self.manifest, self.record = path, manifest, record
        self.run_id = manifest.run_id
        self.signature = record["signature"]

    @classmethod
    def open(cls, path: str) -> "ResultFolder":
        """The result folder at `path` (local or URL), or ResultFolderError."""
        path = path.rstrip("/") or path
        try:
            present = files.list_tree(path)
        except Exception as err:  # (a store's own error: no such bucket, no access)
            raise ResultFolderError(f"{path}: cannot list it ({type(err).__name__}: {err})") from err
        manifest = _read_manifest(path, present)
        for name, entry in sorted(manifest.files.items()):
            size = present.get(name)
            if size is None and not files.is_url(path) and os.path.lexists(os.path.join(path, *name.split("/"))):
                continue  # not a regular file: refused when read, saying what it is
            if size is None:
                raise FolderChanged(f"{path}: {name}, listed in its {SUCCESS}, is missing: the folder is incomplete "
                                    "or being replaced (read it again once no run is writing it)")
            if entry.size is not None and size != entry.size:
                raise FolderChanged(f"{path}: {name} has {size} bytes where its {SUCCESS} says {entry.size}: it changed "
                                    "after the run published it (replaced or edited)")
        folder = cls(path, manifest, {"signature": ""})
        folder.record = folder._run_record()
        folder.signature = folder.record["signature"]
        return folder

    def names(self, pattern: str = "*") -> list[str]:
        """The listed files (relative paths, '/'-separated) matching a glob such as
        "per_document/*.parquet" (`*` matches '/' too), sorted."""
        return sorted(n for n in self.manifest.files if fnmatch.fnmatchcase(n, pattern))

    def location(self, name: str) -> str:
        """The path or URL of a listed file, for messages."""
        return files.join(self.path, *name.split("/"))

    def read_bytes(self, name: str, limit: int = MAX_RECORD_BYTES) -> bytes:
        """A listed file, whole (at most `limit` bytes), checked against the manifest."""
        entry = self._entry(name)
        if entry.size is not None and entry.size > limit:
            raise ResultFolderError(f"{self.location(name)}: {entry.size} bytes, over the {limit}-byte bound of this reader")
        with self.verified(name) as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise ResultFolderError(f"{self.location(name)}: over the {limit}-byte bound of this reader")
        return data

    def copy_to(self, name: str, target: str) -> int:
        """Copy a listed file to `target` (a path or URL), checked against the manifest
        as it is copied (a store's file: downloaded and checked first): the copy is
        hashed, so a local file edited in place while it is copied (even to the same
        size) leaves no copy (it is deleted again: FolderChanged); returns its size.
        For reusing a previous run's files."""
        entry = self._entry(name)
        location = self.location(name)
        source = self.verified(name) if files.is_url(location) else self._open_local(location)
        with source as fh, files.create(target) as out:
            size, sha256 = files.hashed_copy(fh, out)
        if (entry.size is not None and size != entry.size) or sha256 != entry.sha256:
            files.delete([target])
            raise self._differs(location)
        return size

    def rows(self, name: str, columns: dict[str, str]) -> Iterator[tuple[int, dict]]:
        """(row number from 1, {column: value}) of a listed Parquet table, only
        `columns`, each declared TEXT or NUMBER ("text?"/"number?" when it may be
        absent; an absent column is absent from the rows).  Text cells are str (valid
        UTF-8, at most MAX_CELL_BYTES), numbers int or float, nulls None.  A missing
        column, a column of another type, an unreadable file or a cell over the
        bound is a ResultFolderError naming the file; the file is checked against the
        manifest before its first row is given."""
        where = self.location(name)
        what = f"not a {_table_kind(name)}"
        with self.verified(name) as fh:
            present = self._present(fh, name, columns)
            config = InputConfig(max_text_bytes=MAX_CELL_BYTES, invalid_utf8="reject")
            for item in parquet_file_rows(fh, where, config, frozenset(present)):
                if isinstance(item, ErrorRecord):  # (the bound is this reader's, not the config's)
                    message = item.message.replace("input.max_text_bytes", "the bound of a table's text cell")
                    raise ResultFolderError(f"{where}: {what} as this tool writes it: {message}")
                yield item.position, item.row

    def column_table(self, name: str, columns: dict[str, str]):
        """`rows`' table as one Arrow table (its columns among `columns`, checked as
        `rows` checks them), read as columns within `table`'s bounds: for a reader of
        millions of rows (compare's per-document tables: row by row, two 1M-pair runs'
        took most of its 53 CPU-s).  Text is valid UTF-8 (checked whole); a ResultFolderError
        naming the file otherwise."""
        import pyarrow as pa  # noqa: PLC0415

        with self.verified(name) as fh:
            table = self._bounded_table(fh, name, self._present(fh, name, columns), MAX_CELL_BYTES, TABLE_BYTES, None)
        try:
            table.validate(full=True)
        except pa.ArrowInvalid as err:
            raise ResultFolderError(f"{self.location(name)}: not a {_table_kind(name)} as this tool writes it: "
                                    f"{err}") from None
        return table

    def table(self, name: str, columns: Optional[list[str]] = None, max_cell_bytes: int = MAX_CELL_BYTES,
              most_bytes: int = TABLE_BYTES, most_rows: Optional[int] = None,
              written_as: Optional[list[tuple[str, str]]] = None):
        """A listed Parquet table as an Arrow table (of `columns`, when given), checked
        against the manifest and read within bounds (pipeline.io.rows.bounded_batches:
        a text cell at most `max_cell_bytes`, the whole at most `most_bytes` decoded,
        at most `most_rows` rows when given), and with `written_as` (its (name, type)
        columns, pipeline.io.tables) holding exactly the columns this tool writes; a
        ResultFolderError naming the file otherwise."""
        with self.verified(name) as fh:
            if written_as is not None:
                problem = schema_problem(self._schema(fh, name), written_as)
                if problem:
                    raise ResultFolderError(f"{self.location(name)}: not a {_table_kind(name)} of this version: {problem}")
            return self._bounded_table(fh, name, columns, max_cell_bytes, most_bytes, most_rows)

    def _schema(self, fh, name: str):
        """The Arrow schema of a listed Parquet file open as `fh` (left at its start)."""
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.parquet as pq  # noqa: PLC0415

        try:
            return pq.ParquetFile(fh).schema_arrow
        except (pa.ArrowException, OSError, ValueError) as err:
            raise ResultFolderError(f"{self.location(name)}: not a {_table_kind(name)}: cannot read it "
                                    f"({type(err).__name__}: {err})") from err
        finally:
            fh.seek(0)

    def _present(self, fh, name: str, columns: dict[str, str]) -> list[str]:
        """The `columns` (`rows`' kinds) the listed file open as `fh` has, each of its
        kind; a ResultFolderError naming the file for a missing one or another kind."""
        import pyarrow as pa  # noqa: PLC0415

        where, schema = self.location(name), self._schema(fh, name)
        missing = [c for c, kind in columns.items() if c not in schema.names and not kind.endswith("?")]
        if missing:
            raise ResultFolderError(f"{where}: not a {_table_kind(name)}: no column {', '.join(map(repr, missing))}")
        present = [c for c in columns if c in schema.names]
        for column in present:
            _check_kind(where, column, columns[column].rstrip("?"), schema.field(column).type, pa)
        return present

    def _bounded_table(self, fh, name: str, columns, max_cell_bytes: int, most_bytes: int, most_rows):
        import pyarrow as pa  # noqa: PLC0415

        where = self.location(name)
        try:
            batches = list(bounded_batches(fh, columns, max_cell_bytes, most_bytes, most_rows))
            if batches:
                return pa.Table.from_batches(batches)
            schema = self._schema(fh, name)  # (no rows: the footer's columns)
            return (schema if columns is None else pa.schema([schema.field(c) for c in columns])).empty_table()
        except ResultFolderError:
            raise
        except TableBoundError as err:
            raise ResultFolderError(f"{where}: not read: {err}") from None
        except (pa.ArrowException, OSError, ValueError, KeyError) as err:
            raise ResultFolderError(f"{where}: not a {_table_kind(name)}: cannot read it "
                                    f"({type(err).__name__}: {err})") from err

    # ------------------------------------------------------------ internals

    def _entry(self, name: str):
        entry = self.manifest.files.get(name)
        if entry is None:
            raise ResultFolderError(f"{self.path}: {name} is not listed in its {SUCCESS}")
        return entry

    def verified(self, name: str):
        """A seekable binary file of the listed file's bytes, checked (size and
        SHA-256) against the manifest: FolderChanged when they differ."""
        entry = self._entry(name)
        location = self.location(name)
        if files.is_url(location):
            fh = tempfile.TemporaryFile(prefix="rouge-pipeline-")  # (no name: gone when closed)
            try:
                with files.open_read(location) as source:
                    size, sha256 = files.hashed_copy(source, fh)
            except Exception as err:  # a store's own error: gone, or another failure
                fh.close()
                if name not in files.list_tree(self.path):
                    raise self._gone(location) from err
                raise ResultFolderError(f"{location}: cannot read it ({type(err).__name__}: {err})") from err
        else:
            fh = self._open_local(location)
            try:
                size, sha256 = files.hashed_copy(fh)
            except OSError as err:
                fh.close()
                raise ResultFolderError(f"{location}: cannot read it ({err})") from err
        if (entry.size is not None and size != entry.size) or sha256 != entry.sha256:
            fh.close()
            raise self._differs(location)
        fh.seek(0)
        return fh

    def _open_local(self, location: str):
        """A listed local file, open for reading (a pipe or a device is refused)."""
        try:
            return files.open_read(location)
        except FileNotFoundError as err:
            raise self._gone(location) from err
        except OSError as err:
            raise ResultFolderError(f"{location}: cannot read it ({err})") from err

    def _differs(self, location: str) -> FolderChanged:
        return FolderChanged(f"{location}: its bytes differ from the {SUCCESS} read when {self.path} was opened: "
                             "the folder was replaced or edited while it was read (read it again once no run is "
                             "writing it)")

    @staticmethod
    def _gone(location: str) -> FolderChanged:
        return FolderChanged(f"{location}: listed in its folder's {SUCCESS} but gone: the folder is being "
                             "replaced (read it again once no run is writing it)")

    def _run_record(self) -> dict:
        """run.json, checked: a JSON object whose signature parses and whose run_id
        is the manifest's (a run.json of another run means a mixed folder)."""
        where = self.location("run.json")
        if "run.json" not in self.manifest.files:
            raise ResultFolderError(f"{self.path}: not a result folder of a run (its {SUCCESS} lists no run.json)")
        data = self.read_bytes("run.json")  # (unreadable: ResultFolderError says why)
        try:
            record = parse_json(data)
        except (UnicodeDecodeError, ValueError) as err:
            raise ResultFolderError(f"{where}: not valid JSON ({err})") from err
        if not isinstance(record, dict):
            raise ResultFolderError(f"{where}: not a run record (a JSON object)")
        signature = record.get("signature")
        if not isinstance(signature, str):
            raise ResultFolderError(f"{where}: no signature")
        try:
            parse_profiles_signature(signature)
        except RougeConfigError as err:
            raise ResultFolderError(f"{where}: {err}") from err
        profiles = record.get("profiles", [])  # (compare orders its metrics by them, --reuse compares them)
        if not isinstance(profiles, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str)
                                                     for p in profiles):
            raise ResultFolderError(f"{where}: its profiles are not a list of named profiles")
        if "run_id" in record and record["run_id"] != self.run_id:
            raise ResultFolderError(f"{where}: written by run {str(record['run_id'])[:40]!r}, but the folder's "
                                    f"{SUCCESS} is run {self.run_id}'s: the folder mixes two runs")
        return record


def _read_manifest(path: str, present: dict[str, int]) -> Manifest:
    """The manifest in `path`/_SUCCESS (or, in a local folder of an older version,
    the file list of its `_ROUGE_PIPELINE`), `present` being what the folder holds;
    ResultFolderError saying why not."""
    marker = files.join(path, SUCCESS)
    data = None
    try:
        if files.is_url(path):  # (one version of the object: a GCS generation)
            if present.get(SUCCESS, 0) > MAX_BYTES:
                raise ResultFolderError(f"{marker}: over {MAX_BYTES} bytes; not a manifest of this tool")
            got = object_store(marker).read(marker) if SUCCESS in present else None
            data = None if got is None else got[0]
        else:
            with files.open_read(marker) as fh:
                data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        pass
    except OSError as err:
        if not os.path.isdir(path):
            raise ResultFolderError(_not_a_folder(path)) from err
        raise ResultFolderError(f"{marker}: cannot read it ({err})") from err
    except ResultFolderError:
        raise
    except Exception as err:  # a store's own error (no access): its words
        raise ResultFolderError(f"{marker}: cannot read it ({type(err).__name__}: {err})") from err
    if data is None:
        if not (present if files.is_url(path) else os.path.isdir(path)):
            raise ResultFolderError(_not_a_folder(path))
        raise ResultFolderError(f"{path}: not a complete result folder (no {SUCCESS}: a run is writing it, was "
                                "killed, or it is not a result folder of this tool)")
    if len(data) > MAX_BYTES:
        raise ResultFolderError(f"{marker}: over {MAX_BYTES} bytes; not a manifest of this tool")
    try:
        return Manifest.parse(data)
    except ManifestError as err:
        if data.strip():
            raise ResultFolderError(f"{marker}: {err}") from None
    older = None
    if not files.is_url(path):
        try:
            with open(os.path.join(path, MARKER), "rb") as fh:
                older = Manifest.parse_marker(fh.read(MAX_BYTES))
        except OSError:
            pass
    if older is None:
        raise ResultFolderError(f"{path}: its {SUCCESS} is empty and nothing lists its files (a folder of an older "
                                "version, or not of this tool), so a complete folder cannot be told from a mixed "
                                "one; run it again with this version")
    return older


def _not_a_folder(path: str) -> str:
    """Why a path is no result folder: absent, or something else than a folder."""
    if files.is_url(path) or not os.path.lexists(path):
        return f"{path}: no such result folder"
    return f"{path}: not a folder, so not a result folder"


def _table_kind(name: str) -> str:
    """What a listed table is, for messages: "per-document table", ..."""
    top = name.split("/")[0].removesuffix(".parquet")
    return {"per_document": "per-document table", "errors": "errors table",
            "system_scores": "per-system table"}.get(top, f"{top} table")


def _check_kind(where: str, column: str, kind: str, arrow_type, pa) -> None:
    if pa.types.is_dictionary(arrow_type):  # (as Arrow recorded it: the values' type is what is read)
        arrow_type = arrow_type.value_type
    text = pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_null(arrow_type)
    number = pa.types.is_floating(arrow_type) or pa.types.is_integer(arrow_type) or pa.types.is_null(arrow_type)
    if kind == TEXT and not text:
        raise ResultFolderError(f"{where}: column {column!r} must hold strings; it holds {arrow_type}")
    if kind == NUMBER and not number:
        raise ResultFolderError(f"{where}: column {column!r} must hold numbers; it holds {arrow_type}")

