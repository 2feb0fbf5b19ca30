"""Unattended safety, round 4 (issue 31): memory bounded by the limits, never by an
average or by what a file claims.  Each case runs in a child process and measures
its peak resident memory (VmHWM of the reading child, or os.wait4's rusage of a
command), against a bound far below what the file decodes to (what the earlier
code reached is in each docstring).

Classes: Parquet (skewed rows in an honest row group; a footer understating a
column's size; DELTA_BYTE_ARRAY pages); judgments (a gzip bomb of one line, a
Parquet column that decodes to gigabytes, more rows than meta-eval reads whole);
references (one document whose rows repeat large references); many systems
(significance of every pair past its bound, and against a baseline).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.pipeline.io.test_parquet_memory import read_in_child
from tests.pipeline.test_hostile_round4 import measured, pipeline_command
from tests.pipeline.runs import write_jsonl

def texts(values: list, repeat: list) -> pa.Array:
    """`values[k]` repeated `repeat[k]` times, as one string array (built in Arrow)."""
    return pa.array(values).take(pa.array(np.repeat(np.arange(len(values)), repeat)))


# -------------------------------------------------------------------------- Parquet


def test_skewed_rows_in_an_honest_row_group_are_read_a_page_at_a_time(tmp_path):
    """10,000 one-byte rows, then 30 rows of 50 MiB (each page under the 64 MiB page
    bound), peaked at 3,958 MB in `score`: the batch size came from the row group's
    average row size, so one batch held every large page.  Batches now come from the
    pages their rows lie in.  (Here 10,000 rows and 6 of 40 MiB: 240 MB of text.)"""
    small, large, size = 10_000, 6, 40 << 20
    rows = small + large
    table = pa.table({
        "system": pa.array(["s"] * rows), "doc_id": pa.array([f"d{i}" for i in range(rows)]),
        "candidate": texts(["x", "word " * (size // 5)], [small, large]),
        "references": pa.array([["x"]] * rows, pa.list_(pa.string())),
    })
    path = tmp_path / "skewed.parquet"
    pq.write_table(table, path, compression="zstd", use_dictionary=False, write_batch_size=1, row_group_size=rows)
    del table
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    result = read_in_child(path)
    print(f"skewed: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["rows"] == small and result["reasons"] == {"text_too_long": large}
    assert result["first"][0] == ("field 'candidate' decodes to 41943040 bytes, over input.max_text_bytes (1000000); "
                                  "the row is not used")
    assert result["mb"] < 300  # the earlier reader: every large row in one batch, twice (Arrow, Python)


class FooterRewrite:
    """A Parquet footer (Thrift compact protocol) copied field by field, with every
    column chunk of `column` claiming `claimed` uncompressed bytes
    (ColumnMetaData.total_uncompressed_size): what a hostile writer can say."""

    NESTED = {("file", 4): "group", ("group", 1): "chunk", ("chunk", 3): "meta"}

    def __init__(self, data: bytes, column: str, claimed: int):
        self.data, self.pos, self.out = data, 0, bytearray()
        self.column, self.claimed = column, claimed
        self.struct("file")
        assert self.pos == len(data)

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        self.out.append(b)
        return b

    def varint(self) -> int:
        shift = n = 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    def struct(self, where: str) -> None:
        field, path = 0, None
        while True:
            b = self.byte()
            kind, delta = b & 0x0F, b >> 4
            if kind == 0:
                return
            if delta:
                field += delta
            else:
                z = self.varint()
                field = (z >> 1) ^ -(z & 1)
            if where == "meta" and field == 3:
                path = self.strings()
            elif where == "meta" and field == 6 and path == [self.column]:
                while self.data[self.pos] & 0x80:  # (the old value is dropped, the claimed one written)
                    self.pos += 1
                self.pos += 1
                z = self.claimed << 1
                while True:
                    self.out.append((z & 0x7F) | (0x80 if z >> 7 else 0))
                    z >>= 7
                    if not z:
                        break
            else:
                self.value(kind, self.NESTED.get((where, field)))

    def strings(self) -> list:
        header = self.byte()
        size = header >> 4 if header >> 4 != 15 else self.varint()
        found = []
        for _ in range(size):
            n = self.varint()
            found.append(self.data[self.pos : self.pos + n].decode())
            self.out += self.data[self.pos : self.pos + n]
            self.pos += n
        return found

    def value(self, kind: int, inner) -> None:
        if kind in (1, 2):
            return
        if kind == 3:
            self.byte()
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            for _ in range(8):
                self.byte()
        elif kind == 8:
            n = self.varint()
            self.out += self.data[self.pos : self.pos + n]
            self.pos += n
        elif kind in (9, 10):
            header = self.byte()
            size = header >> 4 if header >> 4 != 15 else self.varint()
            for _ in range(size):
                self.byte() if header & 0x0F in (1, 2) else self.value(header & 0x0F, inner)
        elif kind == 11:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.value(types >> 4, None)
                    self.value(types & 0x0F, None)
        elif kind == 12:
            self.struct(inner)
        else:
            raise ValueError(kind)


def understate(path: Path, column: str, claimed: int) -> None:
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer = FooterRewrite(data[-8 - length : -8], column, claimed).out
    path.write_bytes(data[: -8 - length] + bytes(footer) + len(footer).to_bytes(4, "little") + b"PAR1")


def test_a_footer_that_understates_a_column_does_not_skip_the_page_headers(tmp_path):
    """A footer saying 300 bytes for three 200 MiB pages skipped the page-header walk
    (2,075 MB), and the rows were rejected as "not decoded" after being decoded.
    Every header is read now: the pages are refused from their headers, unread.
    (Here three pages of 70 MiB, over the 64 MiB page bound.)"""
    rows = 3
    table = pa.table({"system": pa.array(["s"] * rows), "doc_id": pa.array(["a", "b", "c"]),
                      "candidate": texts(["z" * (70 << 20)], [rows]),
                      "references": pa.array([["r"]] * rows, pa.list_(pa.string()))})
    path = tmp_path / "lying.parquet"
    pq.write_table(table, path, compression="zstd", use_dictionary=False, write_batch_size=1)
    del table
    understate(path, "candidate", 300)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(2)
    assert chunk.path_in_schema == "candidate" and chunk.total_uncompressed_size == 300  # (the lie is read)
    result = read_in_child(path)
    print(f"lying footer: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["reasons"] == {"text_too_long": rows} and result["rows"] == 0
    assert result["first"][0].startswith("row group 0, column 'candidate': a page decodes to 73400330 bytes, over "
                                         "the reader's bound of 64 MiB a page; not read"), result["first"]
    assert result["mb"] < 200


def test_a_delta_byte_array_page_is_refused(tmp_path):
    """DELTA_BYTE_ARRAY keeps each value as a prefix of the one before plus a suffix:
    a page of a few KB can decode to gigabytes, which no header tells."""
    rows = 400
    table = pa.table({"system": pa.array(["s"] * rows), "doc_id": pa.array([f"d{i}" for i in range(rows)]),
                      "candidate": texts(["q" * 900_000], [rows]),
                      "references": pa.array([["r"]] * rows, pa.list_(pa.string()))})
    path = tmp_path / "delta.parquet"
    pq.write_table(table, path, use_dictionary=False, column_encoding={"candidate": "DELTA_BYTE_ARRAY"})
    result = read_in_child(path)
    print(f"delta: {path.stat().st_size} bytes on disk, peak {result['mb']} MB")
    assert result["reasons"] == {"text_too_long": rows}
    assert "a page is DELTA_BYTE_ARRAY-encoded" in result["first"][0]
    assert result["mb"] < 200


def test_honest_row_groups_read_as_before(tmp_path):
    """Every header read costs nothing in the numbers: an honest file with several row
    groups and pages gives every row, as Arrow reads them."""
    rows = 5000
    table = pa.table({"system": pa.array([f"s{i % 3}" for i in range(rows)]),
                      "doc_id": pa.array([f"d{i}" for i in range(rows)]),
                      "candidate": pa.array([f"text {i} " * (i % 50 + 1) for i in range(rows)]),
                      "references": pa.array([[f"ref {i}", "other"] for i in range(rows)], pa.list_(pa.string()))})
    path = tmp_path / "honest.parquet"
    pq.write_table(table, path, row_group_size=700, data_page_size=4096)
    from pipeline.config import InputConfig
    from pipeline.io.rows import iter_rows, used_fields

    read = [item.row for item in iter_rows(str(path), InputConfig(), used_fields(InputConfig()))]
    assert read == table.to_pylist()


# ------------------------------------------------------------------------ judgments


@pytest.fixture
def scores(tmp_path):
    rows = [{"system": s, "doc_id": d, "ROUGE-1": 0.1 * i + 0.01 * j} for i, s in enumerate("abc")
            for j, d in enumerate(["d1", "d2", "d3"])]
    return write_jsonl(tmp_path / "scores.jsonl", rows)


def meta_eval(scores, judgments):
    return measured(pipeline_command("meta-eval", "--metric-scores", str(scores), "--judgments", str(judgments),
                                     "--replicates", "0"), timeout=300)


def refused_in_bounded_memory(scores, judgments, message):
    """meta-eval refuses the judgments (exit 2) with `message`, in bounded memory."""
    code, _, err, peak = meta_eval(scores, judgments)
    print(f"{judgments.name}: peak {peak:.0f} MiB")
    assert code == 2 and message in err, err
    assert 0 < peak < 300


def test_a_judgments_gzip_of_one_endless_line_is_refused_in_bounded_memory(tmp_path, scores):
    """meta-eval's JSON Lines reader had no line bound: one 1.5 GB line in a 1.5 MB
    gzip went past 2.5 GB.  It reads with `run`'s bounds: input.max_line_bytes a line
    (64 MiB), streamed.  (Here a 300 MB line.)"""
    path = tmp_path / "judgments.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(b'{"system": "a", "doc_id": "')
        chunk = b"x" * (1 << 20)
        for _ in range(300):
            fh.write(chunk)
        fh.write(b'", "coherence": 1}\n')
    assert path.stat().st_size < 2_000_000
    refused_in_bounded_memory(scores, path, f"{path}:1: line longer than 67108864 bytes")


def test_a_judgments_parquet_column_that_decodes_to_gigabytes_is_refused(tmp_path, scores):
    """A 1.8 MB Parquet file whose doc_id column decodes to 1.8 GB went past 2.5 GB
    as `meta-eval --judgments` (read whole).  Read with `run`'s bounds, a doc_id over
    input.max_text_bytes is refused naming the file and row, never decoded."""
    rows = 900
    doc_ids = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["d" * 2_000_000]))
    table = pa.table({"system": pa.array(["a"] * rows), "doc_id": doc_ids, "coherence": pa.array([1.0] * rows)})
    path = tmp_path / "judgments.parquet"
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < 200_000
    refused_in_bounded_memory(scores, path, f"{path}:1: field 'doc_id' decodes to 2000000 bytes, over "
                                            "input.max_text_bytes (1000000)")


def test_judgments_past_the_row_bound_are_refused(tmp_path, monkeypatch):
    from pipeline import meta_eval as module
    from rouge_core import RougeInputError

    path = write_jsonl(tmp_path / "j.jsonl", [{"system": "a", "doc_id": str(i), "coherence": 1} for i in range(11)])
    monkeypatch.setattr(module, "MAX_JUDGMENTS", 10)
    with pytest.raises(RougeInputError, match="more than 10 rows, the bound of what meta-eval reads whole"):
        module.load_judgments(str(path), None)


@pytest.mark.parametrize("name", ["\u200b\u2060", "a\x1b[2J", ""])
def test_judgment_keys_follow_the_id_rule(tmp_path, scores, name):
    path = write_jsonl(tmp_path / "j.jsonl", [{"system": name, "doc_id": "d1", "coherence": 1}])
    code, _, err, _ = meta_eval(scores, path)
    assert code == 2 and f"{path}: row 1, column 'system': " in err and "\x1b" not in err, err


# ----------------------------------------------------------------------- references


def test_one_document_whose_rows_repeat_large_references_holds_them_once(tmp_path):
    """20 systems of one document with 10 x 950 KB references each used 704 MB, against
    299 MB for the same bytes as 20 documents: the references were held and spilled
    once per row.  Now once per document: 20 rows cost what 4 rows cost."""
    import random

    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]

    def text(size):
        return " ".join(rng.choice(words) for _ in range(size // 6))

    references = [text(400_000) for _ in range(10)]
    peaks = {}
    for systems in (4, 20):
        rows = [{"system": f"s{k:02d}", "doc_id": "d0", "candidate": text(2000), "references": references}
                for k in range(systems)]
        data = write_jsonl(tmp_path / f"in{systems}.jsonl", rows)
        code, _, err, peaks[systems] = measured(pipeline_command(
            "run", "--input", str(data), "--output", str(tmp_path / f"out{systems}"), "--rouge-args",
            "-n 1 -x -r 10", "--runner", "FnApiRunner", "--quiet"))
        assert code == 0, err
        spilled = sum(p.stat().st_size for p in (tmp_path / f"out{systems}").rglob("*"))
        assert spilled < 5_000_000  # (nothing of the spill is left)
    print(f"one document, 4 rows: {peaks[4]:.0f} MiB; 20 rows: {peaks[20]:.0f} MiB")
    assert peaks[20] < peaks[4] + 40, peaks  # 16 more copies of 4 MB would be 64 MB more, held twice


@pytest.mark.parametrize("runner", ["in process", "two worker processes"])
def test_the_rules_see_one_shared_copy_and_the_numbers_are_unchanged(tmp_path, runner):
    """A run of rows of one document repeating its references is spilled once
    (`SameReferences`, across worker processes too) and put back shared; rows whose
    references differ keep their own (conflicting_references), and the scores equal
    `score`'s."""
    from tests.pipeline.runs import IN_MEMORY, TWO_PROCESSES, read_errors, run_pipeline

    rows = [{"system": s, "doc_id": d, "candidate": f"the cat {s} sat", "references": [f"the cat sat {d}", "a mat"]}
            for d in ("d1", "d2") for s in ("a", "b", "c")]
    rows.append({"system": "d", "doc_id": "d2", "candidate": "x", "references": ["something else"]})
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    record = run_pipeline(tmp_path / "out", [data], flags="-n 1 -r 10",
                          beam_args=IN_MEMORY if runner == "in process" else TWO_PROCESSES)
    errors = read_errors(tmp_path / "out")
    assert record["counts"]["scored"] == 3 and {e["reason"] for e in errors} == {"conflicting_references"}
    assert sorted((e["system"], e["doc_id"]) for e in errors) == [(s, "d2") for s in "abcd"]
    code, out, err, _ = measured(pipeline_command("score", str(data), "--rouge-args", "-n 1 -r 10", "--format", "csv"))
    assert code == 3, err  # (4 of 7 rows rejected)
    header, *lines = [line.split(",") for line in out.splitlines()]
    score_rows = {(row[header.index("system")], row[header.index("metric")]): row[header.index("f_measure")]
                  for row in lines}
    run_rows = pq.read_table(tmp_path / "out" / "system_scores.parquet").to_pylist()
    assert {(r["system"], r["metric"]): f"{r['f_measure']:.6f}" for r in run_rows} == score_rows


