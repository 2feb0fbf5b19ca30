"""Files by path or URL: local paths through the standard library, URLs (gs://,
s3://, hdfs://, ...) through Beam's FileSystems, imported only when a URL is used.

Every reader and writer of the project goes through these few functions, so
`score`, `compare` and `meta-eval` on local files never import Beam.
"""

from __future__ import annotations

import glob as _glob
import hashlib
import os
import re
import stat
import sys
import types
from typing import Optional

from pipeline.io.stores import configure_here, object_store

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: str) -> bool:
    """True for `scheme://...` paths, which only Beam's FileSystems can open."""
    return bool(_URL.match(path))


def _beam():
    from apache_beam.io.filesystems import FileSystems  # noqa: PLC0415 (optional, for URLs only)

    configure_here()  # Beam's filesystem options before the first URL (pipeline.io.stores)
    return FileSystems


def join(folder: str, *parts: str) -> str:
    return _beam().join(folder, *parts) if is_url(folder) else os.path.join(folder, *parts)


def open_read(path: str, pipe_ok: bool = False):
    """A binary file object of the file's raw bytes (no decompression).  A local
    device is refused (OSError): /dev/zero never ends, a terminal waits.  So is a pipe,
    unless `pipe_ok` (a user's input that is read once): in a result folder it would
    wait for ever."""
    if is_url(path):
        return _beam().open(path, compression_type="uncompressed")
    kind = special_kind(path)
    if kind and not (pipe_ok and kind == PIPE):
        raise OSError(f"{path} is {kind}, not a regular file" + (" or a pipe" if pipe_ok else ""))
    return open(path, "rb")


def stdin():
    """The standard input as a binary file, read once; refused (OSError) when it is a
    device or a terminal, as `open_read` refuses one by name: `score - < /dev/zero`
    would never end, and on a terminal it would wait for typing."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError) as err:  # closed, or not a real file
        raise OSError(f"stdin cannot be read ({err})") from None
    kind = next((name for test, name in _SPECIAL if test(mode) and name != PIPE and name != _SOCKET), None)
    if kind:
        what = "a terminal" if os.isatty(sys.stdin.fileno()) else kind
        raise OSError(f"stdin ('-') is {what}, not a file or a pipe: redirect a file (< file.jsonl) or pipe one in")
    return sys.stdin.buffer


def create(path: str):
    """A binary file object writing `path` (its folder is made when local)."""
    if is_url(path):
        return _beam().create(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return open(path, "wb")


def write_bytes(path: str, data: bytes) -> None:
    with create(path) as fh:
        fh.write(data)


def read_bytes(path: str) -> bytes:
    with open_read(path) as fh:
        return fh.read()


def read_at_most(path: str, limit: int) -> bytes:
    """A file's bytes, refused (ValueError) when it holds more than `limit`; a pipe or
    a device is refused as `open_read` refuses it (OSError): a record of a folder
    is never waited for, nor read whole whatever its size."""
    with open_read(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: over {limit} bytes")
    return data


def exists(path: str) -> bool:
    return _beam().exists(path) if is_url(path) else os.path.exists(path)


def delete(paths: list[str]) -> None:
    local = [p for p in paths if not is_url(p)]
    for path in local:
        os.remove(path)
    urls = [p for p in paths if is_url(p)]
    if urls:
        _beam().delete(urls)


def copy(sources: list[str], targets: list[str]) -> None:
    """Copy files (URLs: on the store's side, without downloading them)."""
    for source, target in zip(sources, targets):
        if is_url(source) or is_url(target):
            _beam().copy([source], [target])
        else:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            with open(source, "rb") as src, open(target, "wb") as dst:
                copy_stream(src, dst)


def hashed_copy(source, out=None, length: Optional[int] = None) -> tuple[int, str]:
    """(bytes read, their SHA-256 in hex) of the open binary file `source`, from
    where it stands to its end or `length` bytes (`copy_stream`), written into `out`
    too when given."""
    digest = hashlib.sha256()

    def write(chunk: bytes) -> None:
        digest.update(chunk)
        if out is not None:
            out.write(chunk)

    return copy_stream(source, types.SimpleNamespace(write=write), length), digest.hexdigest()


def copy_stream(source, out, length: Optional[int] = None) -> int:
    """Copy from the open binary file `source` (from where it stands) into `out`, a
    chunk at a time, to its end or `length` bytes; returns the bytes copied (fewer
    than `length` when the file ends first)."""
    copied = 0
    while length is None or copied < length:
        chunk = source.read(1 << 20 if length is None else min(1 << 20, length - copied))
        if not chunk:
            break
        out.write(chunk)
        copied += len(chunk)
    return copied


def list_tree(folder: str) -> dict[str, int]:
    """{path relative to `folder` ('/'-separated): size} of every file under it, at
    any depth: a local folder's regular files (symlinks not followed), or every
    object whose name starts with `folder`/ on a store (exactly that prefix, with
    no glob character of the name taken for a pattern)."""
    if is_url(folder):
        prefix = folder.rstrip("/") + "/"
        return {url[len(prefix):]: size for url, size in object_store(prefix).list(prefix).items()
                if not url.endswith("/")}  # (a "folder" placeholder some tools make)
    found = {}
    for root, _, names in os.walk(folder, followlinks=False):
        for name in names:
            path = os.path.join(root, name)
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                found[os.path.relpath(path, folder).replace(os.sep, "/")] = st.st_size
    return found


def match(pattern: str) -> dict[str, int]:
    """{path: size in bytes} of the files a glob, a file or a folder names; a local
    pattern is matched by the standard library, and its paths are kept as written
    (relative stays relative)."""
    if is_url(pattern):
        return {m.path: m.size_in_bytes for m in _beam().match([pattern])[0].metadata_list}
    if os.path.isdir(pattern):  # a folder names the files in it
        pattern = os.path.join(_glob.escape(pattern), "*")
    elif os.path.lexists(pattern):  # a name that exists is that file, even with [ ] * ? in it
        return {pattern: _size(pattern)}
    found = {}
    for path in sorted(_glob.glob(pattern)):
        if not os.path.isdir(path):
            found[path] = _size(path)
    return found


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        if os.path.islink(path):
            raise FileNotFoundError(
                f"{path} is a symbolic link to {os.readlink(path)!r}, which does not exist"
            ) from None
        raise


def identity(path: str):
    """(device, inode) of a local file, the same for every name of it (a symbolic or
    hard link); None for a URL or a file that cannot be looked at."""
    if is_url(path):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


PIPE = "a pipe (a FIFO, or <(...) process substitution)"
_SOCKET = "a socket"
_SPECIAL = ((stat.S_ISFIFO, PIPE), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, _SOCKET))


def special_kind(path: str):
    """What a local path is when it is not a regular file (a pipe, a device), else None."""
    if is_url(path):
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return next((name for test, name in _SPECIAL if test(mode)), None)
