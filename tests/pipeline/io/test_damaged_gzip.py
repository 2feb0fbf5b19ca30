"""A damaged compressed file keeps every row decoded before the damage, and counts
the loss (issue 22): trailing garbage used to drop the rows of the last block."""

import gzip
import json
import zlib

from pipeline.config import InputConfig
from pipeline.io.rows import iter_rows, used_fields
from pipeline.records import ErrorRecord, SourceRow

ROWS = [{"system": "s", "doc_id": f"d{i}", "candidate": "a b c " * 50, "references": ["a b d"]} for i in range(3000)]
TEXT = "".join(json.dumps(r) + "\n" for r in ROWS).encode()


def read(path):
    config = InputConfig()
    return list(iter_rows(str(path), config, used_fields(config)))


def test_trailing_garbage_keeps_every_row_and_says_so(tmp_path):
    path = tmp_path / "g.jsonl.gz"
    path.write_bytes(gzip.compress(TEXT) + b"garbage after the last member")
    items = read(path)
    assert [i.row["doc_id"] for i in items if isinstance(i, SourceRow)] == [r["doc_id"] for r in ROWS]
    [error] = [i for i in items if isinstance(i, ErrorRecord)]
    assert error.reason == "unreadable_file" and "after 3000 rows" in error.message


def test_a_truncated_file_keeps_the_rows_decodable_before_the_cut(tmp_path):
    packed = gzip.compress(TEXT)
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])
    # Independently: what zlib can decode from the same prefix, and its whole lines.
    prefix = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(packed[: len(packed) // 2])
    whole_lines = prefix.count(b"\n")
    items = read(path)
    rows = [i for i in items if isinstance(i, SourceRow)]
    assert len(rows) == whole_lines
    cut = [i for i in items if isinstance(i, ErrorRecord) and i.reason == "invalid_json"]
    assert len(cut) == (1 if not prefix.endswith(b"\n") else 0)  # the line cut by the damage: counted
    assert items[-1].reason == "unreadable_file"
    assert f"after {whole_lines + len(cut)} rows" in items[-1].message