# ---------------------------------------------------------------------- many systems


def test_significance_of_every_pair_is_refused_past_its_bound():
    """5,000 systems of one document each were killed past 3 GB (every pair's sums:
    4 S x S matrices per measure and metric).  Past MAX_ALL_PAIRS_SYSTEMS the sums
    refuse, as soon as the systems seen pass it, and say how to name a baseline."""
    from pipeline.beam.significance import MAX_ALL_PAIRS_SYSTEMS, Block, MetricSums, TooManySystemsError

    def block(first, count):
        systems = [f"s{k:05d}" for k in range(first, first + count)]
        present = np.eye(count, dtype=bool)  # each system its own document
        units = np.zeros((count, count, 3), dtype=np.int64)
        units[present] = 50_000
        return Block([f"d{k}" for k in range(first, first + count)], systems, units, present)

    sums = MetricSums()
    sums.add(block(0, 600)).flush()
    with pytest.raises(TooManySystemsError, match=f"bounded to {MAX_ALL_PAIRS_SYSTEMS:,} systems .* name a baseline "
                                                  r"to test each system against it \(--baseline NAME"):
        sums.add(block(600, 600)).flush()
    other = MetricSums().add(block(600, 600)).flush()
    with pytest.raises(TooManySystemsError):
        MetricSums().add(block(0, 600)).flush().merge(other)
    # against a baseline: linear in the systems
    against = MetricSums("s00000")
    for first in range(0, 5000, 500):
        against.add(block(first, 500))
    against.flush()
    assert len(against.sums[0].systems) == 5000
    assert sum(s.nbytes for s in against.sums) < 2_000_000  # every pair's sums: 2.4 GB


