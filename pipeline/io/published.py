"""A result folder another run published, opened to be read and verified: the one
place `run --reuse` and `history` open previous runs (`open_published`).

Verified, never trusted by name or path: the folder must be complete (`_SUCCESS`,
a run record this tool wrote), every file read must be one its run wrote, with the
bytes it wrote.  What proves it is the run's own manifest: the marker
(`_ROUGE_PIPELINE`, pipeline.io.publish) records every file of a published local
folder with its SHA-256, and each file is hashed as it is read (so the bytes
checked are the bytes used).  A folder on an object store has no manifest yet:
it opens with `verified` False, which `history` accepts (its completion marker
says it is whole) and `run --reuse` does not (nothing of it could be proven).

This module is a seam: pipeline.io.result_folder (issue 30: a manifest on every
store, bounded readers) replaces its inside when it lands; its callers keep
`open_published`, `PublishedRun.read_bytes`, `.copy_to`, `.list`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Optional

from pipeline.io import files
from pipeline.io.publish import MARKER

RUN_RECORD = "run.json"
COMPLETE = "_SUCCESS"


class FolderRefused(Exception):
    """A result folder that cannot be read as a published run: one line saying why."""


class PublishedRun:
    """A published result folder: its run record (`record`) and its files, read through
    `read_bytes`/`copy_to`, which check each file's SHA-256 against the manifest
    when there is one (`verified`).  Picklable: Beam workers read through it too."""

    def __init__(self, path: str, record: dict, manifest: Optional[dict]):
        self.path = path
        self.record = record
        self.manifest = manifest  # {relative path ("/"-separated): sha256}, or None (no manifest)

    @property
    def verified(self) -> bool:
        return self.manifest is not None

    @property
    def run_id(self) -> str:
        return str(self.record.get("run_id") or "?")

    def list(self, prefix: str) -> list[str]:
        """The relative paths of the run's files under `prefix` (a folder), sorted:
        from the manifest when there is one (a file the run did not write is no
        file of it), else from the folder."""
        if self.manifest is not None:
            return sorted(name for name in self.manifest if name.startswith(prefix.rstrip("/") + "/"))
        found = files.match(files.join(self.path, prefix, "*"))
        return sorted(prefix.rstrip("/") + "/" + name.rsplit("/", 1)[-1] for name in found)

    def has(self, name: str) -> bool:
        return name in self.manifest if self.manifest is not None else files.exists(files.join(self.path, name))

    def read_bytes(self, name: str) -> bytes:
        """The bytes of one of the run's files, verified against the manifest."""
        try:
            data = files.read_bytes(files.join(self.path, name))
        except OSError as err:
            raise FolderRefused(f"{self.path}: cannot read {name} ({err})") from err
        self._check(name, hashlib.sha256(data).hexdigest())
        return data

    def copy_to(self, name: str, target: str) -> int:
        """Copy one of the run's files to `target`, verified as it is copied (a file
        that does not match is removed again); returns its size."""
        digest, size = hashlib.sha256(), 0
        try:
            with files.open_read(files.join(self.path, name)) as source, files.create(target) as out:
                while chunk := source.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
        except OSError as err:
            raise FolderRefused(f"{self.path}: cannot read {name} ({err})") from err
        try:
            self._check(name, digest.hexdigest())
        except FolderRefused:
            files.delete([target])
            raise
        return size

    def _check(self, name: str, sha256: str) -> None:
        if self.manifest is None:
            return
        if name not in self.manifest:
            raise FolderRefused(f"{self.path}: {name} is not a file its run wrote")
        if self.manifest[name] != sha256:
            raise FolderRefused(f"{self.path}: {name} changed since its run wrote it (its SHA-256 differs)")


def open_published(path: str) -> PublishedRun:
    """Open a published result folder (local or a URL): complete, with a run record of
    this tool, and (local) a manifest that lists every file it names, the run record
    verified.  Raises FolderRefused, one line, for anything else."""
    path = path.rstrip("/") or path
    if not files.exists(files.join(path, COMPLETE)):
        what = "no such folder" if not files.exists(path) and not files.is_url(path) else f"no {COMPLETE}: incomplete, or not a result folder"
        raise FolderRefused(f"{path}: {what}")
    manifest = None
    if not files.is_url(path):
        manifest = _manifest(path)
    try:
        record = json.loads(files.read_bytes(files.join(path, RUN_RECORD)).decode("utf-8"))
    except (OSError, ValueError) as err:
        raise FolderRefused(f"{path}: {RUN_RECORD} cannot be read as a run record ({err})") from err
    run = PublishedRun(path, record, manifest)
    if manifest is not None:  # (read again through the check: the bytes verified are the bytes parsed)
        record = json.loads(run.read_bytes(RUN_RECORD).decode("utf-8"))
        run.record = record
        missing = [name for name in manifest if not files.exists(files.join(path, name))]
        if missing:
            raise FolderRefused(f"{path}: incomplete: {len(missing)} file(s) its run wrote are missing, e.g. {missing[0]}")
    if not isinstance(record, dict) or not isinstance(record.get("signature"), str):
        raise FolderRefused(f"{path}: {RUN_RECORD} is not a run record of rouge-pipeline (no signature)")
    return run


def _manifest(path: str) -> dict:
    """The marker's {relative path: sha256}, "/"-separated."""
    try:
        marker = json.loads(files.read_bytes(files.join(path, MARKER)).decode("utf-8"))
    except (OSError, ValueError) as err:
        raise FolderRefused(f"{path}: no readable {MARKER} (the list of the files its run wrote): {err}") from err
    listed = marker.get("files") if isinstance(marker, dict) else None
    if not isinstance(listed, dict) or RUN_RECORD not in listed or COMPLETE not in listed:
        raise FolderRefused(f"{path}: its {MARKER} does not list the files its run wrote (a folder of an older version?)")
    return {str(name).replace("\\", "/"): str(digest) for name, digest in listed.items()}
