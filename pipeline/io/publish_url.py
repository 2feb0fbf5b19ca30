"""Result folders on object stores (gs://, s3://, any Beam filesystem URL): one
writer at a time, a staging prefix beside the folder, publishing at the end; and
`publish_files`, the small folders of `compare` and `meta-eval`, local or URL.

A store has no rename of a folder, so the local protocol (pipeline.io.publish:
renameat2) cannot be used; this one keeps its promises with the manifest
(pipeline.io.manifest) and a lock (docs/object-stores.md):

1. Lock.  `OUT.lock` is created only if absent (GCS ifGenerationMatch=0, S3
   If-None-Match: *): a second run into OUT fails there, before it has written
   anything.  The lock names its run, host and process and is renewed (replaced only
   if unchanged: ifGenerationMatch / If-Match) every quarter of its lease
   (output.lock_lease_seconds); a lock not renewed for its lease, or whose process is
   gone (same machine and pid namespace), is a killed run's and is taken over.  A
   store that does not refuse a second create-only write is detected and named.
2. Stage.  The run writes under `OUT.staging-<run id>/` (its spill files too), never
   under OUT/: the previous result stays readable while the run works.  Holding the
   lock, a run removes the staging prefixes of dead runs, and only those.
3. Publish.  The manifest of the staged files (size, SHA-256) is made; a journal,
   `OUT.staging-<run id>/_PUBLISHING`, lists the old folder's files and the new ones;
   the old `_SUCCESS` is deleted first (from then on no reader takes OUT for a
   result), the new files are copied in (on the store's side), the old files the new
   run did not write are deleted, and the new `_SUCCESS` is written last, create-only.
   So whenever `_SUCCESS` is present, OUT holds exactly the files it lists.
4. Recovery.  A run killed while publishing leaves its journal and no `_SUCCESS`:
   the next run into OUT (taking the dead lock over) deletes the files the journal
   names, and only those, so that OUT is empty of results and a rerun without
   --overwrite succeeds.  A run killed before publishing left OUT untouched.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Iterable, Optional

from pipeline.io import files
from pipeline.io.manifest import MARKER, SUCCESS, TOOL, Manifest, ManifestError, check_name, parse_json
from pipeline.io.publish import LEGACY_PARTS, RESULT_ENTRIES, OutputError, is_local, publish_local_files, test_pause
from pipeline.io.stores import object_store, split_url

log = logging.getLogger("rouge-pipeline")

LOCK = ".lock"
STAGING = ".staging-"
JOURNAL = "_PUBLISHING"
LEASE_SECONDS = 60.0  # output.lock_lease_seconds' default
_RUN_ID = re.compile(r"[0-9a-f]{12}")
# What a previous version left in a URL output besides its tables (it wrote in place).
_LEGACY_DEBRIS = re.compile(r"(_spill|_fingerprints|_rouge155)/.*|_counts\.json")


def publish_files(output: str, contents: dict[str, bytes]) -> str:
    """Publish a small result folder (`compare`, `meta-eval`) whole, onto nothing or
    an empty folder, never over anything: locally by a rename
    (pipeline.io.publish.publish_local_files), on a store staged and published as
    `run` publishes.  The manifest, `_SUCCESS`, comes last.  Returns its path."""
    if is_local(output):
        return publish_local_files(output, contents)
    staging = UrlStaging(output, overwrite=False, marker=False).create()
    try:
        for name, data in contents.items():
            files.write_bytes(files.join(staging.path, name), data)
        staging.publish()
    except BaseException:
        staging.discard()
        raise
    return staging.final


# ---------------------------------------------------------------- the lock


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _started(pid: int) -> Optional[str]:
    """When process `pid` started (clock ticks since boot, /proc), None when there is
    no such process: with the pid, it names one process (a pid is reused)."""
    stat = _read_text(f"/proc/{pid}/stat")
    return stat.rpartition(")")[2].split()[19] if stat else None


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def this_process() -> dict:
    """Who holds a lock: host, boot, pid namespace, pid and its start time."""
    return {"host": socket.gethostname(), "boot_id": _read_text("/proc/sys/kernel/random/boot_id"),
            "pid_namespace": _pid_namespace(), "pid": os.getpid(), "pid_started": _started(os.getpid())}


def holder_alive(holder: dict) -> Optional[bool]:
    """Whether the process a lock names is alive, when this process can tell (the same
    boot of the same machine, the same pid namespace); None when it cannot."""
    me = this_process()
    if not me["boot_id"] or not me["pid_namespace"] or any(holder.get(k) != me[k] for k in ("boot_id", "pid_namespace")):
        return None
    pid = holder.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    return _started(pid) is not None and _started(pid) == holder.get("pid_started")


def _holder(data: bytes) -> Optional[dict]:
    try:
        holder = parse_json(data)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(holder, dict) or holder.get("tool") != TOOL:
        return None
    for key in ("renewed", "lease_seconds"):
        if not isinstance(holder.get(key), (int, float)) or isinstance(holder.get(key), bool):
            return None
    return holder


def _why_stale(holder: dict) -> Optional[str]:
    """Why a lock's run is dead, or None when it may be alive."""
    alive = holder_alive(holder)
    if alive is False:
        return f"its process {holder.get('pid')} on this machine is gone"
    age = time.time() - holder["renewed"]
    if alive is None and age > holder["lease_seconds"]:
        return f"it was last renewed {age:.0f} s ago, past its lease of {holder['lease_seconds']:g} s"
    return None