def test_sums_against_a_baseline_equal_every_pairs_sums():
    """The paired tests against a baseline, from its S x 1 and S x 2 sums, equal those
    of the full matrices, whatever the split, the order and who scored what."""
    from rouge_core.significance import PairSums, paired_tests

    rng = np.random.default_rng(7)
    names = [f"s{k}" for k in range(9)]
    units = rng.integers(0, 100_000, (70, 9))
    ids = [f"d{i}" for i in range(70)]
    for present in (np.ones((70, 9), dtype=bool), rng.random((70, 9)) > 0.3):
        def parts(against):
            # the first 25 documents scored by s0..s4 only (given in reverse), the rest by all
            first = PairSums(against=against).add(ids[:25], names[:5][::-1], units[:25, :5][:, ::-1],
                                                  present[:25, :5][:, ::-1])
            return first.merge(PairSums(against=against).add(ids[25:], names, units[25:], present[25:]))

        full, against = parts(None), parts("s4")
        assert against.systems == full.systems == tuple(names)
        b = full.index("s4")
        others = np.array([k for k in range(9) if k != b])
        expected = paired_tests(full, others, np.full(8, b))
        got = paired_tests(against, others, np.full(8, b))
        for field in expected:
            if expected[field].dtype == object:
                assert list(expected[field]) == list(got[field]), field
            else:
                np.testing.assert_array_equal(expected[field], got[field], err_msg=field)
        assert against.nbytes < full.nbytes


