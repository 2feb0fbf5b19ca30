"""The result tables: their columns, and writing them as Parquet, CSV and Markdown.

The one table writer of the project (`run`, `score`, `compare`, `meta-eval`).
Every table (or shard of one, for per-document scores and errors) is written whole
by one writer, sorted, so the bytes do not depend on the runner, the worker count
or the input order.  pyarrow is imported only when Parquet is written or read.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections import Counter
from typing import Optional

import numpy as np

from pipeline.config import Profile
from pipeline.io import files
from pipeline.io.names import shown
from pipeline.io.rows import MAX_CELL_BYTES, STREAMED_TABLE_BYTES, bounded_batches
from pipeline.records import ERROR_COLUMNS, ErrorRecord
from rouge_core.resampling import stable_hash

SYSTEM_COLUMNS = [
    ("profile", "string"),
    ("system", "string"),
    ("metric", "string"),
    ("documents", "int64"),
    ("recall", "float64"),
    ("precision", "float64"),
    ("f_measure", "float64"),
    ("rouge155_recall", "float64"),
    ("rouge155_recall_low", "float64"),
    ("rouge155_recall_high", "float64"),
    ("rouge155_precision", "float64"),
    ("rouge155_precision_low", "float64"),
    ("rouge155_precision_high", "float64"),
    ("rouge155_f_measure", "float64"),
    ("rouge155_f_measure_low", "float64"),
    ("rouge155_f_measure_high", "float64"),
    ("micro_recall", "float64"),
    ("micro_precision", "float64"),
    ("micro_f_measure", "float64"),
    ("bootstrap_f_measure_low", "float64"),
    ("bootstrap_f_measure_high", "float64"),
    ("jackknife_se_recall", "float64"),
    ("jackknife_se_precision", "float64"),
    ("jackknife_se_f_measure", "float64"),
    ("signature", "string"),
    # Scored plus rejected candidate rows of the system (filled in when the run's counts are known).
    ("documents_had", "int64"),
]
SIGNATURE_BYTES = 1 << 16  # a cell of system_scores read back (its signature: longer than an id may be)
DOCUMENT_COLUMNS = [
    ("profile", "string"),
    ("system", "string"),
    ("doc_id", "string"),
    ("metric", "string"),
    ("recall", "float64"),
    ("precision", "float64"),
    ("f_measure", "float64"),
    ("hits", "float64"),
    ("reference_total", "float64"),
    ("candidate_total", "float64"),
    # The row's content digests (pipeline.digests): what a later run checks before reusing its values.
    ("candidate_digest", "int64"),
    ("references_digest", "int64"),
]
SIGNIFICANCE_COLUMNS = [
    ("profile", "string"),
    ("metric", "string"),
    ("measure", "string"),
    ("system_a", "string"),
    ("system_b", "string"),
    ("documents", "int64"),
    ("mean_a", "float64"),
    ("mean_b", "float64"),
    ("difference", "float64"),
    ("ci_low", "float64"),  # the t interval of the difference
    ("ci_high", "float64"),
    ("effect_size", "float64"),  # d_z: the difference over the sd of the per-document differences
    ("statistic", "float64"),  # t
    ("p_value", "float64"),  # the paired sign-flip test (rouge_core.significance)
    ("p_floor", "float64"),  # the smallest p that any data on these documents could give
    ("method", "string"),  # "exact sign-flip" (n <= 20) or "t"
    ("p_adjusted", "float64"),
]
COMPARISON_COLUMNS = [
    ("system", "string"),
    ("metric", "string"),
    ("measure", "string"),
    ("average", "string"),  # what old and new are: "rouge155" (ROUGE-1.5.5's printed average) or "mean"
    ("status", "string"),  # both, added, removed
    ("old_documents", "int64"),
    ("new_documents", "int64"),
    ("documents", "int64"),  # scored by both runs: the paired test's
    ("old", "float64"),  # the old run's own table value (0-1): its `average`
    ("new", "float64"),  # the new run's own table value (0-1)
    ("old_mean", "float64"),  # mean over the old run's documents (0-1)
    ("new_mean", "float64"),  # mean over the new run's documents (0-1)
    ("delta_points", "float64"),  # 100 x (new - old) of the mean on the shared documents
    ("ci_low_points", "float64"),
    ("ci_high_points", "float64"),
    ("p_value", "float64"),  # the paired sign-flip test (rouge_core.significance)
    ("p_floor", "float64"),
    ("method", "string"),
    ("p_adjusted", "float64"),  # Holm across every row with status "both"
    ("verdict", "string"),  # better, worse, no significant change, added, removed
    ("fails", "bool"),  # worse by more than --fail-on-drop points
]
MOVED_COLUMNS = [
    ("system", "string"),
    ("metric", "string"),
    ("measure", "string"),
    ("doc_id", "string"),
    ("old", "float64"),
    ("new", "float64"),
    ("delta_points", "float64"),
]
ERROR_TABLE_COLUMNS = list(zip(ERROR_COLUMNS, ["string", "string", "string", "int64", "string", "string"]))


def names(columns: list[tuple[str, str]]) -> list[str]:
    return [name for name, _ in columns]


def arrow_schema(columns: list[tuple[str, str]], metadata: Optional[dict] = None):
    """A pyarrow schema of (name, type name) columns, e.g. ("recall", "float64")."""
    import pyarrow as pa  # noqa: PLC0415 (optional: only Parquet needs it)

    return pa.schema([(name, getattr(pa, "bool_" if kind == "bool" else kind)()) for name, kind in columns], metadata=metadata)


def schema_problem(schema, columns: list[tuple[str, str]]) -> Optional[str]:
    """How an Arrow schema read back differs from `columns` (a table as this tool
    writes it: these names, in order, of these types; text read as a dictionary
    counts as text), in a phrase, or None."""
    import pyarrow as pa  # noqa: PLC0415

    expected = arrow_schema(columns)
    found = [(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type) for f in schema]
    if [name for name, _ in found] != expected.names:
        return f"its columns are {', '.join(name for name, _ in found) or 'none'}, not {', '.join(expected.names)}"
    wrong = [(name, kind) for (name, kind), want in zip(found, expected) if kind != want.type]
    if wrong:
        return f"its column {wrong[0][0]!r} holds {wrong[0][1]}, not {expected.field(wrong[0][0]).type}"
    return None


def parquet_bytes(rows: list[dict], columns: list[tuple[str, str]], metadata: Optional[dict] = None,
                  row_group_size: Optional[int] = None) -> bytes:
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema(columns, metadata)), sink, row_group_size=row_group_size)
    return sink.getvalue()


def jsonl_bytes(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(rows: list[dict], names: Optional[list[str]] = None, decimals: Optional[int] = 6) -> str:
    """Rows as CSV (by default the per-system table's columns that the rows have):
    scores with six decimals (the Parquet tables keep full precision; `decimals=None`
    writes every float in full, for p-values), text cells neutralised against formulas."""
    if names is None:
        names = [name for name, _ in SYSTEM_COLUMNS if not rows or name in rows[0]]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=names, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows({k: csv_cell(r.get(k), decimals) for k in names} for r in rows)
    return text.getvalue()


def csv_cell(value, decimals: Optional[int] = 6) -> str:
    """A CSV cell that a spreadsheet cannot run: text starting with = + - @ tab or CR
    gets a leading apostrophe (OWASP's advice on CSV injection), control characters
    are written as escapes (`\\x1b`); numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if decimals is None else f"{value:.{decimals}f}"
    if isinstance(value, int):
        return str(value)
    text = shown(str(value))  # control characters as visible escapes (pipeline.io.names)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def table_files(rows: list[dict], columns: list[tuple[str, str]], markdown: str, stem: str) -> dict[str, bytes]:
    """{`stem`.parquet, `stem`.csv (floats in full: p-values), `stem`.md: bytes}, the
    rows in the order given."""
    return {
        f"{stem}.parquet": parquet_bytes(rows, columns),
        f"{stem}.csv": csv_text(rows, names(columns), None).encode("utf-8"),
        f"{stem}.md": markdown.encode("utf-8"),
    }


def write_table(folder: str, stem: str, rows: list[dict], columns: list[tuple[str, str]], markdown: str) -> None:
    """`table_files` written into `folder`."""
    for name, data in table_files(rows, columns, markdown, stem).items():
        files.write_bytes(files.join(folder, name), data)


DOCUMENTS_PER_FILE = 100_000  # a (profile, system)'s documents per per-document file, unless set
# Documents per row group of a per-document file: a reader can take a file a row group at a
# time (significance from the tables reads every system's side by side), and 16,384 documents'
# doc_ids fit one Parquet dictionary page (one row group of 100,000: written 1.6x slower, read
# 1.5x slower, 4.5% smaller, measured on a file of 100,000 documents x 3 metrics).
DOCUMENTS_PER_ROW_GROUP = 16_384


def document_file_stem(profile: str, system: str) -> str:
    """The name every per-document file of a (profile, system) starts with:
    `part-` and 16 hex digits of a stable hash of both (a name from the system's
    own would hold any character the input holds)."""
    return f"part-{stable_hash(profile + chr(31) + system):016x}"


def per_document_writer(staging: str, formats: tuple, profiles: list[Profile], files_per_system: int = 0):
    """The writer of one (profile, system)'s per-document files: ((profile, system),
    [(doc_id, values, digest), ...]) -> the files' names (without extension).

    per_document/part-<stem>-NNNNN-of-MMMMM.parquet (and .csv, .jsonl on request):
    one row per (profile, system, doc_id, metric), sorted by doc_id and the
    profile's metric order, in MMMMM files of consecutive documents
    (`files_per_system`, or one per DOCUMENTS_PER_FILE documents).  A
    (profile, system)'s files depend on its rows alone, so a later run whose
    system did not change can copy them (`run --reuse`, pipeline.reuse).  Each
    file's columns are built from the documents' values (float64 bytes of a
    (metrics, 6) array each) stacked into arrays, with no Python object per cell
    (`document_column_parts`)."""
    tags = {p.name: p.tags for p in profiles}
    order = {p.name: i for i, p in enumerate(profiles)}

    def write(element) -> list[str]:
        (profile, system), documents = element
        count = len(documents)
        parts = files_per_system or max(1, -(-count // DOCUMENTS_PER_FILE))
        stem = files.join(staging, "per_document", document_file_stem(profile, system))
        written = []
        for j, columns in enumerate(document_column_parts(documents, tags, order, (profile, system), parts)):
            name = f"{stem}-{j:05d}-of-{parts:05d}"
            write_document_files(name, columns, formats, len(tags[profile]))
            written.append(name)
        return written

    return write


def write_document_files(name: str, columns: dict, formats: tuple, metrics: int) -> None:
    """`name`.parquet (and .csv, .jsonl when `formats` asks) of some per-document columns
    (`metrics` rows per document: DOCUMENTS_PER_ROW_GROUP documents a row group)."""
    files.write_bytes(name + ".parquet", parquet_columns_bytes(columns, DOCUMENT_COLUMNS, DOCUMENTS_PER_ROW_GROUP * metrics))
    if "csv" in formats or "jsonl" in formats:
        cells = zip(*(c.to_pylist() for c in columns.values()))
        rows = [dict(zip(columns, row)) for row in cells]
        if "csv" in formats:
            files.write_bytes(name + ".csv", csv_text(rows, names(DOCUMENT_COLUMNS)).encode("utf-8"))
        if "jsonl" in formats:
            files.write_bytes(name + ".jsonl", jsonl_bytes(rows))


def document_batches(source, metrics: int, columns: list[str], documents: int = DOCUMENTS_PER_ROW_GROUP,
                     most_rows: Optional[int] = None):
    """A per-document Parquet file (a path or URL, or a seekable binary file object) as Arrow
    tables of `columns`, `documents` whole documents each (the last fewer; `metrics`
    rows a document): read within the bounds of a result folder's tables
    (pipeline.io.rows.bounded_batches: the file may be a previous run's, untrusted;
    TableBoundError; at most `most_rows` rows, when given), whatever the file's row groups."""
    import pyarrow as pa  # noqa: PLC0415

    size = documents * metrics
    held, rows = [], 0
    with files.open_read(source) if isinstance(source, str) else contextlib.nullcontext(source) as fh:
        # (batches of a part's size, as before the bounds: batches of 65,536 rows, held by the 11 files
        # `--reuse` reads side by side, took its peak from 470 to 530 MB)
        for batch in bounded_batches(fh, columns, MAX_CELL_BYTES, STREAMED_TABLE_BYTES, most_rows, batch_rows=size):
            held.append(batch)
            rows += batch.num_rows
            while rows >= size:
                table = pa.Table.from_batches(held)
                yield table.slice(0, size)
                held, rows = table.slice(size).to_batches(), rows - size
    if rows:
        yield pa.Table.from_batches(held)


def parquet_rows(path: str) -> int:
    """The rows of a Parquet file (a path or URL), as its footer says."""
    return parquet_footer(path)[1]


CHUNK_KEY_MOST_BYTES = 64 << 20  # a column chunk's bytes `column_key` hashes (more: None, the column is decoded)


def column_key(path: str, column: str) -> tuple[int, Optional[tuple]]:
    """(rows, a key of `column`'s values) of a Parquet file (a path or URL): per row
    group its rows, the column chunk's type, codec, encodings, values, page offsets
    (from the chunk's start) and the SHA-256 of its bytes, what its decoded values
    are a function of.  Two files of equal keys hold equal values in that column
    (the significance tests of `run --reuse` line up the systems' per-document files
    so, without decoding their doc_ids: a file equal to one this run wrote is
    within every bound that file is).  The key is None when the column is not a
    flat column of the file, a chunk lies elsewhere or is over CHUNK_KEY_MOST_BYTES."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    with files.open_read(path) as fh:
        meta = pq.ParquetFile(fh).metadata
        leaves = [meta.schema.column(i).path for i in range(meta.num_columns)]
        if leaves.count(column) != 1:
            return meta.num_rows, None
        index, key = leaves.index(column), []
        for group in range(meta.num_row_groups):
            chunk = meta.row_group(group).column(index)
            start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
            size = chunk.total_compressed_size
            if chunk.file_path or start is None or start < 4 or not 0 <= size <= CHUNK_KEY_MOST_BYTES:
                return meta.num_rows, None
            fh.seek(start)
            read, sha256 = files.hashed_copy(fh, length=size)
            if read != size:
                return meta.num_rows, None
            key.append((meta.row_group(group).num_rows, chunk.physical_type, chunk.compression, chunk.encodings,
                        chunk.num_values, chunk.data_page_offset - start, size, sha256))
        return meta.num_rows, tuple(key)


def parquet_footer(path: str) -> tuple:
    """(Arrow schema, rows) of a Parquet file (a path or URL), as its footer says."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    with files.open_read(path) as fh:
        parquet = pq.ParquetFile(fh)
        return parquet.schema_arrow, parquet.metadata.num_rows


DOCUMENT_CHUNK = 32_768  # documents whose columns are built at a time (their temporaries then freed)
NO_DIGEST = bytes(16)  # rows made without their digests (tests)


def document_columns(documents: list, tags: dict, order: dict, key: Optional[tuple] = None) -> dict:
    """The per-document table's columns of some rows, sorted by (order[profile],
    system, doc_id), in one part: `document_column_parts`."""
    return next(document_column_parts(documents, tags, order, key))


def document_column_parts(documents: list, tags: dict, order: dict, key: Optional[tuple] = None, parts: int = 1):
    """The per-document table's columns of (profile, system, doc_id, values, digest)
    rows (or ScoredDocuments; without a digest, 0s), or with `key` = (profile,
    system) that one's (doc_id, values, digest) rows, sorted by (order[profile],
    system, doc_id), in `parts` parts of consecutive documents (as equal as they
    divide), each a dict of Arrow chunked arrays: each text column taken in sorted
    order from an Arrow array built once, the number columns the documents' values
    (float64 bytes of a (metrics, 6) array each) and digests (16 bytes: two
    little-endian int64) joined in that order, with no Python object per cell.
    Arrow sorts (a Python sort of tuples cost 3 us a row): it compares UTF-8 bytes,
    which orders as Python orders code points (no surrogate reaches here: reading
    refuses them).  The columns are made DOCUMENT_CHUNK sorted documents at a time,
    so the joined values and the index arrays of a chunk are freed before the next
    (made for a whole shard at once, they added 25-30 MB to the peak memory of
    writing a shard of 80,000 documents, 15 MB to a whole run's; no CPU saved or
    lost), and a part's arrays are made only when it is asked for; Parquet writes
    the chunks as the one row group it writes of a whole column, byte for byte."""
    import pyarrow as pa  # noqa: PLC0415 (optional: only Parquet needs it)
    import pyarrow.compute as pc  # noqa: PLC0415

    names = sorted(order, key=order.get)
    count = len(documents)
    if key is None:
        profiles, systems, doc_ids, values = ([row[k] for row in documents] for k in range(4))  # (zip(*rows): 4x slower)
        digests = [row[4] if len(row) > 4 else NO_DIGEST for row in documents]
    else:
        doc_ids, values, digests = ([row[k] for row in documents] for k in range(3))
        profiles, systems = [key[0]] * count, [key[1]] * count
    index = {name: i for i, name in enumerate(names)}
    profile = np.fromiter(map(index.__getitem__, profiles), dtype=np.int64, count=count)
    system, doc_id = pa.array(systems, pa.string()), pa.array(doc_ids, pa.string())
    if key is None:
        keys = [("profile", "ascending"), ("system", "ascending"), ("doc_id", "ascending")]
        ranked = pc.sort_indices(pa.table({"profile": profile, "system": system, "doc_id": doc_id}), sort_keys=keys)
    else:
        ranked = pc.sort_indices(doc_id)
    ranked = ranked.to_numpy()
    tag_counts = np.array([len(tags[name]) for name in names], dtype=np.int64)
    first_tag = np.cumsum(tag_counts) - tag_counts  # of each profile's tags in `every_tag`
    every_tag = pa.array([tag for name in names for tag in tags[name]], pa.string())
    profile_names = pa.array(names, pa.string())
    # MetricStats fields: reference total, candidate total, hits, R, P, F
    fields = {"recall": 3, "precision": 4, "f_measure": 5, "hits": 2, "reference_total": 0, "candidate_total": 1}
    kinds = {**dict.fromkeys(("profile", "system", "doc_id", "metric"), pa.string()), **dict.fromkeys(fields, pa.float64()),
             "candidate_digest": pa.int64(), "references_digest": pa.int64()}
    for part in range(parts):
        chunks: dict = {name: [] for name in kinds}
        for start in range(part * count // parts, (part + 1) * count // parts, DOCUMENT_CHUNK):
            these = ranked[start : min(start + DOCUMENT_CHUNK, (part + 1) * count // parts)]
            per_doc = tag_counts[profile][these]
            each = np.repeat(these, per_doc)  # the document of each row
            within = np.arange(len(each), dtype=np.int64) - np.repeat(np.cumsum(per_doc) - per_doc, per_doc)  # its metric
            listed = these.tolist()
            stacked = np.frombuffer(b"".join([values[i] for i in listed]), dtype=np.float64).reshape(-1, 6)
            by_field = np.ascontiguousarray(stacked.T)  # a column each (Arrow copies a strided column one value at a time)
            digest = np.frombuffer(b"".join([digests[i] for i in listed]), dtype="<i8").reshape(-1, 2)
            taken = pa.array(each)
            chunks["profile"].append(profile_names.take(pa.array(profile[each])))
            chunks["system"].append(system.take(taken))
            chunks["doc_id"].append(doc_id.take(taken))
            chunks["metric"].append(every_tag.take(pa.array(first_tag[profile[each]] + within)))
            for name, k in fields.items():
                chunks[name].append(pa.array(by_field[k]))
            chunks["candidate_digest"].append(pa.array(np.repeat(digest[:, 0], per_doc)))
            chunks["references_digest"].append(pa.array(np.repeat(digest[:, 1], per_doc)))
        yield {name: pa.chunked_array(pieces, type=kinds[name]) for name, pieces in chunks.items()}


def parquet_columns_bytes(columns: dict, schema_columns: list[tuple[str, str]], row_group_size: Optional[int] = None) -> bytes:
    """A Parquet file of whole columns (lists, arrays or Arrow arrays), in the
    schema's order and types (in row groups of `row_group_size` rows, when given)."""
    import pyarrow as pa  # noqa: PLC0415 (optional: only Parquet needs it)
    import pyarrow.parquet as pq  # noqa: PLC0415

    schema = arrow_schema(schema_columns)
    arrays = [
        c.cast(f.type) if isinstance(c := columns[f.name], (pa.Array, pa.ChunkedArray)) else pa.array(c, type=f.type)
        for f in schema
    ]
    table = pa.Table.from_arrays(arrays, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=row_group_size)
    return sink.getvalue()


def _sort_key(e: ErrorRecord):
    return (
        e.source,
        -1 if e.position is None else e.position,
        e.reason,
        e.system or "",
        e.doc_id or "",
        e.message,
    )


class ErrorFileWriter:
    """The errors table's part for one input file, `errors/file-<hash of path>.{jsonl,parquet}`,
    written as the file is read, in its order, in batches: memory stays bounded
    however many rows are bad.  Opened at the first error (a clean file writes
    nothing); a retried read rewrites the same bytes."""

    BATCH = 10_000

    def __init__(self, folder: str, source: str):
        self.name = files.join(folder, "errors", f"file-{stable_hash(source):016x}")
        self.by_reason: Counter = Counter()
        self.pending: list[dict] = []
        self.jsonl = self.parquet = self.parquet_file = None

    def add(self, error: ErrorRecord) -> None:
        self.by_reason[error.reason] += 1
        self.pending.append(dict(zip(ERROR_COLUMNS, error)))
        if len(self.pending) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        import pyarrow as pa  # noqa: PLC0415 (optional: only Parquet needs it)
        import pyarrow.parquet as pq  # noqa: PLC0415

        schema = arrow_schema(ERROR_TABLE_COLUMNS)
        if self.jsonl is None:
            self.jsonl = files.create(self.name + ".jsonl")
            self.parquet_file = files.create(self.name + ".parquet")
            self.parquet = pq.ParquetWriter(self.parquet_file, schema)
        self.jsonl.write(jsonl_bytes(self.pending))
        self.parquet.write_table(pa.Table.from_pylist(self.pending, schema=schema))
        self.pending = []

    def close(self) -> None:
        self._flush()
        if self.jsonl is not None:
            self.jsonl.close()
            self.parquet.close()
            self.parquet_file.close()


FINGERPRINTS = "_fingerprints"


def write_fingerprint(staging: str, path: str, digest: dict, rows: Optional[int] = None, errors: int = 0,
                      systems: Optional[dict] = None) -> None:
    """`_fingerprints/file-<hash of path>.json`: the size and SHA-256 of the bytes a
    reader read from `path` (hashed while reading), for run.json; a retried read
    rewrites it.  With `rows`, also the rows read, the error rows among them and
    (a candidate file) the good rows of each system: what tells a later run which
    systems a file it finds unchanged holds (`run --reuse`, pipeline.reuse)."""
    name = files.join(staging, FINGERPRINTS, f"file-{stable_hash(path):016x}.json")
    record = {"path": path, **digest}
    if rows is not None:
        record.update(rows=rows, errors=errors, systems=dict(sorted((systems or {}).items())))
    files.write_bytes(name, json.dumps(record, sort_keys=True).encode("utf-8"))


def read_fingerprints(staging: str) -> dict[str, dict]:
    """{path: fingerprint} of every `write_fingerprint` in `staging`."""
    found = files.match(files.join(staging, FINGERPRINTS, "file-*.json"))
    out = {}
    for name in found:
        record = json.loads(files.read_bytes(name).decode("utf-8"))
        out[record["path"]] = record
    return out


def errors_writer(staging: str):
    """errors/part-NNNNN-of-MMMMM.{parquet,jsonl}: the rows that failed after reading
    (grouping, scoring), sorted by source and position within each shard; a shard
    with no rows has its .parquet (a schema) and no .jsonl.  (Rows that failed while
    being read are in errors/file-*, written by their reader.)"""

    def write(shard: int, shards: int, errors: list):
        rows = [dict(zip(ERROR_COLUMNS, e)) for e in sorted(errors, key=_sort_key)]
        name = files.join(staging, "errors", f"part-{shard:05d}-of-{shards:05d}")
        files.write_bytes(name + ".parquet", parquet_bytes(rows, ERROR_TABLE_COLUMNS))
        if rows:  # an empty JSON Lines file is 0 bytes, which Beam's S3 writer cannot create: not written
            files.write_bytes(name + ".jsonl", jsonl_bytes(rows))
        return name

    return write


def run_counts(
    _,
    read_counts: tuple,
    scored: int,
    errors_by_reason: list,
    reference_rows: int,
    reference_rows_unused: int,
    human_documents: int,
    documents: int,
    documents_by_system: list,
    errors_by_system: list = (),
    text_checks: list = (),
    references_per_document: tuple | None = None,
    reuse: Optional[list] = None,
) -> dict:
    """The run's counts, for run.json and the per-system table.  Systems that scored
    fewer than all documents are listed: their averages are over different document
    sets.  A run reusing a previous one also has "reuse": its (name, value) counts
    (pipeline.reuse.REUSE_COUNTS) summed per name, the messages of "refused" listed."""
    by_system = dict(sorted(documents_by_system))
    rows_read, read_errors = read_counts
    by_reason = Counter(read_errors) + Counter(dict(errors_by_reason))
    counts = {
        "rows_read": rows_read,
        "scored": scored,
        "errors": sum(by_reason.values()),
        "errors_by_reason": dict(sorted(by_reason.items())),
        "reference_rows": reference_rows,
        "reference_rows_unused": reference_rows_unused,
        "human_documents": human_documents,
        "documents": documents,
        "documents_by_system": by_system,
        "systems_missing_documents": missing_documents(by_system, documents),
        "errors_by_system": dict(sorted(errors_by_system)),
        # {owner: {kind: {"texts": n, "example": doc_id}}} (pipeline.coverage.TextTally)
        "text_checks": _text_checks(text_checks),
        # [fewest, most] references of a scored document: the signature's nrefs
        "references_per_document": None if references_per_document is None else list(references_per_document),
    }
    if reuse is not None:
        summed: dict = {"rows_reused": 0, "carried_scored": 0, "carried_documents": 0, "carry_violations": 0, "refused": []}
        for name, value in reuse:
            summed[name] += [value] if name == "refused" else value
        counts["reuse"] = dict(summed, refused=sorted(summed["refused"]))
    return counts


def write_counts(counts: dict, staging: str) -> None:
    """`_counts.json`, which the driver reads after the pipeline."""
    files.write_bytes(files.join(staging, "_counts.json"), json.dumps(counts, indent=1).encode("utf-8"))


def missing_documents(by_system: dict, documents: int) -> dict:
    """{system: documents it did not score} of the systems that scored fewer than all."""
    return {s: documents - n for s, n in by_system.items() if n < documents}


def read_parquet_table(path: str, columns: Optional[list[str]] = None):
    """A Parquet file (local or URL) as an Arrow table (of `columns` only, when given)."""
    return read_parquet_table_bytes(files.read_bytes(path), columns)


def read_parquet_table_bytes(data: bytes, columns: Optional[list[str]] = None):
    """A Parquet file's bytes as an Arrow table (of `columns` only, when given)."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    return pq.read_table(io.BytesIO(data), columns=columns)


def read_parquet_rows(path: str) -> list[dict]:
    """A Parquet file (local or URL) as dicts."""
    return read_parquet_table(path).to_pylist()


def read_system_rows(folder: str) -> list[dict]:
    """system_scores.parquet of a result folder as dicts."""
    return read_parquet_rows(files.join(folder, "system_scores.parquet"))


def read_json(path: str) -> Optional[dict]:
    return json.loads(files.read_bytes(path).decode("utf-8"))


def _text_checks(tallies) -> dict:
    out: dict = {}
    for (owner, kind), (n, example) in sorted(tallies):
        out.setdefault(owner, {})[kind] = {"texts": n, "example": example}
    return out
