"""The row reader's fast paths give what the plain definitions give.

`read_lines` splits whole chunks at once; its lines must be those of the plain
definition (universal newlines: `\\n`, `\\r\\n`, a lone `\\r`; a line over the limit,
counted before its `\\r`s are split, is None), however the file's bytes arrive.
`parse_candidate` passes a common row after a few checks; on any row it must
give what the full field checks give."""

from __future__ import annotations

import random

from pipeline.config import InputConfig
from pipeline.io import rows
from pipeline.records import Candidate, ErrorRecord, SourceRow


class _Trickle:
    """A binary file whose read1 returns pieces of random length (at most n)."""

    def __init__(self, data: bytes, rng: random.Random):
        self.data, self.at, self.rng = data, 0, rng

    def read1(self, n: int) -> bytes:
        size = self.rng.randint(1, max(1, min(n, 40)))
        piece = self.data[self.at : self.at + size]
        self.at += len(piece)
        return piece

    read = read1


def _plain_lines(data: bytes, limit: int) -> list:
    pieces = data.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()
    out = []
    for piece in pieces:
        if len(piece) > limit:
            out.append(None)
            continue
        if piece.endswith(b"\r"):
            piece = piece[:-1]
        out.extend(piece.split(b"\r"))
    return out


def test_read_lines_equals_the_plain_definition_however_bytes_arrive():
    rng = random.Random(7)
    for case in range(3000):
        data = bytes(rng.choice(b"ab\r\n\n") for _ in range(rng.randint(0, 60)))
        limit = rng.choice([1, 2, 3, 5, 8, 1 << 20])
        source = _Trickle(data, rng) if case % 2 else _Trickle(data, random.Random(case))
        assert list(rows.read_lines(source, limit)) == _plain_lines(data, limit), (data, limit)


def test_read_lines_on_whole_chunks():
    # Lines of every length around a limit, many to a 64 KiB chunk, CRs in some chunks only.
    rng = random.Random(3)
    lines = [b"x" * rng.randint(0, 120) + (b"\r" if rng.random() < 0.01 else b"") for _ in range(5000)]
    data = b"\n".join(lines)
    for limit in (60, 100, 1 << 20):
        got = list(rows.read_lines(_WholeChunks(data), limit))
        assert got == _plain_lines(data, limit)


class _WholeChunks:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def read1(self, n: int) -> bytes:
        piece = self.data[self.at : self.at + n]
        self.at += len(piece)
        return piece

    read = read1


def _full_checks(item, config, joined):
    """parse_candidate's answer through the full field checks only (no fast path)."""
    source, position, row = item
    fields = [config.system_field, config.doc_id_field, config.candidate_field] + (
        [config.references_field] if joined else []
    )
    for name in fields:
        problem = rows._check_field(row, name, config, list_of_texts=name == config.references_field)
        if problem:
            return problem[0]
    return Candidate(row[config.system_field], row[config.doc_id_field], row[config.candidate_field],
                     row[config.references_field] if joined else None, source, position)


_VALUES = [
    "s", "", "a\x1fb", "\x7f", "ok id", "é", "\u2028", "\ud800", "x" * 1000, "x" * 1001, "x" * 40, "y" * 41,
    None, 5, 2.5, True, [], ["a"], ["a", "b"], ["a", None], ["a", 3], [["a", "b"]], ["é"], ["\ud800"],
    ["x" * 41], {"a": 1},
]


def test_parse_candidate_fast_path_agrees_with_the_full_checks():
    config = InputConfig(max_text_bytes=40)
    rng = random.Random(11)
    passed = 0
    for _ in range(20000):
        row = {}
        for name in ("system", "doc_id", "candidate", "references"):
            if rng.random() < 0.9:
                row[name] = rng.choice(_VALUES) if rng.random() < 0.5 else rng.choice(["s1", "d-1", "a text", ["r"]])
        joined = rng.random() < 0.7
        item = SourceRow("f.jsonl", 1, row)
        got = rows.parse_candidate(item, config, joined, None)
        want = _full_checks(item, config, joined)
        if isinstance(want, Candidate):
            passed += 1
            assert got == want, row
        else:
            assert isinstance(got, ErrorRecord) and got.reason == want, (row, got, want)
    assert passed > 500


def test_read_lines_never_holds_an_overlong_line():
    # A 5 MB line with a 1 KB limit: None, and the next line is whole.
    data = b"a" * (5 << 20) + b"\nnext\r\n"
    assert list(rows.read_lines(_WholeChunks(data), 1024)) == [None, b"next"]


_PIECES = [
    b'"system"', b'"doc_id"', b'"candidate"', b'"references"', b'"other"', b'"reference_id"', b'"s"', b'"a b"',
    b'"\\u00e9"', b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\ude00"', b'"x\\ny"', b'"\xc3\xa9"', b'"\xff"',
    b'"\xed\xa0\x80"', b"1", b"-0", b"1e400", b"123456789012345678901234567890", b"9" * 4500, b"NaN", b"Infinity",
    b"true", b"null", b"1.5", b"[]", b'["r"]', b'["r", 1]', b'[["a", "b"]]', b"{}", b'"\x01"', b'"\\u0000"',
]


def _random_line(rng: random.Random) -> bytes:
    if rng.random() < 0.1:
        return rng.choice([b"[1]", b'"s"', b"{", b"", b" ", b'{"a":1}x', b"\xef\xbb\xbf{}", b"[" * 2000 + b"]" * 2000])
    keys = rng.sample(_PIECES[:6], rng.randint(0, 6)) + ([rng.choice(_PIECES[:6])] if rng.random() < 0.2 else [])
    return b"{" + b",".join(k + b":" + rng.choice(_PIECES[6:]) for k in keys) + b"}"


def test_rows_read_by_orjson_are_the_rows_json_reads(tmp_path, monkeypatch):
    """Every line, hostile ones above all (lone surrogates, huge or non-finite
    numbers, bad UTF-8, duplicate keys, deep nesting, a BOM), gives the same row or
    the same error row with orjson as with json alone."""
    rng = random.Random(13)
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(_random_line(rng) for _ in range(4000)))
    config = InputConfig()
    fields = rows.used_fields(config)
    fast = list(rows.iter_rows(str(path), config, fields))
    monkeypatch.setattr(rows, "_fast_row", lambda raw, fields: None)  # json reads every row
    plain = list(rows.iter_rows(str(path), config, fields))
    assert len(fast) == len(plain) > 3000
    for a, b in zip(fast, plain):
        assert type(a) is type(b) and repr(a) == repr(b)
    assert sum(isinstance(r, ErrorRecord) for r in plain) > 100
    assert sum(isinstance(r, SourceRow) and bool(r.row) for r in plain) > 1000