def test_a_run_past_the_bound_fails_in_one_line_and_a_baseline_runs(tmp_path):
    from pipeline.beam.significance import MAX_ALL_PAIRS_SYSTEMS

    systems = MAX_ALL_PAIRS_SYSTEMS + 1
    rows = [{"system": f"s{k:05d}", "doc_id": f"d{k}", "candidate": f"the cat {k % 7}", "references": ["the cat"]}
            for k in range(systems)]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    config = tmp_path / "c.toml"
    config.write_text("[statistics]\nbootstrap_replicates = 10\njackknife_buckets = 2\n")
    common = ["--input", str(data), "--config", str(config), "--rouge-args", "-n 1 -x -r 10", "--quiet"]
    code, _, err, peak = measured(pipeline_command("run", "--output", str(tmp_path / "all"), *common), timeout=900)
    print(f"{systems} systems, every pair: peak {peak:.0f} MiB")
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.startswith("rouge-pipeline: error:")]
    assert lines == [f"rouge-pipeline: error: TooManySystemsError: significance of every pair of systems is bounded "
                     f"to {MAX_ALL_PAIRS_SYSTEMS:,} systems (its memory and its table grow with the square of their "
                     f"number); this run has more than {MAX_ALL_PAIRS_SYSTEMS:,}: name a baseline to test each "
                     "system against it (--baseline NAME, or significance.baseline in the config), or set "
                     "significance.enabled = false"], err
    assert not (tmp_path / "all").exists()
    code, _, err, peak = measured(pipeline_command("run", "--output", str(tmp_path / "base"), "--baseline", "s00000",
                                                   *common), timeout=900)
    print(f"{systems} systems, against a baseline: peak {peak:.0f} MiB")
    assert code == 0, err
    assert pq.read_table(tmp_path / "base" / "significance.parquet").num_rows == (systems - 1) * 3  # (ROUGE-1: R, P, F)


