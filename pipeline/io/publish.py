"""Result folders: what may be replaced, staging, and publishing atomically and exclusively.

A run writes into a staging folder next to its output (`OUT.staging-<run id>`,
guarded by a lock file `OUT.staging-<run id>.lock` held for the run's lifetime)
and publishes it at the end in one step:

* a new output: `renameat2(RENAME_NOREPLACE)`: if anything appeared at the output
  since the run started (another run finished first), the rename fails and
  the output is not touched;
* `--overwrite` of a previous result folder: `renameat2(RENAME_EXCHANGE)` swaps
  the two folders in one step, after checking that the output is still the
  folder the run was allowed to replace; the old one is then deleted.

So at every instant the output is absent, the old folder or the new folder,
each complete.  A staging folder whose lock is free (its run was SIGKILLed) is
deleted by the next run into the same output.  Where `renameat2` is missing
(not Linux, or a filesystem without it) the same checks run just before a plain
rename, which leaves a short window.

`--overwrite` replaces only a folder this tool published: one whose manifest
(`_SUCCESS`, pipeline.io.manifest) records every file this tool wrote there with
its size and SHA-256 (`Staging.seal`), and that holds nothing else and no changed
file; once the new folder is in place, only the recorded files of the old one are
deleted.  Result folders on object stores (URLs): pipeline.io.publish_url.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import shutil
import stat
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Iterable, Optional

from pipeline.io import files
from pipeline.io.manifest import MARKER, MAX_BYTES, SUCCESS, Manifest, digest, parse_json
from rouge_core import RougeConfigError

# Top-level names a result folder may hold (a previous version's folders included).
RESULT_ENTRIES = re.compile(
    r"(_ROUGE_PIPELINE|_SUCCESS|run\.json|rouge155\.txt|report\.html|per_document|errors"
    r"|(system_scores|errors|significance|comparison|correlations)\.(parquet|csv|md|jsonl))"
)
_STAGING = re.compile(r"\.staging-[0-9a-f]{12}")
TEST_PAUSE = "ROUGE_PIPELINE_TEST_PAUSE"  # "STEP" or "STEP:RESUME_FILE"; tests only

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


class OutputError(RougeConfigError):
    """The output folder cannot be used or published; nothing of the user's was touched."""


def is_local(path: str) -> bool:
    return "://" not in path


def _marker(run_id: str) -> bytes:
    """`_ROUGE_PIPELINE`: this tool's folder, of this run (written first)."""
    return (json.dumps({"tool": "rouge-pipeline", "run_id": run_id}) + "\n").encode("utf-8")


