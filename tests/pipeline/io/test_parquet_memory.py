"""Memory is bounded by what is decoded, for every Parquet encoding (issue 22): a
50-200 KB file whose dictionary-encoded column decodes to gigabytes took 4-7 GB.
Each case reads in a child process whose peak memory (VmHWM) is reported;
the files decode to at least 1.5 GB, and the reader must stay far below that."""

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

LIMIT_MB = 400  # the interpreter with pyarrow is about 100 MB; the bombs decode to >= 1,500 MB
ROWS = 3000
BIG = "x " * 250_000  # 500 KB, within the default max_text_bytes (1,000,000)

READ = """
import json, sys
from collections import Counter
from pipeline.config import InputConfig
from pipeline.io.rows import iter_rows, used_fields
def peak_mb():
    # VmHWM: this process image's peak resident memory (ru_maxrss would include the
    # parent's at fork time, which built the file)
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) // 1024
config = InputConfig()
reasons, messages, rows = Counter(), [], 0
for item in iter_rows(sys.argv[1], config, used_fields(config)):
    reason = getattr(item, "reason", None)
    if reason:
        reasons[reason] += 1
        messages.append(item.message)
    else:
        rows += 1
print(json.dumps({"rows": rows, "reasons": reasons, "first": messages[:1],
                  "mb": peak_mb()}))
"""