def test_a_row_of_millions_of_empty_references_is_refused_and_many_at_the_bound_stay_bounded(tmp_path):
    """3,000,000 empty references in one 12 MB JSON line (each text within
    max_text_bytes, the line within max_line_bytes) took 4.7 GB to score, and the
    line bound allows 21 million.  A list field now holds at most max_text_bytes / 16
    texts (62,500 at the default), as a Parquet cell counts them; and a batch counts
    16 bytes for each, so 40 rows at that bound are not held at once either."""
    bomb = write_jsonl(tmp_path / "bomb.jsonl", [
        {"system": "s", "doc_id": "d0", "candidate": "a b c", "references": [""] * 3_000_000},
        {"system": "s", "doc_id": "d1", "candidate": "a b", "references": ["a b"]},
    ])
    code, out, err, peak = measured(pipeline_command("score", str(bomb), "--rouge-args", "-n 2 -r 10", "--format", "csv"))
    print(f"3,000,000 empty references: peak {peak:.0f} MiB")
    assert code == 3, err  # (a row rejected)
    assert "bomb.jsonl:1: text_too_long: field 'references' holds 3000000 texts, over the limit of 62500" in err, err
    assert 0 < peak < 400
    at_bound = write_jsonl(tmp_path / "bound.jsonl", [
        {"system": "s", "doc_id": f"d{i}", "candidate": "a b c", "references": [""] * 62_500} for i in range(40)
    ] + [{"system": "s", "doc_id": "d62501", "candidate": "a", "references": [""] * 62_501}])
    code, _, err, peak = measured(pipeline_command(
        "run", "--input", str(at_bound), "--output", str(tmp_path / "out"), "--rouge-args", "-n 2 -r 10",
        "--runner", "FnApiRunner", "--quiet"))
    print(f"40 rows of 62,500 empty references: peak {peak:.0f} MiB")
    assert code == 3, err  # (the row over the bound is an error row)
    errors = (tmp_path / "out" / "errors").glob("*.jsonl")
    messages = [line for path in errors for line in path.read_text().splitlines()]
    assert len(messages) == 1 and "holds 62501 texts, over the limit of 62500" in messages[0], messages
    assert 0 < peak < 600