def _contains(folder: str, path: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# Names this tool writes inside a result folder's subfolders, for folders published
# before the marker recorded its files (checked by name then, not by digest).
LEGACY_PARTS = {
    "per_document": re.compile(r"part-([0-9a-f]{16}-)?\d{5}-of-\d{5}\.(parquet|csv|jsonl)"),
    "errors": re.compile(r"(part-\d{5}-of-\d{5}|file-[0-9a-f]{16})\.(parquet|jsonl)"),
}


def _walk(folder: str) -> tuple[list[str], list[str]]:
    """(files, other entries: folders, symlinks, pipes ...) under `folder`, as paths
    relative to it, without following symlinks."""
    found, other = [], []
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in dirs + names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            if os.path.islink(path) or not (os.path.isfile(path) or os.path.isdir(path)):
                other.append(rel)
            elif os.path.isfile(path):
                found.append(rel)
            else:
                other.append(rel + os.sep)
    return sorted(found), sorted(other)


def recorded_manifest(folder: str) -> Optional[Manifest]:
    """What this tool wrote in a local `folder`: its manifest (`_SUCCESS`), or the
    file list an older version kept in `_ROUGE_PIPELINE`; None when neither."""
    for name, parse in ((SUCCESS, Manifest.parse), (MARKER, Manifest.parse_marker)):
        try:
            return parse(files.read_at_most(os.path.join(folder, name), MAX_BYTES))
        except (OSError, ValueError):
            continue
    return None


def recorded_files(folder: str) -> dict[str, str]:
    """{relative path: sha256} of every file this tool wrote in `folder` (but its
    markers), from its manifest ({} when it records none: an older folder)."""
    manifest = recorded_manifest(folder)
    return {name: entry.sha256 for name, entry in manifest.files.items()} if manifest else {}


def _foreign_entries(folder: str) -> Optional[list[str]]:
    """None when `folder` holds only what this tool wrote, else what else it holds.

    A folder this tool published records every file it wrote, with its SHA-256, in
    its marker: anything unlisted, changed, a symlink or a pipe is foreign.  A folder
    of an older version (no list) is checked by names, inside its subfolders too."""
    names = sorted(os.listdir(folder))
    if MARKER not in names and "_SUCCESS" not in names:
        return names or ["(it is empty, but this tool did not create it)"]
    try:
        record = parse_json(files.read_at_most(os.path.join(folder, "run.json"), MAX_BYTES))
        if not isinstance(record, dict) or "signature" not in record:
            raise ValueError
    except (OSError, ValueError):
        return ["run.json (missing or not a run record of this tool)"]
    found, other = _walk(folder)
    listed = recorded_files(folder)
    if listed:
        markers = {SUCCESS} if MARKER in listed else {SUCCESS, MARKER}
        foreign = [f for f in found if f not in markers and (f not in listed or digest(os.path.join(folder, f))[1] != listed[f])]
        folders = {os.path.dirname(f) + os.sep for f in listed if os.path.dirname(f)}
        folders |= {sub + os.sep for sub in LEGACY_PARTS}  # may be empty
        foreign += [o for o in other if o not in folders]
        return [f + (" (changed since this tool wrote it)" if f in listed else "") for f in sorted(foreign)] or None
    foreign = [n for n in names if not RESULT_ENTRIES.fullmatch(n)]
    for sub, pattern in LEGACY_PARTS.items():
        foreign += [f for f in found if f.startswith(sub + os.sep) and not pattern.fullmatch(f[len(sub) + 1 :])]
    foreign += [o for o in other if o not in (sub + os.sep for sub in LEGACY_PARTS)]
    return sorted(foreign) or None


def _legacy_files(folder: str) -> dict[str, str]:
    """The files of an older result folder that this tool wrote (by name)."""
    found, _ = _walk(folder)
    keep = {}
    for f in found:
        sub, _, rest = f.partition(os.sep)
        if (rest and sub in LEGACY_PARTS and LEGACY_PARTS[sub].fullmatch(rest)) or (not rest and RESULT_ENTRIES.fullmatch(f)):
            keep[f] = ""
    return keep


def remove_written(folder: str, listed: dict[str, str]) -> list[str]:
    """Delete the files this tool wrote in `folder` (`listed`, and its marker), then
    the folders left empty; returns what is left (anything else, e.g. a file a
    person put there while the run was working), which is never deleted."""
    for rel in list(listed) + [MARKER, SUCCESS]:
        try:
            os.unlink(os.path.join(folder, rel))
        except FileNotFoundError:
            pass
    for root, dirs, _ in sorted(os.walk(folder, topdown=False), key=lambda w: -len(w[0])):
        for name in dirs:
            try:
                os.rmdir(os.path.join(root, name))
            except OSError:
                pass
    try:
        os.rmdir(folder)
        return []
    except OSError:
        return _walk(folder)[0]


@dataclass(frozen=True)
class Identity:
    """What a folder was when the run started, to tell whether it was replaced meanwhile."""

    device: int
    inode: int

    @classmethod
    def of(cls, path: str) -> "Identity":
        st = os.stat(path)
        return cls(st.st_dev, st.st_ino)


def check_output(final: str, overwrite: bool, inputs: Iterable[str]) -> Optional[Identity]:
    """Refuse, before any work, an output that must not be written or replaced.

    Returns the identity of the previous result folder that `--overwrite` will
    replace, or None when the output does not exist yet.
    """
    here = os.path.realpath(os.getcwd())
    real = os.path.realpath(final)
    if _contains(real, here):
        raise OutputError(f"refusing output {final}: it is the current folder or contains it")
    for path in inputs:
        if is_local(path) and _contains(real, os.path.realpath(path)):
            raise OutputError(f"refusing output {final}: it contains the input file {path}")
    if not os.path.lexists(final):
        return None
    if not os.path.isdir(final) or os.path.islink(final):
        raise OutputError(f"refusing output {final}: it exists and is not a folder")
    if not overwrite:
        raise OutputError(
            f"output folder {final} already exists; choose another --output or pass --overwrite "
            "to replace it (only a result folder of this tool is replaced, once the new run has succeeded)"
        )
    foreign = _foreign_entries(final)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise OutputError(
            f"refusing to replace {final}: it is not a result folder of rouge-pipeline "
            f"(it holds {shown}); --overwrite replaces only folders this tool published"
        )
    return Identity.of(final)


def _renameat2(source: str, target: str, flags: int) -> bool:
    """True when done; False when the system has no renameat2 for this filesystem."""
    libc = ctypes.CDLL(None, use_errno=True)
    call = getattr(libc, "renameat2", None)
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), target)


