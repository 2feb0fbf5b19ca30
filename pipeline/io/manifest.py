"""The completion marker of a result folder, `_SUCCESS`, and the manifest it holds.

Hadoop and Spark write `_SUCCESS` last, so that its presence says "complete";
their S3A committers put a JSON summary in it.  This tool's `_SUCCESS` is the
folder's manifest, the same on a local disk and on an object store:

    {"manifest": 1, "tool": "rouge-pipeline", "run_id": "<12 hex digits>",
     "files": {"<relative path>": {"bytes": <size>, "sha256": "<64 hex digits>"}, ...}}

every file of the folder but `_SUCCESS` itself, with its size and SHA-256.  It is
written last and never empty (Beam's S3 writer cannot create an empty object).  A
reader trusts what it lists and nothing else: a file not listed (a stale shard of
an earlier run) is never read, and a listed file whose size or digest differs
(the folder was replaced while it was read) is refused (pipeline.io.result_folder).
Folders published before the manifest recorded their files in `_ROUGE_PIPELINE`,
{path: sha256} without sizes; `read` accepts that form too.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Optional

from pipeline.io import files

SUCCESS = "_SUCCESS"
MARKER = "_ROUGE_PIPELINE"  # this tool's own marker: written first, names the run (pipeline.io.publish)
TOOL = "rouge-pipeline"
VERSION = 1
MAX_BYTES = 64 << 20  # a larger manifest is not read (a folder of 15,000 files makes about 2 MB)
_RUN_ID = re.compile(r"[0-9a-f]{12}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\\]")


def parse_json(data: bytes):
    """JSON a folder holds (a manifest, a run record, a lock): its value, or
    ValueError when it is not UTF-8 JSON, including JSON nested too deeply for
    Python's parser (a RecursionError, which no caller expects: "[" * 100000 made
    `run --reuse` and `run --overwrite` fail with a traceback's last line)."""
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply to be JSON this tool wrote") from None


class ManifestError(ValueError):
    """A marker that is not a manifest of this tool; the message says why."""


@dataclass(frozen=True)
class Entry:
    """One listed file: its size (None in a folder of an older version) and SHA-256."""

    size: Optional[int]
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """What a complete result folder holds: the run that wrote it and its files."""

    run_id: str
    files: dict  # {relative path ('/'-separated): Entry}

    def to_bytes(self) -> bytes:
        listed = {name: {"bytes": e.size, "sha256": e.sha256} for name, e in sorted(self.files.items())}
        record = {"manifest": VERSION, "tool": TOOL, "run_id": self.run_id, "files": listed}
        return (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8")

    @classmethod
    def of_contents(cls, run_id: str, contents: dict[str, bytes]) -> "Manifest":
        """The manifest of files given as {relative path: bytes}."""
        return cls(run_id, {name: Entry(len(data), hashlib.sha256(data).hexdigest()) for name, data in contents.items()})

    @classmethod
    def of_folder(cls, folder: str, run_id: str, known: Optional[dict] = None) -> "Manifest":
        """The manifest of every file under `folder` (local or URL) but `_SUCCESS`,
        each read once to hash it, but a file of `known` ({name: Entry}: files the
        run copied, hashed as they were) of the size it lists."""
        known = known or {}
        listed = {}
        for name, size in sorted(files.list_tree(folder).items()):
            if name == SUCCESS:
                continue
            entry = known.get(name)
            listed[name] = entry if entry is not None and entry.size == size else Entry(
                *digest(files.join(folder, *name.split("/"))))
        return cls(run_id, listed)

    @classmethod
    def parse(cls, data: bytes) -> "Manifest":
        """A manifest read from a folder (untrusted: every field is checked), or
        ManifestError saying what is wrong."""
        try:
            record = parse_json(data)
        except (UnicodeDecodeError, ValueError) as err:
            raise ManifestError(f"not a manifest of {TOOL} (not JSON: {err})") from None
        if not isinstance(record, dict) or record.get("tool") != TOOL:
            raise ManifestError(f"not a manifest of {TOOL}")
        if record.get("manifest") != VERSION:
            raise ManifestError(f"a manifest of format {record.get('manifest')!r}; this version reads format {VERSION}")
        run_id = record.get("run_id")
        if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            raise ManifestError("its run_id is not a run id of this tool")
        listed = record.get("files")
        if not isinstance(listed, dict):
            raise ManifestError("it lists no files")
        entries = {}
        for name, entry in listed.items():
            check_name(name)
            size = entry.get("bytes") if isinstance(entry, dict) else None
            sha256 = entry.get("sha256") if isinstance(entry, dict) else None
            if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0
                    and isinstance(sha256, str) and _SHA256.fullmatch(sha256)):
                raise ManifestError(f"its entry for {name!r} is not a size and a SHA-256")
            entries[name] = Entry(size, sha256)
        return cls(run_id, entries)

    @classmethod
    def parse_marker(cls, data: bytes) -> Optional["Manifest"]:
        """The file list of an older folder's `_ROUGE_PIPELINE` ({path: sha256},
        sizes unknown), or None when it has none."""
        try:
            record = parse_json(data)
        except (UnicodeDecodeError, ValueError):
            return None
        listed = record.get("files") if isinstance(record, dict) else None
        run_id = record.get("run_id") if isinstance(record, dict) else None
        if not isinstance(listed, dict) or not listed or not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            return None
        entries = {}
        for name, sha256 in listed.items():
            if name == SUCCESS:  # (listed then: an empty file, written before the list)
                continue
            try:
                check_name(name)
            except ManifestError:
                return None
            if not (isinstance(sha256, str) and _SHA256.fullmatch(sha256)):
                return None
            entries[name] = Entry(None, sha256)
        return cls(run_id, entries)


def check_name(name) -> None:
    """A listed path must stay inside its folder: relative, '/'-separated, no '..',
    no empty part, no control character or backslash, not the marker itself."""
    parts = name.split("/") if isinstance(name, str) else []
    if (not parts or any(p in ("", ".", "..") for p in parts) or _UNSAFE.search(name)
            or name == SUCCESS or len(name) > 4096):
        raise ManifestError(f"it lists {name!r}, which is not a file inside the folder")


def digest(path: str) -> tuple[int, str]:
    """(size, SHA-256) of a file (local or URL), read once, a MiB at a time."""
    with files.open_read(path) as fh:
        return files.hashed_copy(fh)