class UrlLock:
    """`OUT.lock`: held by one run, renewed while it lives (see the module's docstring)."""

    def __init__(self, final: str, run_id: str, lease_seconds: float = LEASE_SECONDS):
        self.final, self.run_id, self.lease = final, run_id, float(lease_seconds)
        self.url = final + LOCK
        self.store = object_store(self.url)
        self.token = None
        self.renewed = 0.0  # time.monotonic() of the last write that held
        self.lost: Optional[str] = None
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def _content(self) -> bytes:
        return (json.dumps({"tool": TOOL, "run_id": self.run_id, "output": self.final, "renewed": time.time(),
                            "lease_seconds": self.lease, **this_process()}) + "\n").encode("utf-8")

    def acquire(self) -> "UrlLock":
        """Take the lock, or OutputError naming the run that holds it."""
        for _ in range(5):
            token = self.store.create(self.url, self._content())
            if token is None:
                current = self.store.read(self.url)
                if current is None:
                    continue  # released in between: try again
                token = self._take_over(*current)
                if token is None:
                    continue  # someone else changed it in between: look again
            self.token, self.renewed = token, time.monotonic()
            self._check_create_only()
            self._thread = threading.Thread(target=self._renew, name="rouge-pipeline-lock", daemon=True)
            self._thread.start()
            return self
        raise OutputError(f"cannot take the lock {self.url}: it keeps changing (other runs starting into "
                          f"{self.final}?); nothing was written")

    def _take_over(self, data: bytes, token):
        holder = _holder(data)
        if holder is None:
            raise OutputError(f"{self.url} exists and is not a lock of rouge-pipeline; if no run is writing "
                              f"{self.final}, delete it; nothing was written")
        why = _why_stale(holder)
        if why is None:
            raise OutputError(
                f"another run is writing {self.final} (run {str(holder.get('run_id'))[:12]}, host "
                f"{str(holder.get('host'))[:100]}, pid {holder.get('pid')}; its lock {self.url} is renewed every "
                f"{holder['lease_seconds'] / 4:g} s); this run wrote nothing: wait for it to end or choose "
                "another --output"
            )
        taken = self.store.replace(self.url, self._content(), token)
        if taken is not None:
            log.warning("taking over the lock %s of run %s: %s", self.url, str(holder.get("run_id"))[:12], why)
        return taken

    def _check_create_only(self) -> None:
        """A second create-only write must be refused.  A store that accepts it
        (some emulators ignore preconditions) cannot keep two runs apart: said."""
        if not self.store.atomic:
            log.warning("%s: this filesystem has no create-only writes: two runs into %s at once are not kept "
                        "apart (docs/object-stores.md)", self.url, self.final)
            return
        again = self.store.create(self.url, self._content())
        if again is not None:
            self.token = again
            log.warning("%s: the store accepted a second create-only write (it ignores preconditions: an "
                        "emulator?): two runs into %s at once are not kept apart", self.url, self.final)

    def _renew_once(self) -> None:
        with self._mutex:
            if self.lost:
                return
            token = self.store.replace(self.url, self._content(), self.token)
            if token is None:
                self.lost = f"another run took the lock {self.url} over (this run was stopped longer than its lease?)"
            else:
                self.token, self.renewed = token, time.monotonic()

    def _renew(self) -> None:
        while not self._stop.wait(max(0.2, self.lease / 4)):
            try:
                self._renew_once()
            except Exception as err:  # noqa: BLE001 (the store unreachable for a while: try again)
                if time.monotonic() - self.renewed > self.lease:
                    self.lost = f"the lock {self.url} could not be renewed for {self.lease:g} s ({err})"
            if self.lost:
                return

    def check(self) -> None:
        """Renew now and make sure the lock is still this run's (before each step that
        changes the output): OutputError if not."""
        try:
            self._renew_once()
        except Exception as err:  # noqa: BLE001
            raise OutputError(f"cannot renew the lock {self.url} ({err}); {self.final} was not changed further") from err
        if self.lost:
            raise OutputError(f"{self.lost}; this run did not publish")

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._mutex:
            if self.token is not None and not self.lost:
                try:
                    self.store.delete(self.url, self.token)
                except Exception as err:  # noqa: BLE001 (a lease ends anyway)
                    log.warning("could not delete the lock %s (%s): it expires after %g s", self.url, err, self.lease)
            self.token = None


