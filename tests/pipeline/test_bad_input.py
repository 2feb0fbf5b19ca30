"""Hostile input: every kind of bad row lands in the errors table with its exact
reason code, the job finishes, and no good row is affected."""

import gzip
import json
import os
import random
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.config import InputConfig
from rouge_core import RougeInputError, RougeScorer, RougeSettings
from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import document_rows, read_errors, run_pipeline, write_jsonl

GOOD = [c for c in read_jsonl(GOLDEN / "cases.jsonl") if c["system"] in ("11", "21")]
FLAGS = "-n 2 -w 1.2 -2 4 -u -m -r 50"


def good_scores(folder):
    rows = document_rows(folder)
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
    # the part of a line decoded before the cut is accounted for as a row (issue 22)
    "truncated.jsonl.gz": (gzip.compress(line(dict(ROW, doc_id="gz")) * 50)[:60], ["invalid_json", "unreadable_file"]),
    "bom_crlf.jsonl": (b"\xef\xbb\xbf" + line(dict(ROW, doc_id="bom"))[:-1] + b"\r\n", []),
    "controls.jsonl": (line(dict(ROW, doc_id="ctl", candidate="a\x00b\x07c\u2028d\r\ne")), []),
    "dup.jsonl": (line(dict(ROW, doc_id="dup")) * 2, ["duplicate_key", "duplicate_key"]),
    "surrogate_text.jsonl": ((json.dumps(dict(ROW, doc_id="sur", candidate="a \ud800 b")) + "\n").encode(), ["lone_surrogate"]),
    "surrogate_id.jsonl": (b'{"system": "bad\\udc00", "doc_id": "s2", "candidate": "a", "references": ["a"]}\n', ["invalid_id"]),
    "newline_system.jsonl": (line(dict(ROW, system="x\nA ROUGE-1 Average_R: 1.00000", doc_id="nl")), ["invalid_id"]),
    "escape_doc_id.jsonl": (line(dict(ROW, doc_id="\x1b[2J")), ["invalid_id"]),
    "huge_int_unused.jsonl": (line(dict(ROW, doc_id="hu"))[:-2] + b', "meta": ' + b"7" * 5000 + b"}\n", []),
    "huge_int_used.jsonl": (line(dict(ROW, doc_id="hi"))[:-2].replace(b'"a b c"', b"9" * 5000) + b"}\n", ["wrong_type"]),
    "deep_unused.jsonl": (line(dict(ROW, doc_id="deep"))[:-2] + b', "meta": ' + b"[" * 900 + b"]" * 900 + b"}\n", []),
    "too_deep.jsonl": (b'{"a": ' + b"[" * 20_000 + b"]" * 20_000 + b"}\n", ["invalid_json"]),
    "cr_only.jsonl": (line(dict(ROW, doc_id="cr1"))[:-1] + b"\r" + line(dict(ROW, doc_id="cr2"))[:-1] + b"\r", []),
    "upper.JSONL.GZ": (gzip.compress(line(dict(ROW, doc_id="gzup"))), []),
    "conflict.jsonl": (
        line(dict(ROW, doc_id="cf")) + line(dict(ROW, system="bad2", doc_id="cf", references=["z"])),
        ["conflicting_references", "conflicting_references"],
    ),
}
SCORED_FROM_BAD_FILES = {"after_long", "bom", "ctl", "hu", "deep", "cr1", "cr2", "gzup"}


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
        [good, bad / "*"],
        flags=FLAGS,
        max_text_bytes=15_000,
        max_line_bytes=50_000,
    )
    errors = read_errors(tmp_path / "out")
    by_file: dict = {}
    for e in errors:
        by_file.setdefault(os.path.basename(e["source"]), []).append(e["reason"])
    expected = {name: sorted(reasons) for name, (_, reasons) in CASES.items() if reasons}
    expected.update(
        {
            "wrong_type.parquet": ["wrong_type"],
            "missing.parquet": ["missing_field"],
            "garbage.parquet": ["invalid_parquet"],
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
    error = read_errors(tmp_path / "out")[0]
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
        "lone \ud800 surrogate",
    ]
    deep = "[" * 900 + "]" * 900
    value = lambda: rng.choice(texts + [None, 5, 2.5, True, [], {}, [1], [["a"]], {"a": "b"}])  # noqa: E731
    row = {
        "system": rng.choice(["s1", "s2", "s3", "", None, 3, "sys/../x", "s\nforged", "s\x1b[31m", "\ud83d"]),
        "doc_id": rng.choice([f"d{rng.randrange(300)}", f"d{rng.randrange(300)}", None, "", 1.5, "d\r1", "d\x00"]),
        "candidate": rng.choice(texts) if rng.random() < 0.8 else value(),
        "references": [rng.choice(texts) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.8
        else value(),
    }
    for key in list(row):
        if rng.random() < 0.05:
            del row[key]
    encoded = json.dumps(row, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:  # deep nesting or a huge integer in a field the pipeline does not use
        encoded = encoded[:-1] + b', "meta": ' + rng.choice([deep.encode(), b"9" * 5000]) + b"}"
    if rng.random() < 0.03:  # a huge integer where a text should be
        encoded = encoded.replace(b'"candidate": ', b'"candidate": ' + b"1" * 5000 + b', "x": ', 1)
    end = rng.choice([b"\n", b"\n", b"\n", b"\r\n", b"\r"])
    kind = rng.random()
    if kind < 0.85:
        return encoded + end
    if kind < 0.90:
        return encoded[: rng.randrange(1, 40)] + end  # truncated JSON
    if kind < 0.95:
        garbage = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))
        return garbage.replace(b"\n", b"").replace(b"\r", b"") + b"\n"
    return line(rng.choice([[1, 2], "text", 42, None, {"nested": {"deep": [1]}}]))


def lines_of(data: bytes) -> list[bytes]:
    """Universal newlines, as both readers split: \n, \r\n and a lone \r."""
    return [x for x in re.split(rb"\r\n|\r|\n", data) if x.strip()]


def bad_cell_parquet(path, rng: random.Random) -> int:
    """A Parquet file whose string cells are sometimes not UTF-8, or too long:
    each such row must be one error, and the rest of the file scored."""
    candidates, n = [b"caf\xe9 bad", b"x" * 3000], rng.randrange(5, 40)  # one of each bad cell, at least
    for i in range(n - 2):
        kind = rng.random()
        candidates.append(b"caf\xe9 bad" if kind < 0.2 else b"x" * 3000 if kind < 0.3 else b"a b c")
    rng.shuffle(candidates)
    table = pa.table(
        {
            "system": [f"pq{rng.randrange(3)}" for _ in range(n)],
            "doc_id": [f"pqd{i}" for i in range(n)],
            "candidate": pa.array(candidates, pa.binary()).view(pa.string()),
            "references": [["a b d"]] * n,
        }
    )
    pq.write_table(table, path, row_group_size=7)
    return n


def test_fuzz_ten_thousand_random_rows(tmp_path):
    seed = int(os.environ.get("ROUGE_FUZZ_SEED", random.randrange(1 << 30)))
    print(f"fuzz seed {seed} (replay with ROUGE_FUZZ_SEED={seed})")
    rng = random.Random(seed)
    rows = [random_row(rng) for _ in range(10_000)]
    non_blank = 0
    for i in range(8):
        data = b"".join(rows[i::8])
        non_blank += len(lines_of(data))
        path = tmp_path / "in" / f"part-{i}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(gzip.compress(data) if i % 2 else data)
        if i % 2:
            path.rename(path.with_suffix(".jsonl.GZ" if i % 4 == 1 else ".jsonl.gz"))
    non_blank += bad_cell_parquet(tmp_path / "in" / "cells.parquet", rng)
    # The core on its own: a row with well-formed texts either scores or raises
    # RougeInputError with a reason; nothing else may escape.
    scorer = RougeScorer(RougeSettings.from_flags(FLAGS))
    for raw in rows:
        for text in lines_of(raw):
            try:
                row = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if not (isinstance(row, dict) and isinstance(row.get("candidate"), str)):
                continue
            references = row.get("references")
            if not isinstance(references, list) or not references or not all(isinstance(r, str) for r in references):
                continue
            try:
                scorer.score(candidate=row["candidate"], references=row["references"])
            except RougeInputError as err:
                assert err.reason == "too_costly", f"seed {seed}: {text!r}: {err!r}"
    record = run_pipeline(tmp_path / "out", [tmp_path / "in" / "*"], flags=FLAGS, max_text_bytes=2000)
    counts = record["counts"]
    assert counts["rows_read"] == non_blank, f"seed {seed}"
    assert counts["scored"] + counts["errors"] == non_blank, f"seed {seed}: {counts}"
    assert counts["scored"] > 0 and counts["errors"] > 0, f"seed {seed}: {counts}"
    for reason in ("lone_surrogate", "invalid_id", "invalid_json", "undecodable", "text_too_long"):
        assert counts["errors_by_reason"].get(reason), f"seed {seed}: no {reason} in {counts}"
    assert "internal_error" not in counts["errors_by_reason"], f"seed {seed}: {counts}"
    from pipeline.records import REASONS

    assert set(counts["errors_by_reason"]) <= set(REASONS), f"seed {seed}"
    assert not any(ord(ch) < 32 and ch != "\n" for ch in (tmp_path / "out" / "rouge155.txt").read_text())


def test_one_per_row_references_are_never_merged_and_repeated_ids_are_reported(tmp_path):
    candidates = write_jsonl(
        tmp_path / "cands.jsonl",
        [{"system": "s", "doc_id": d, "candidate": "the cat sat on the mat"} for d in ("same", "dup", "ok")],
    )
    references = write_jsonl(
        tmp_path / "refs.jsonl",
        [
            # Two identical texts without reference_id: two references, as in a joined-form list.
            {"doc_id": "same", "reference": "the cat sat"},
            {"doc_id": "same", "reference": "the cat sat"},
            {"doc_id": "same", "reference": "a dog ran on the mat"},
            # One reference_id twice: both rows reported, the document not scored.
            {"doc_id": "dup", "reference_id": "A", "reference": "the cat"},
            {"doc_id": "dup", "reference_id": "A", "reference": "the cat"},
            {"doc_id": "ok", "reference_id": 1, "reference": "the cat sat on a mat"},
            {"doc_id": "unused", "reference": "nobody wrote this document"},
        ],
    )
    record = run_pipeline(tmp_path / "out", [candidates], references=[references], flags="-n 2 -r 10")
    counts = record["counts"]
    assert counts["errors_by_reason"] == {"duplicate_reference": 2, "conflicting_references": 1}
    assert counts["scored"] == 2 and counts["reference_rows"] == 7 and counts["reference_rows_unused"] == 1
    assert counts["balanced"]
    errors = read_errors(tmp_path / "out")
    assert sorted(e["reason"] for e in errors if e["doc_id"] == "dup") == [
        "conflicting_references", "duplicate_reference", "duplicate_reference"
    ]
    assert "reference_id 'A' appears 2 times; first at" in next(
        e["message"] for e in errors if e["reason"] == "duplicate_reference"
    )
    # The three references of "same" score exactly as the same three texts in a list.
    expected = RougeScorer(RougeSettings.from_flags("-n 2 -r 10")).score(
        candidate="the cat sat on the mat",
        references=["a dog ran on the mat", "the cat sat", "the cat sat"],
    )
    rows = pq.read_table(tmp_path / "out" / "per_document").to_pylist()
    got = {r["metric"]: r["recall"] for r in rows if r["doc_id"] == "same"}
    assert got == {tag: s.recall for tag, s in expected.items()}
    # By hand (-f A pools the references): hits 3 ("on the mat") + 3 + 3 over
    # 6 + 3 + 3 reference words = 0.75; merging the two copies would give 6/9.
    assert got["ROUGE-1"] == 0.75


def test_a_parquet_cell_that_is_not_utf8_is_one_error_and_the_rest_is_scored(tmp_path):
    cells = [b"a b c", b"caf\xe9", b"a b d", b"x" * 5000, b"a c"]
    pq.write_table(
        pa.table(
            {
                "system": ["s"] * 5,
                "doc_id": [f"p{i}" for i in range(5)],
                "candidate": pa.array(cells, pa.binary()).view(pa.string()),
                "references": [["a b d"]] * 5,
                "unused": [[[["deep"]]]] * 5,
            }
        ),
        tmp_path / "cells.PARQUET",
        row_group_size=2,
    )
    record = run_pipeline(tmp_path / "out", [tmp_path / "cells.PARQUET"], flags="-n 1 -r 10", max_text_bytes=4000)
    assert record["counts"]["errors_by_reason"] == {"undecodable": 1, "text_too_long": 1}
    errors = {e["position"]: e["reason"] for e in read_errors(tmp_path / "out")}
    assert errors == {2: "undecodable", 4: "text_too_long"}
    scored = {r["doc_id"] for r in pq.read_table(tmp_path / "out" / "per_document").to_pylist()}
    assert scored == {"p0", "p2", "p4"}


def test_a_huge_parquet_cell_is_refused_from_the_metadata_without_reading_it(tmp_path):
    from pipeline.config import InputConfig
    from pipeline.io.rows import iter_rows, used_fields

    config = InputConfig(max_text_bytes=1000)
    pq.write_table(
        pa.table({"system": ["s"], "doc_id": ["big"], "candidate": ["x" * 100_000], "references": [["a"]]}),
        tmp_path / "big.parquet",
        compression="zstd",
    )
    [error] = list(iter_rows(str(tmp_path / "big.parquet"), config, used_fields(config)))
    assert error.reason == "text_too_long" and "not read" in error.message


def test_csv_cells_cannot_become_formulas(tmp_path):
    rows = [dict(c, system="=HYPERLINK(\"http://x\")") for c in GOOD[:5]] + [dict(c, system="-2+3") for c in GOOD[5:10]]
    run_pipeline(tmp_path / "out", [write_jsonl(tmp_path / "in.jsonl", rows)], flags="-n 1 -r 10")
    import csv

    with open(tmp_path / "out" / "system_scores.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert {r["system"] for r in table} == {"'=HYPERLINK(\"http://x\")", "'-2+3"}
    assert all(float(r["recall"]) >= 0 for r in table)  # numbers stay numbers


def test_score_and_run_read_the_same_rows_the_same_way(tmp_path):
    """BOM, CR line ends, a bad row: `score` (no Beam) and `run` count and report alike."""
    import subprocess
    import sys

    data = tmp_path / "in.jsonl"
    data.write_bytes(
        b"\xef\xbb\xbf" + b"\r".join(line(c)[:-1] for c in GOOD[:6]) + b"\r{oops\r\n" + line(GOOD[6])
    )
    record = run_pipeline(tmp_path / "out", [data], flags="-n 1 -r 10")
    assert record["counts"]["rows_read"] == 8 and record["counts"]["errors_by_reason"] == {"invalid_json": 1}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "score", str(data), "--rouge-args", "-n 1 -r 10"],
        capture_output=True, text=True,
    )
    assert done.returncode == 3, done.stderr  # 1 of 8 rows rejected: past the default --max-rejected
    assert "rows read 8, scored 7, errors 1\n  invalid_json: 1\n" in done.stderr
    assert done.stdout == (tmp_path / "out" / "rouge155.txt").read_text()


