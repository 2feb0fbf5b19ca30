"""How many rows the input files hold, counted ahead of reading them, so that the
progress of reading and scoring has a total (pipeline/progress.py).

Parquet: the footer's row count (nothing else is read).  JSON Lines (plain or
gzip): the lines that are not blank, counted a megabyte at a time without
parsing.  A count is the total a progress line shows, not a number any table
uses: a file that cannot be counted (a URL, stdin, an unreadable file) gives
None and its stage shows no total until its rows are read.
"""

from __future__ import annotations

import gzip
import os
import re
from typing import Iterable, Optional

from pipeline.io import files

CHUNK = 1 << 20


def count_rows(path: str) -> Optional[int]:
    """The rows of one local file, or None when it cannot be counted cheaply."""
    if path == "-" or files.is_url(path) or not os.path.isfile(path):  # a FIFO or device is read once, by the reader
        return None
    try:
        if path.lower().endswith(".parquet"):
            import pyarrow.parquet as pq  # noqa: PLC0415 (only for Parquet inputs)

            return pq.ParquetFile(path).metadata.num_rows
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            return _lines(gzip.GzipFile(fileobj=raw) if gzipped else raw)
    except Exception:  # noqa: BLE001 (the reader reports the file's problem; a total is optional)
        return None


def count_all(paths: Iterable[str]) -> Optional[int]:
    """The rows of every file, or None when one of them cannot be counted."""
    total = 0
    for path in paths:
        n = count_rows(path)
        if n is None:
            return None
        total += n
    return total


# a newline whose next line is blank: white space only, up to the next newline
_BLANK_NEXT = re.compile(rb"\n(?=[ \t\r\x0b\x0c]*\n)")


def _lines(fh) -> int:
    """Lines holding anything but white space (the rows of a JSON Lines file), a
    chunk at a time with C loops: a chunk's newlines, less those whose next line
    is blank; the line open at a chunk's end is carried as one flag (whether it
    holds anything yet), so a line of any length costs no copy."""
    rows = 0
    filled = False  # the line being read holds something other than white space
    while chunk := fh.read(CHUNK):
        first = chunk.find(b"\n")
        if first < 0:
            filled = filled or not chunk.isspace()
            continue
        rows += filled or (first > 0 and not chunk[:first].isspace())
        last = chunk.rfind(b"\n")
        # every newline from `first` to before `last` opens a line that ends in this chunk
        rows += chunk.count(b"\n", first, last) - len(_BLANK_NEXT.findall(chunk, first, last + 1))
        filled = last + 1 < len(chunk) and not chunk[last + 1 :].isspace()
    return rows + filled
