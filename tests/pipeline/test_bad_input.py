"""Hostile input: every kind of bad row lands in the errors table with its exact
reason code, the job finishes, and no good row is affected."""

import gzip
import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rouge_core import RougeScorer, RougeSettings
from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import run_pipeline, write_jsonl

GOOD = [c for c in read_jsonl(GOLDEN / "cases.jsonl") if c["system"] in ("11", "21")]
FLAGS = "-n 2 -w 1.2 -2 4 -u -m -r 50"


def good_scores(folder):
    rows = pq.read_table(folder / "per_document" / "part-00000-of-00001.parquet").to_pylist()
    return [r for r in rows if r["system"] in ("11", "21")]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("baseline")
    run_pipeline(tmp / "out", [write_jsonl(tmp / "good.jsonl", GOOD)], flags=FLAGS)
    return good_scores(tmp / "out")


def line(obj) -> bytes:
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")


ROW = {"system": "bad", "doc_id": "b1", "candidate": "a b c", "references": ["a b d"]}

# file name -> (bytes, reason codes expected from that file)
CASES = {
    "invalid_utf8.jsonl": (
        b'{"system": "bad", "doc_id": "u", "candidate": "caf\xe9", "references": ["x"]}\n',
        ["undecodable"],
    ),
    "truncated.jsonl": (b'{"system": "bad", "doc_id": "t", "cand', ["invalid_json"]),
    "number.jsonl": (b"42\n", ["not_an_object"]),
    "list.jsonl": (b'["a", "b"]\n', ["not_an_object"]),
    "nested.jsonl": (line(dict(ROW, doc_id="n", candidate={"text": "a"})), ["wrong_type"]),
    "non_strings.jsonl": (line(dict(ROW, doc_id="ns", candidate=["a", 3])), ["wrong_type"]),
    "ref_numbers.jsonl": (line(dict(ROW, doc_id="rn", references=[1, 2])), ["wrong_type"]),
    "null_system.jsonl": (line(dict(ROW, system=None)), ["null_value"]),
    "number_doc_id.jsonl": (line(dict(ROW, doc_id=7)), ["wrong_type"]),
    "missing.jsonl": (line({"system": "bad", "doc_id": "m", "candidate": "x"}), ["missing_field"]),
    "too_long.jsonl": (line(dict(ROW, doc_id="tl", candidate="word " * 4000)), ["text_too_long"]),
    "long_line.jsonl": (
        b'{"x": "' + b"y" * 60_000 + b'"}\n' + line(dict(ROW, doc_id="after_long")),
        ["line_too_long"],
    ),
    "empty.jsonl": (b"", []),
    "blank_lines.jsonl": (b"\n\n   \n", []),
    "empty.jsonl.gz": (gzip.compress(b""), []),
    "truncated.jsonl.gz": (gzip.compress(line(dict(ROW, doc_id="gz")) * 50)[:60], ["unreadable_file"]),
    "bom_crlf.jsonl": (b"\xef\xbb\xbf" + line(dict(ROW, doc_id="bom"))[:-1] + b"\r\n", []),
    "controls.jsonl": (line(dict(ROW, doc_id="ctl", candidate="a\x00b\x07c\u2028d\r\ne")), []),
    "dup.jsonl": (line(dict(ROW, doc_id="dup")) * 2, ["duplicate_key", "duplicate_key"]),
    "conflict.jsonl": (
        line(dict(ROW, doc_id="cf")) + line(dict(ROW, system="bad2", doc_id="cf", references=["z"])),
        ["conflicting_references", "conflicting_references"],
    ),
}
SCORED_FROM_BAD_FILES = {"after_long", "bom", "ctl"}


def write_cases(folder):
    folder.mkdir()
    for name, (data, _) in CASES.items():
        (folder / name).write_bytes(data)
    # Parquet: a wrong column type, a missing column, an extra column, zero rows.
    pq.write_table(
        pa.table({"system": ["bad"], "doc_id": ["pq1"], "candidate": [5], "references": [["x"]]}),
        folder / "wrong_type.parquet",
    )
    pq.write_table(
        pa.table({"system": ["bad"], "doc_id": ["pq2"], "references": [["x"]]}), folder / "missing.parquet"
    )
    pq.write_table(
        pa.table(
            {"system": ["bad"], "doc_id": ["pq3"], "candidate": ["a"], "references": [["a"]], "extra": [1.5]}
        ),
        folder / "extra.parquet",
    )
    pq.write_table(pa.table({"system": pa.array([], pa.string())}), folder / "zero_rows.parquet")
    (folder / "garbage.parquet").write_bytes(os.urandom(300))
    # A file that cannot be read even by root: reading /proc/self/mem at offset 0 fails with EIO.
    os.symlink("/proc/self/mem", folder / "unreadable.jsonl")


