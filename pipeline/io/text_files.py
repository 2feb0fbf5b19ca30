"""Line-aligned text files, as files2rouge, sacreBLEU and rouge-score's CLI read
them: one summary per line in `cand.txt` and in each reference file; the n-th
lines belong together and form document `n` (counting from 1).  `-` is stdin
(for one of the files).

`is_text_file` tells such a file from a JSON Lines or Parquet one, for `score
CAND REF [REF ...]`."""

from __future__ import annotations

import bz2
import gzip
import os
import sys

from pipeline.config import InputConfig
from pipeline.io import files
from pipeline.io.rows import read_lines, row_error
from pipeline.records import SourceRow
from rouge_core import RougeInputError

_DECOMPRESS = {".gz": lambda raw: gzip.GzipFile(fileobj=raw), ".bz2": bz2.BZ2File}


TABLE_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson", ".parquet")


def is_text_file(path: str) -> bool:
    """A plain text file rather than a table: not named like JSON Lines or Parquet,
    not a glob, and its first non-blank character is not '{' (a JSON object).  A
    pipe or device is not read here (its bytes would be gone): its name decides.  A
    folder is not (it names the tables in it)."""
    if path == "-" or path.lower().endswith(TABLE_SUFFIXES) or any(c in path for c in "*?["):
        return False
    if not files.is_url(path) and os.path.isdir(path):
        return False
    if not files.is_url(path) and os.path.exists(path) and not os.path.isfile(path):
        return True  # a pipe (<(my_model)) is read once, by the reader: its name decides
    try:
        with files.open_read(path, pipe_ok=True) as raw:
            opener = next((f for ext, f in _DECOMPRESS.items() if path.lower().endswith(ext)), None)
            head = (opener(raw) if opener else raw).read(4096)
    except (OSError, EOFError):
        return False  # the reader says what is wrong with it
    return not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def _lines(path: str, config: InputConfig) -> list:
    """The file's lines (decompressed by its extension, .gz or .bz2); '-' is stdin."""
    if path == "-":
        return list(read_lines(sys.stdin.buffer, config.max_line_bytes))
    with files.open_read(path, pipe_ok=True) as raw:
        opener = next((f for ext, f in _DECOMPRESS.items() if path.lower().endswith(ext)), None)
        fh = opener(raw) if opener else raw
        return list(read_lines(fh, config.max_line_bytes))


def line_aligned_rows(
    candidates: str, references: list[str], system: str, sentence_sep: str | None, config: InputConfig
):
    """Joined-form rows (`SourceRow`) from line-aligned files, or an `ErrorRecord` for
    a line that cannot be read (too long, not UTF-8); files of different lengths are
    a usage error that names them."""
    if not references:
        raise RougeInputError("line-aligned input needs --references: one or more files with one reference per line")
    paths = [candidates] + list(references)
    if paths.count("-") > 1:
        raise RougeInputError("only one of the line-aligned files can be '-' (stdin)")
    try:
        contents = [_lines(path, config) for path in paths]
    except OSError as err:
        raise RougeInputError(f"cannot read line-aligned input: {err}") from err
    lengths = {path: len(lines) for path, lines in zip(paths, contents)}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{path}: {n} lines" for path, n in lengths.items())
        raise RougeInputError(f"line-aligned files must have the same number of lines; {shown}")
    for number, lines in enumerate(zip(*contents), 1):
        problem = None
        texts = []
        for path, raw in zip(paths, lines):
            if raw is None:
                problem = (path, "line_too_long", f"line longer than {config.max_line_bytes} bytes")
                break
            try:
                line = raw.decode("utf-8", "replace" if config.invalid_utf8 == "replace" else "strict")
            except UnicodeDecodeError as err:
                problem = (path, "undecodable", f"not valid UTF-8 at byte {err.start}")
                break
            if number == 1:
                line = line.removeprefix("\ufeff")
            texts.append(line.split(sentence_sep) if sentence_sep else line)
        if problem:
            path, reason, message = problem
            yield row_error(path, number, reason, message, system=system, doc_id=str(number))
            continue
        row = {
            config.system_field: system,
            config.doc_id_field: str(number),
            config.candidate_field: texts[0],
            config.references_field: texts[1:],
        }
        yield SourceRow("<stdin>" if candidates == "-" else candidates, number, row)
