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

from pipeline.config import InputConfig
from pipeline.io import files
from pipeline.io.names import shown
from pipeline.io.rows import TABLE_SUFFIXES, read_lines, row_error
from pipeline.records import SourceRow
from rouge_core import RougeInputError

_DECOMPRESS = {".gz": lambda raw: gzip.GzipFile(fileobj=raw), ".bz2": bz2.BZ2File}


def expand_text_globs(paths: list[str]) -> list[str]:
    """`paths` with each local glob that matches only text files replaced by its
    matches in sorted order, as a shell expands it (a quoted 'refs/*.txt'); a glob of
    tables (or of nothing) stays a glob, for the row reader."""
    out: list[str] = []
    for path in paths:
        if path != "-" and not files.is_url(path) and any(c in path for c in "*?[") and not os.path.lexists(path):
            matched = sorted(files.match(path))
            if matched and all(is_text_file(m) for m in matched):
                out += matched
                continue
        out.append(path)
    return out


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


def _lines(path: str, config: InputConfig):
    """The file's lines, one at a time (decompressed by its extension, .gz or .bz2);
    '-' is stdin (refused when it is a device or a terminal)."""
    if path == "-":
        yield from read_lines(files.stdin(), config.max_line_bytes)
        return
    with files.open_read(path, pipe_ok=True) as raw:
        opener = next((f for ext, f in _DECOMPRESS.items() if path.lower().endswith(ext)), None)
        fh = opener(raw) if opener else raw
        yield from read_lines(fh, config.max_line_bytes)


_END = object()


def _aligned(paths: list[str], config: InputConfig):
    """The n-th line of every file, together, n = 1, 2, ...: read in step, so files of
    different lengths are refused as soon as one ends before another (an endless
    stdin against a 10-line reference: at line 11), and nothing is held."""
    sources = [_lines(path, config) for path in paths]
    number = 0
    while True:
        try:
            lines = [next(source, _END) for source in sources]
        except OSError as err:
            raise RougeInputError(f"cannot read line-aligned input: {err}") from err
        ended = [path for path, line in zip(paths, lines) if line is _END]
        if len(ended) == len(paths):
            return
        if ended:
            longer = [path for path in paths if path not in ended]
            raise RougeInputError(
                f"line-aligned files must have the same number of lines: {_named(ended)} "
                f"{'ends' if len(ended) == 1 else 'end'} after {number} lines, but {_named(longer)} "
                f"{'has' if len(longer) == 1 else 'have'} more"
            )
        number += 1
        yield number, lines


def _named(paths: list[str]) -> str:
    return ", ".join("- (stdin)" if path == "-" else shown(path) for path in paths)


def line_aligned_rows(
    candidates: str, references: list[str], system: str, sentence_sep: str | None, config: InputConfig
):
    """Joined-form rows (`SourceRow`) from line-aligned files, or an `ErrorRecord` for
    a line that cannot be read (too long, not UTF-8); files of different lengths are
    a usage error that names them, raised as soon as one ends before another."""
    if not references:
        raise RougeInputError("line-aligned input needs --references: one or more files with one reference per line")
    paths = [candidates] + list(references)
    if paths.count("-") > 1:
        raise RougeInputError("only one of the line-aligned files can be '-' (stdin)")
    for number, lines in _aligned(paths, config):
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