def test_every_bad_row_has_its_reason_and_good_rows_are_untouched(tmp_path, baseline):
    bad = tmp_path / "bad"
    write_cases(bad)
    good = write_jsonl(tmp_path / "good" / "good.jsonl", GOOD)
    record = run_pipeline(
        tmp_path / "out",
        [good, bad / "*", tmp_path / "missing" / "*.jsonl"],
        flags=FLAGS,
        max_text_bytes=15_000,
        max_line_bytes=50_000,
    )
    errors = [json.loads(x) for x in (tmp_path / "out" / "errors.jsonl").read_text().splitlines()]
    by_file: dict = {}
    for e in errors:
        by_file.setdefault(os.path.basename(e["source"]), []).append(e["reason"])
    expected = {name: sorted(reasons) for name, (_, reasons) in CASES.items() if reasons}
    expected.update(
        {
            "wrong_type.parquet": ["wrong_type"],
            "missing.parquet": ["missing_field"],
            "garbage.parquet": ["invalid_parquet"],
            "*.jsonl": ["missing_path"],
            "unreadable.jsonl": ["unreadable_file"],
        }
    )
    assert {k: sorted(v) for k, v in by_file.items()} == expected
    assert record["counts"]["balanced"]
    scored = {r["doc_id"] for r in pq.read_table(tmp_path / "out" / "per_document").to_pylist()}
    assert SCORED_FROM_BAD_FILES | {"pq3"} <= scored
    assert good_scores(tmp_path / "out") == baseline


def test_a_text_too_long_for_a_quadratic_metric_is_refused_with_a_reason(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", GOOD[:3] + [dict(ROW, candidate="the " * 3300)])
    record = run_pipeline(tmp_path / "out", [data], flags="-n 1 -2 -1 -u -r 10")
    assert record["counts"]["errors_by_reason"] == {"too_costly": 1}
    error = json.loads((tmp_path / "out" / "errors.jsonl").read_text())
    assert "3300 tokens has 5443350 skip-bigrams" in error["message"] and error["doc_id"] == "b1"


def test_invalid_utf8_can_be_replaced_instead(tmp_path):
    data = write_jsonl(tmp_path / "ok.jsonl", GOOD[:2])
    with open(data, "ab") as fh:
        fh.write(CASES["invalid_utf8.jsonl"][0])
    record = run_pipeline(tmp_path / "out", [data], flags="-n 1", invalid_utf8="replace")
    assert record["counts"]["scored"] == 3 and record["counts"]["errors"] == 0


def random_row(rng: random.Random) -> bytes:
    """A row that is valid, subtly wrong, or garbage, as a nightly bucket may hold."""
    texts = [
        "",
        " ",
        "a b c",
        "The cat sat.\nOn the mat!",
        ["x y", "", "z"],
        "caf\u00e9 \u4e2d\u6587 \U0001f600",
        "\x00\x01\x7f",
        "well-known 1,000 don't",
        "\r\n\r\n",
        "a " * 300,
    ]
    value = lambda: rng.choice(texts + [None, 5, 2.5, True, [], {}, [1], [["a"]], {"a": "b"}])  # noqa: E731
    row = {
        "system": rng.choice(["s1", "s2", "s3", "", None, 3, "sys/../x"]),
        "doc_id": rng.choice([f"d{rng.randrange(300)}", f"d{rng.randrange(300)}", None, "", 1.5]),
        "candidate": rng.choice(texts) if rng.random() < 0.8 else value(),
        "references": [rng.choice(texts) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.8
        else value(),
    }
    for key in list(row):
        if rng.random() < 0.05:
            del row[key]
    kind = rng.random()
    if kind < 0.85:
        return line(row)
    if kind < 0.90:
        return line(row)[: rng.randrange(1, 40)] + b"\n"  # truncated JSON
    if kind < 0.95:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).replace(b"\n", b"") + b"\n"
    return line(rng.choice([[1, 2], "text", 42, None, {"nested": {"deep": [1]}}]))


def test_fuzz_ten_thousand_random_rows(tmp_path):
    seed = int(os.environ.get("ROUGE_FUZZ_SEED", random.randrange(1 << 30)))
    print(f"fuzz seed {seed} (replay with ROUGE_FUZZ_SEED={seed})")
    rng = random.Random(seed)
    rows = [random_row(rng) for _ in range(10_000)]
    non_blank = 0
    for i in range(8):
        data = b"".join(rows[i::8])
        non_blank += sum(1 for x in data.split(b"\n") if x.strip())
        path = tmp_path / "in" / f"part-{i}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(gzip.compress(data) if i % 2 else data)
        if i % 2:
            path.rename(path.with_suffix(".jsonl.gz"))
    # The core on its own: every row either scores or says why not.
    scorer = RougeScorer(RougeSettings.from_flags(FLAGS))
    for raw in rows:
        try:
            row = json.loads(raw)
            scorer.score(candidate=row["candidate"], references=row["references"])
        except (ValueError, KeyError, TypeError) as err:  # JSON errors, missing keys, non-dict rows
            assert not isinstance(err, TypeError) or not isinstance(row, dict), (
                f"seed {seed}: {raw!r}: {err!r}"
            )
    record = run_pipeline(tmp_path / "out", [tmp_path / "in" / "*"], flags=FLAGS, max_text_bytes=2000)
    counts = record["counts"]
    assert counts["rows_read"] == non_blank, f"seed {seed}"
    assert counts["scored"] + counts["errors"] == non_blank, f"seed {seed}: {counts}"
    assert counts["scored"] > 0 and counts["errors"] > 0, f"seed {seed}: {counts}"
    from pipeline.records import REASONS

    assert set(counts["errors_by_reason"]) <= set(REASONS), f"seed {seed}"