def test_a_document_of_a_million_reference_rows_is_refused_in_bounded_memory(tmp_path):
    """The split form's bomb: 1,000,000 one-word reference rows of one document (a
    35 MB file) took 2.0 GB to score.  A document holds at most as many reference
    rows as a row's list may hold texts (62,500); the rest are counted, not held,
    and its candidates are text_too_long errors."""
    candidates = write_jsonl(tmp_path / "c.jsonl", [{"system": "s", "doc_id": d, "candidate": "a b c"}
                                                    for d in ("d0", "d1")])
    references = tmp_path / "r.jsonl"
    with open(references, "w") as fh:
        fh.write('{"doc_id": "d1", "reference": "a b"}\n' + '{"doc_id": "d0", "reference": "x"}\n' * 1_000_000)
    code, _, err, peak = measured(pipeline_command(
        "run", "--input", str(candidates), "--references", str(references), "--output", str(tmp_path / "out"),
        "--rouge-args", "-n 2 -r 10", "--runner", "FnApiRunner", "--quiet"))
    print(f"a document of 1,000,000 reference rows: peak {peak:.0f} MiB")
    assert code == 3, err
    counts = json.loads((tmp_path / "out" / "run.json").read_text())["counts"]
    assert (counts["rows_read"], counts["scored"], counts["errors_by_reason"]) == (1_000_003, 1, {"text_too_long": 1})
    messages = [line for p in (tmp_path / "out" / "errors").glob("*.jsonl") for line in p.read_text().splitlines()]
    assert len(messages) == 1 and "document 'd0' has 1000000 reference rows, over the limit of 62500" in messages[0]
    assert 0 < peak < 500