# ---------------------------------------------------------------- staging and publishing


@dataclass(frozen=True)
class Previous:
    """The result folder a run replaces: its marker's version and its files."""

    token: object  # of its _SUCCESS (None: an older folder without one)
    names: frozenset


class UrlStaging:
    """The staging prefix of a run into an output URL, published at the end (the same
    interface as pipeline.io.publish.Staging: create, path, run_id, publish, discard)."""

    def __init__(self, final: str, overwrite: bool, inputs: Iterable[str] = (), marker: bool = True,
                 run_id: Optional[str] = None, lease_seconds: float = LEASE_SECONDS):
        self.final = final.rstrip("/")
        self.overwrite, self.inputs, self.marker = overwrite, list(inputs), marker
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.path = f"{self.final}{STAGING}{self.run_id}"
        self.lock = UrlLock(self.final, self.run_id, lease_seconds)
        self.store = self.lock.store
        self.replaces: Optional[Previous] = None
        self._held = False

    def create(self) -> "UrlStaging":
        """Check the output, take its lock, clean what dead runs left, and start the
        staging prefix: any refusal comes here, before Beam starts."""
        if not split_url(self.final)[2]:
            raise OutputError(f"refusing output {self.final}: give a folder inside the bucket, not the bucket itself")
        for path in self.inputs:
            if path.startswith(self.final + "/"):
                raise OutputError(f"refusing output {self.final}: it contains the input file {path}")
        self.lock.acquire()
        self._held = True
        try:
            self._clean_dead_runs()
            self.replaces = self._previous()
            if self.marker:
                files.write_bytes(files.join(self.path, MARKER),
                                  (json.dumps({"tool": TOOL, "run_id": self.run_id}) + "\n").encode("utf-8"))
        except BaseException:
            self._release()
            raise
        return self

    def _previous(self) -> Optional[Previous]:
        """What the output holds now: nothing (None), or a result folder of this tool
        that --overwrite may replace; anything else is refused, untouched."""
        present = files.list_tree(self.final)
        if not present:
            return None
        current = self.store.read(files.join(self.final, SUCCESS))
        if not self.overwrite:
            if current is not None:
                raise OutputError(f"output folder {self.final} holds a finished run; pass --overwrite to replace it")
            raise OutputError(f"output folder {self.final} exists and is not empty ({_shown(sorted(present))}); "
                              "choose another --output")
        foreign = self._foreign(present, current)
        if foreign:
            raise OutputError(f"refusing to replace {self.final}: it is not a result folder of rouge-pipeline (it "
                              f"holds {_shown(foreign)}); --overwrite replaces only folders this tool published")
        return Previous(current[1], frozenset(n for n in present if n != SUCCESS))

    @staticmethod
    def _foreign(present: dict, current) -> list[str]:
        """What a folder holds besides what its manifest lists, with the listed size
        (on a store, names and sizes are checked, not digests); a folder of an older
        version (an empty _SUCCESS) is checked by its names."""
        if current is None:
            return sorted(present)
        try:
            manifest = Manifest.parse(current[0])
        except ManifestError:
            if current[0].strip():
                return [SUCCESS + " (not a manifest of this tool)"]
            return sorted(n for n in present if not _legacy_name(n))
        listed = manifest.files
        return sorted(n + (" (changed since this tool wrote it)" if n in listed else "")
                      for n, size in present.items()
                      if n != SUCCESS and (n not in listed or listed[n].size != size))

    def publish(self, known: Optional[dict] = None) -> None:
        """Seal and publish (see the module's docstring; `known`: Manifest.of_folder);
        OutputError if the output changed or the lock was lost meanwhile."""
        manifest = Manifest.of_folder(self.path, self.run_id, known)
        test_pause("before_publish")
        self.lock.check()
        self._check_unchanged()
        old = sorted(self.replaces.names) if self.replaces else []
        journal = {"run_id": self.run_id, "old": old, "new": sorted(manifest.files)}
        files.write_bytes(files.join(self.path, JOURNAL), (json.dumps(journal) + "\n").encode("utf-8"))
        marker = files.join(self.final, SUCCESS)
        if self.replaces is not None and self.replaces.token is not None:
            if not self.store.delete(marker, self.replaces.token):
                raise OutputError(f"{self.final} was replaced while this run published; it was not touched")
        for i, name in enumerate(sorted(manifest.files)):
            files.copy([files.join(self.path, *name.split("/"))], [files.join(self.final, *name.split("/"))])
            if i == 0:
                test_pause("publishing")
        stale = [files.join(self.final, *n.split("/")) for n in old if n not in manifest.files]
        if stale:
            files.delete(stale)
        self.lock.check()
        if self.store.create(marker, manifest.to_bytes()) is None:
            raise OutputError(f"{marker} appeared while this run published (another writer?); this run's files "
                              "are in the folder without a marker")
        test_pause("after_publish")
        self._remove(self.run_id)
        self._release()

    def _check_unchanged(self) -> None:
        """The output is still what create() saw (another writer, without the lock?)."""
        current = self.store.read(files.join(self.final, SUCCESS))
        if self.replaces is None and files.list_tree(self.final):
            raise OutputError(f"{self.final} appeared while this run was working (another run?); it was not touched "
                              "and this run's results were discarded")
        if self.replaces is not None and (current[1] if current else None) != self.replaces.token:
            raise OutputError(f"{self.final} was replaced or removed while this run was working (another run?); it "
                              "was not touched and this run's results were discarded")

    def discard(self) -> None:
        """A failed or interrupted run: undo a half publication (its journal), remove
        the staging prefix, release the lock.  With the lock lost, the staging prefix
        is left for the run that holds it now (it cleans dead runs' prefixes)."""
        if not self._held:
            return
        try:
            if not self.lock.lost:
                self._recover(self.run_id)
                self._remove(self.run_id)
        finally:
            self._release()

    def _release(self) -> None:
        if self._held:
            self._held = False
            self.lock.release()

    # ------------------------------------------------------------ dead runs

    def _staging_of(self, run_id: str) -> str:
        return f"{self.final}{STAGING}{run_id}"

    def _clean_dead_runs(self) -> None:
        """With the lock held, every other run's staging prefix is a dead run's:
        undo its half publication, if any, then remove the prefix."""
        found = self.store.list(self.final + STAGING)
        runs = {url[len(self.final + STAGING):].split("/", 1)[0] for url in found}
        for run_id in sorted(r for r in runs if _RUN_ID.fullmatch(r) and r != self.run_id):
            self._recover(run_id)
            self._remove(run_id)
            log.warning("removed the staging files of run %s (killed) under %s", run_id, self._staging_of(run_id))

    def _recover(self, run_id: str) -> None:
        """A run that died while publishing (its journal there, no _SUCCESS in the
        output): delete the files the journal names from the output, and only those."""
        journal_url = files.join(self._staging_of(run_id), JOURNAL)
        got = self.store.read(journal_url)
        if got is None:
            return
        current = self.store.read(files.join(self.final, SUCCESS))
        if current is not None:
            return  # the old marker still there (nothing changed) or the new one (published)
        try:
            journal = parse_json(got[0])
            names = sorted(set(journal["old"]) | set(journal["new"]))
            for name in names:
                check_name(name)
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
            raise OutputError(f"{journal_url}: not a journal of this tool ({err}); {self.final} holds a half "
                              "published run: delete it by hand") from err
        present = files.list_tree(self.final)
        doomed = [files.join(self.final, *n.split("/")) for n in names if n in present]
        if doomed:
            files.delete(doomed)
        log.warning("run %s was killed while publishing %s: its files and the replaced run's were removed (%d)",
                    run_id, self.final, len(doomed))

    def _remove(self, run_id: str) -> None:
        """Delete every object under this output's staging prefix of `run_id`."""
        found = sorted(self.store.list(self._staging_of(run_id) + "/"))
        if found:
            files.delete(found)


def _legacy_name(name: str) -> bool:
    """A file a previous version wrote in place into a URL output."""
    sub, _, rest = name.partition("/")
    if not rest:
        return bool(RESULT_ENTRIES.fullmatch(name))
    return bool((sub in LEGACY_PARTS and LEGACY_PARTS[sub].fullmatch(rest)) or _LEGACY_DEBRIS.fullmatch(name))


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