def test_settings_have_upper_bounds(tmp_path):
    from pipeline.config import RunConfig, StatisticsConfig
    from rouge_core import RougeConfigError

    with pytest.raises(RougeConfigError, match=r"resamples \(-r\) must be a whole number from 1 to 100,000"):
        RougeSettings.from_flags("-r 1000000000")
    with pytest.raises(RougeConfigError, match="statistics.bootstrap_replicates must be between 2 and 100,000"):
        RunConfig(input=InputConfig(candidates=("x",)), statistics=StatisticsConfig(bootstrap_replicates=10**9)).validate()


@pytest.mark.parametrize(
    "section, key, value, message",
    [
        ("rouge", "eval_ids", "order", 'rouge.eval_ids must be "doc_id" or "index"'),
        ("rouge", "multi_reference", "max", 'rouge.multi_reference must be "average", "best" or "jackknife"'),
        ("rouge", "preset", "bleu", 'rouge.preset must be "rouge155", "rouge_score" or "unicode"'),
        ("significance", "adjust", "bonferroni", 'significance.adjust must be "holm" or "bh"'),
        ("output", "per_document_formats", ("xml",), "output.per_document_formats must be a list of"),
    ],
)
def test_every_choice_in_a_config_is_checked(section, key, value, message):
    import dataclasses

    from pipeline.config import RunConfig
    from rouge_core import RougeConfigError

    config = RunConfig(input=InputConfig(candidates=("x",)))
    config = dataclasses.replace(config, **{section: dataclasses.replace(getattr(config, section), **{key: value})})
    with pytest.raises(RougeConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        config.validate()