def test_pause(step: str) -> None:
    """A hook for the tests: with ROUGE_PIPELINE_TEST_PAUSE=STEP[:RESUME_FILE] the run
    announces the step on stderr and waits there (until RESUME_FILE exists, or for
    ever) so that a test can kill it, or race another run, at exactly that point."""
    wanted = os.environ.get(TEST_PAUSE, "")
    name, _, resume = wanted.partition(":")
    if name != step:
        return
    print(f"rouge-pipeline: test pause at {step}", file=sys.stderr, flush=True)
    while not (resume and os.path.exists(resume)):
        time.sleep(0.05)


class Staging:
    """The folder a run writes into, published at the end (local outputs only)."""

    def __init__(self, final: str, replaces: Optional[Identity]):
        self.final = final
        self.replaces = replaces
        self.run_id = uuid.uuid4().hex[:12]
        self.path = f"{final}.staging-{self.run_id}"
        self._lock_fd: Optional[int] = None

    def create(self) -> "Staging":
        """Make the staging folder (and the output's parents): any problem with the
        output's location (not writable, name too long) shows here, before Beam."""
        parent = os.path.dirname(os.path.abspath(self.final))
        try:
            try:
                os.makedirs(parent, exist_ok=True)
            except FileExistsError:
                raise OutputError(f"cannot create the result folder {self.final}: {parent} is not a folder") from None
            remove_stale_staging(self.final)
            # The lock is taken before its file becomes visible, so no other run can
            # ever see it free while this run lives.
            fd = os.open(self.path + ".lock-new", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            self._lock_fd = fd
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(self.path + ".lock-new", self.path + ".lock")
            os.mkdir(self.path)
            with open(os.path.join(self.path, MARKER), "wb") as fh:
                fh.write(_marker(self.run_id))
        except OSError as err:
            self.discard()
            if err.errno == errno.ENAMETOOLONG and str(err.filename or "").startswith(self.path):
                # (the output's name fits, but not with the suffix of its staging folder)
                longest = len(os.path.basename(self.path + ".lock-new").encode("utf-8", "surrogateescape"))
                extra = longest - len(os.path.basename(self.final).encode("utf-8", "surrogateescape"))
                raise OutputError(f"cannot create the result folder {self.final}: {err.strerror} with the {extra} "
                                  f"characters the staging folder beside it adds ('{os.path.basename(self.path)}"
                                  ".lock-new'); choose a shorter --output") from None
            raise OutputError(f"cannot create the result folder {self.final}: {err.strerror} ({err.filename})")
        return self

    def seal(self, known: Optional[dict] = None) -> None:
        """Write the manifest, `_SUCCESS`: every file of the staging folder with its
        size and SHA-256 (`known`: of files copied checked, Manifest.of_folder), what
        a reader may trust and a later --overwrite may remove (and nothing else).  The
        last write."""
        with open(os.path.join(self.path, SUCCESS), "wb") as fh:
            fh.write(Manifest.of_folder(self.path, self.run_id, known).to_bytes())

    def publish(self, known: Optional[dict] = None) -> None:
        self.seal(known)
        test_pause("before_publish")
        if self.replaces is None:
            self._publish_new()
        else:
            self._exchange()
        self._release()

    def _publish_new(self) -> None:
        appeared = OutputError(
            f"{self.final} appeared while this run was working (another run?); it was not touched "
            "and this run's results were discarded"
        )
        try:
            if not _renameat2(self.path, self.final, _RENAME_NOREPLACE):
                if os.path.lexists(self.final):
                    raise appeared
                os.rename(self.path, self.final)
        except OSError as err:
            if err.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise appeared from None
            raise
        test_pause("after_publish")

    def _exchange(self) -> None:
        if not os.path.isdir(self.final) or Identity.of(self.final) != self.replaces:
            raise OutputError(
                f"{self.final} was replaced or removed while this run was working (another run?); "
                "it was not touched and this run's results were discarded"
            )
        if _renameat2(self.path, self.final, _RENAME_EXCHANGE):
            if Identity.of(self.path) != self.replaces:  # lost a race in the last microseconds: undo
                _renameat2(self.path, self.final, _RENAME_EXCHANGE)
                raise OutputError(f"{self.final} was replaced while this run published; it was not touched")
        else:  # no atomic exchange here: keep the old folder until the new one is in place
            old = f"{self.final}.replaced-{self.run_id}"
            os.rename(self.final, old)
            os.rename(self.path, self.final)
            os.rename(old, self.path)
        test_pause("after_exchange")
        # The new folder is in place: the old one loses only the files this tool wrote
        # (a failure to delete one is not the run's failure).  Anything else (put there
        # while the run was working) is kept, in a folder no later run deletes.
        listed = recorded_files(self.path) or _legacy_files(self.path)
        try:
            left = remove_written(self.path, listed)
        except OSError:
            left = ["(files that could not be deleted)"]
        if left:
            kept = f"{self.final}.replaced-{self.run_id}"
            os.rename(self.path, kept)
            print(
                f"rouge-pipeline: warning: the replaced folder held files this tool did not write "
                f"({', '.join(left[:5])}); they are kept in {kept}",
                file=sys.stderr,
            )

    def discard(self) -> None:
        """Remove the staging folder (an interrupted or failed run)."""
        shutil.rmtree(self.path, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._lock_fd is not None:
            for suffix in (".lock", ".lock-new"):
                try:
                    os.unlink(self.path + suffix)
                except FileNotFoundError:
                    pass
            os.close(self._lock_fd)
            self._lock_fd = None


def remove_stale_staging(final: str) -> list[str]:
    """Delete staging folders of `final` left by killed runs (their lock is free)."""
    parent = os.path.dirname(os.path.abspath(final))
    base = os.path.basename(os.path.abspath(final))
    removed = []
    names = {n.removesuffix(".lock") for n in os.listdir(parent) if n.startswith(base)}
    for name in sorted(names):
        if not _STAGING.fullmatch(name[len(base) :]):
            continue
        path = os.path.join(parent, name)
        try:  # (never waiting on a pipe named like a lock, nor following a link)
            fd = os.open(path + ".lock", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except FileNotFoundError:
            fd = None
        except OSError:
            continue  # a link or something else by that name: not ours
        try:
            if fd is not None and not stat.S_ISREG(os.fstat(fd).st_mode):
                continue  # not ours
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live run
            elif not os.path.exists(os.path.join(path, MARKER)):
                continue  # not ours
            listed = recorded_files(path)
            if listed:  # a replaced result folder (the run was killed before deleting it)
                if remove_written(path, listed):
                    os.rename(path, path.replace(".staging-", ".replaced-", 1))
            else:  # a killed run's staging folder: only what it wrote
                shutil.rmtree(path, ignore_errors=True)
            if fd is not None:
                os.unlink(path + ".lock")
            removed.append(path)
        finally:
            if fd is not None:
                os.close(fd)
    return removed


def output_taken(output: str) -> str:
    """Why `compare`, `meta-eval` or `history` cannot publish to `output` ("" when it
    can: nothing there, or an empty folder; a URL: no object under it)."""
    if files.is_url(output):
        return "exists and is not empty" if files.list_tree(output) else ""
    if not os.path.lexists(output):
        return ""
    if os.path.islink(output) or not os.path.isdir(output):
        return "exists and is not a folder"
    return "exists and is not empty" if os.listdir(output) else ""


def publish_local_files(output: str, contents: dict[str, bytes]) -> str:
    """Publish a small local result folder (`compare`, `meta-eval`, `history`) whole: the files
    and their manifest, `_SUCCESS`, are written into a staging folder next to
    `output` and renamed into place, onto nothing or onto an empty folder, never over
    anything (for a URL: pipeline.io.publish_url.publish_files).  Returns the
    folder's path."""
    run_id = uuid.uuid4().hex[:12]
    final = os.path.abspath(output)
    taken = output_taken(final)
    if taken:
        raise OutputError(f"output folder {output} {taken}; choose another --output")
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(final)}.staging-{run_id}")
    os.mkdir(staging)
    try:
        for name, data in {**contents, SUCCESS: Manifest.of_contents(run_id, contents).to_bytes()}.items():
            with open(os.path.join(staging, name), "xb") as fh:
                fh.write(data)
        if os.path.isdir(final):
            os.rmdir(final)  # empty, checked above; rmdir refuses if anything appeared since
        if not _renameat2(staging, final, _RENAME_NOREPLACE):
            os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final