def read_in_child(path):
    done = subprocess.run([sys.executable, "-c", READ, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def repeated(text, rows):
    """One value, dictionary-encoded: `rows` indices into a one-entry dictionary."""
    return pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array([text]))


def keys(rows):
    return {"system": pa.array(["s"] * rows), "doc_id": pa.array([f"d{i}" for i in range(rows)])}


def test_a_dictionary_column_that_decodes_to_gigabytes(tmp_path):
    """Every row's candidate is one 1 MB text, over the limit: the file is small and
    3 GB would be decoded."""
    table = pa.table({**keys(ROWS), "candidate": repeated(BIG + BIG + "y", ROWS),
                      "references": pa.array([["a reference"]] * ROWS, pa.list_(pa.string()))})
    path = tmp_path / "dictionary.parquet"
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < 300_000
    result = read_in_child(path)
    print(f"dictionary: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["reasons"] == {"text_too_long": ROWS} and result["rows"] == 0
    assert "field 'candidate' decodes to 1000001 bytes, over input.max_text_bytes (1000000)" in result["first"][0]
    assert result["mb"] < LIMIT_MB


def test_rows_within_the_limit_share_one_decoded_dictionary_value(tmp_path):
    """Within the limit, a dictionary value is decoded once and shared: 3000 rows of a
    500 KB candidate (1.5 GB as separate strings) are read in bounded memory."""
    small = 1000
    table = pa.table({**keys(small), "candidate": repeated(BIG, small),
                      "references": pa.array([["a reference"]] * small, pa.list_(pa.string()))})
    path = tmp_path / "shared.parquet"
    pq.write_table(table, path, compression="zstd")
    result = read_in_child(path)
    print(f"shared: peak {result['mb']} MB")
    assert result["rows"] == small and not result["reasons"]


def test_a_run_length_encoded_list_of_a_hundred_million_empty_strings(tmp_path):
    """Repetition levels run-length encode 10**8 empty references in a few hundred KB;
    their offsets alone would take 800 MB. Refused from the metadata, unread."""
    per_row = 33_334
    inner = pa.array([""] * per_row)
    one = pa.ListArray.from_arrays(pa.array([0, per_row], pa.int32()), inner)
    rows = 3000
    table = pa.table({**keys(rows), "candidate": pa.array(["c"] * rows), "references": one.take([0] * rows)})
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path, compression="zstd")
    result = read_in_child(path)
    print(f"nested: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["reasons"] == {"text_too_long": rows}
    assert "of list column 'references' for 3000 row(s)" in result["first"][0]
    assert "over the reader's bound of 1024 MiB" in result["first"][0]
    assert result["mb"] < LIMIT_MB


def test_compressed_plain_pages_that_expand_are_refused_from_the_metadata(tmp_path):
    """Plain (not dictionary) pages of 2 MB texts, compressed a thousand-fold."""
    rows = 800
    texts = pa.array(["z" * 2_000_000] * rows)
    table = pa.table({**keys(rows), "candidate": texts, "references": pa.array([["r"]] * rows, pa.list_(pa.string()))})
    path = tmp_path / "plain.parquet"
    pq.write_table(table, path, compression="zstd", use_dictionary=False, row_group_size=100)
    result = read_in_child(path)
    print(f"plain: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["reasons"] == {"text_too_long": rows}
    assert result["mb"] < LIMIT_MB


def test_a_dictionary_page_that_decodes_to_gigabytes_is_refused_from_its_header(tmp_path):
    """400 distinct 900 KB texts in one dictionary page (each row within the limit,
    so no row is too long): 28 KB on disk, a 360 MB dictionary that Arrow took 1.5 GB
    (and the reader 2.5 GB) to decode.  Refused from the page header, unread, for a
    text column and for the texts of a list column; the column is named."""
    rows = 3000
    texts = pa.array(["y" * 899_994 + f"{i:06d}" for i in range(400)])
    indices = pa.array([i % 400 for i in range(rows)], pa.int32())
    bomb = pa.DictionaryArray.from_arrays(indices, texts)
    cases = {
        "candidate": {"candidate": bomb, "references": pa.array([["r"]] * rows, pa.list_(pa.string()))},
        "references": {"candidate": pa.array(["c"] * rows),
                       "references": pa.ListArray.from_arrays(pa.array(range(rows + 1), pa.int32()), bomb)},
    }
    for column, values in cases.items():
        path = tmp_path / f"{column}.parquet"
        pq.write_table(pa.table({**keys(rows), **values}), path, compression="zstd", dictionary_pagesize_limit=1 << 31)
        assert path.stat().st_size < 100_000
        result = read_in_child(path)
        print(f"dictionary page of {column}: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
        assert result["reasons"] == {"text_too_long": rows} and result["rows"] == 0
        # 400 values of 900,000 bytes and a 4-byte length each
        assert result["first"][0].startswith(
            f"row group 0, column {column!r}: its dictionary decodes to 360001600 bytes (400 value(s)), over "
            "the reader's bound of 64 MiB a page; not read"), result["first"]
        assert result["mb"] < LIMIT_MB


def distinct_texts(rows, length):
    """`rows` distinct texts of `length` bytes, built in one buffer (no Python strings)."""
    data = bytearray(b"q" * (rows * length))
    for i in range(rows):
        data[i * length : i * length + 8] = b"%08d" % i
    offsets = pa.array(range(0, rows * length + 1, length), pa.int32())
    return pa.StringArray.from_buffers(rows, offsets.buffers()[1], pa.py_buffer(data))


def test_a_data_page_that_decodes_to_a_gigabyte_is_refused_from_its_header(tmp_path):
    """pyarrow cuts a page only after a write batch (1,024 values): 1,100 distinct texts
    of 990 KB (each within the limit) make a 110 KB file whose first page decodes to
    1 GB, which Arrow took 1-2.5 GB to read.  Refused from the page header, unread."""
    rows = 1100
    table = pa.table({**keys(rows), "candidate": distinct_texts(rows, 990_000),
                      "references": pa.array([["r"]] * rows, pa.list_(pa.string()))})
    path = tmp_path / "page.parquet"
    pq.write_table(table, path, compression="zstd", use_dictionary=False)
    del table
    assert path.stat().st_size < 300_000
    result = read_in_child(path)
    print(f"page: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["reasons"] == {"text_too_long": rows} and result["rows"] == 0
    # 1,024 texts of 990,000 bytes, each with its 4-byte length, after the definition
    # levels: a 4-byte length and one run (a 2-byte header, 1024 << 1, and the level)
    assert result["first"][0].startswith(
        "row group 0, column 'candidate': a page decodes to 1013764103 bytes, over the reader's bound of 64 MiB a "
        "page; not read"), result["first"]
    assert result["mb"] < LIMIT_MB


def test_a_large_row_group_of_plain_pages_is_read_page_by_page(tmp_path):
    """A 300 MB row group of distinct texts in small plain pages is a fair file: read
    whole, in bounded memory: measured 351 MB.  (Read as a dictionary, as every text
    column was, Arrow hashed the whole row group into one: 1,628 MB here, 10 GB for a
    2 GB row group.)"""
    rows = 1000
    table = pa.table({**keys(rows), "candidate": distinct_texts(rows, 300_000),
                      "references": pa.array([["r"]] * rows, pa.list_(pa.string()))})
    path = tmp_path / "fair.parquet"
    pq.write_table(table, path, compression="zstd", use_dictionary=False, write_batch_size=32)
    del table
    result = read_in_child(path)
    print(f"fair: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["rows"] == rows and not result["reasons"]
    assert result["mb"] < 2 * LIMIT_MB
