"""The `rouge-pipeline` command as a user runs it."""

import json
import subprocess
import sys

from tests.conftest import GOLDEN, read_jsonl

PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True, cwd=cwd
    )


def test_score_prints_the_official_report():
    result = cli("score", GOLDEN / "cases.jsonl", "--rouge-args", PYROUGE)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout == (GOLDEN / "sample-output" / "ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m.out").read_text()
    )
    assert "signature: rouge155|n:4|L:yes|W:1.2" in result.stderr


def test_score_reports_bad_rows_like_run_and_continues_or_stops_with_strict(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(read_jsonl(GOLDEN / "cases.jsonl")[0]) + "\n" + '{"system": "x", "doc_id": 1}\n'
    )
    result = cli("score", bad, "--rouge-args", "-n 1 -r 10")
    assert result.returncode == 3, result.stderr  # half the rows rejected: past --max-rejected
    assert "rows read 2, scored 1, errors 1\n  wrong_type: 1\n" in result.stderr
    assert f"{bad}:2: wrong_type: field 'doc_id' must be a non-empty string; got int" in result.stderr
    assert "ROUGE-1 Average_R" in result.stdout
    strict = cli("score", bad, "--strict")
    assert strict.returncode == 1 and not strict.stdout
    assert f"strict mode: {bad}:2: wrong_type: field 'doc_id'" in strict.stderr


def test_bad_flags_are_explained():
    result = cli("score", GOLDEN / "cases.jsonl", "--rouge-args", "-l 10 -b 75")
    assert result.returncode == 2
    assert "word_limit (-l) and byte_limit (-b) cannot both be set" in result.stderr


def test_dry_run_lists_inputs_and_prints_the_signature(tmp_path):
    result = cli(
        "run",
        "--config",
        "configs/demo.toml",
        "--dry-run",
        "--output",
        tmp_path / "out",
        cwd=GOLDEN.parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert "signature: rouge155|n:4" in result.stdout
    assert (
        "ROUGE-1.5.5 equivalent: ROUGE-1.5.5.pl -e DATA -c 95 -r 1000 -n 4 -m -w 1.2 -2 -1 -U"
        in result.stdout
    )
    assert result.stdout.count("candidate: ") == 4
    assert not (tmp_path / "out").exists()


def test_run_exit_codes(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text(
        "".join(json.dumps(c) + "\n" for c in read_jsonl(GOLDEN / "cases.jsonl")[:16]) + "{oops\n"
    )
    common = ["--rouge-args", "-n 1 -r 10", "--runner", "FnApiRunner"]
    ok = cli("run", "--input", data, "--output", tmp_path / "ok", "--max-rejected", "0.1", *common)
    assert ok.returncode == 0, ok.stderr
    assert "rows read 17, scored 16, errors 1\n  invalid_json: 1" in ok.stdout
    strict = cli("run", "--input", data, "--output", tmp_path / "strict", "--strict", *common)
    assert strict.returncode == 1 and "strict mode: 1 error rows" in strict.stderr
    again = cli("run", "--input", data, "--output", tmp_path / "ok", *common)
    assert again.returncode == 2 and "already exists" in again.stderr
    rejected = cli("run", "--input", data, "--output", tmp_path / "rejected", *common)  # 1 of 17 > 1%
    assert rejected.returncode == 3 and "WARNING: these numbers rest on part of the input" in rejected.stdout
    missing = cli("run", "--config", tmp_path / "nope.toml")
    assert missing.returncode == 2 and "config file not found" in missing.stderr


def test_help_teaches():
    result = cli("run", "--help")
    assert result.returncode == 0
    for text in ("--dry-run", "--eval-ids", "split form", "DataflowRunner", "_SUCCESS"):
        assert text in result.stdout


# ------------------------------------------------------------------ issue 8: everyday use
CASES = read_jsonl(GOLDEN / "cases.jsonl")


def text_files(tmp_path, system, references):
    """The rows of one system as line-aligned files, in sorted doc_id order; returns
    the candidate file, the reference files and the equivalent JSONL rows."""
    rows = sorted((c for c in CASES if c["system"] == system), key=lambda c: c["doc_id"])

    def line(text):  # sentences joined by <q>; a CR inside a sentence is a space to ROUGE
        text = "<q>".join(t.replace("\n", " ") for t in text) if isinstance(text, list) else text.replace("\n", "<q>")
        return text.replace("\r", " ")

    (tmp_path / "cand.txt").write_text("".join(line(r["candidate"]) + "\n" for r in rows))
    refs = []
    for i in range(references):
        path = tmp_path / f"ref{i}.txt"
        path.write_text("".join(line(r["references"][i]) + "\n" for r in rows))
        refs.append(path)
    jsonl = [
        {"system": "mine", "doc_id": str(n), "candidate": r["candidate"], "references": r["references"][:references]}
        for n, r in enumerate(rows, 1)
    ]
    return tmp_path / "cand.txt", refs, jsonl


def test_line_aligned_files_give_the_same_report_as_the_equivalent_jsonl(tmp_path):
    for references in (1, 3):
        cand, refs, rows = text_files(tmp_path, "11", references)
        data = tmp_path / "same.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        flags = ["--rouge-args", "-n 2 -m -2 4 -u -r 100", "--format", "report"]
        text = cli("score", "--candidates", cand, "--references", *refs, "--sentence-sep", "<q>",
                   "--system", "mine", *flags)
        assert text.returncode == 0, text.stderr
        jsonl = cli("score", data, *flags)
        assert text.stdout == jsonl.stdout and "mine ROUGE-SU4 Average_F" in text.stdout


def test_every_output_format(tmp_path):
    from rouge_core import RougeScorer, RougeSettings

    flags = ["--rouge-args", "-n 2 -r 100"]
    table = cli("score", GOLDEN / "cases.jsonl", *flags, "--format", "table", "--sort", "ROUGE-2")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["#", "system", "docs", "ROUGE-1", "ROUGE-2", "ROUGE-L"]
    # Ranked by ROUGE-2 F: system 24 first (9.18 x 100 in the official sample report).
    assert lines[2].split()[:2] == ["1", "24"] and "ranked by ROUGE-2, best first" in table.stdout
    assert table.stderr.count("signature:") == 1

    csv_out = cli("score", GOLDEN / "cases.jsonl", *flags, "--format", "csv")
    header, first = csv_out.stdout.splitlines()[:2]
    assert header.startswith("profile,system,metric,documents,recall,precision,f_measure,rouge155_recall")
    assert first.startswith("default,11,ROUGE-1,25,")

    jsonl = cli("score", GOLDEN / "cases.jsonl", *flags, "--format", "jsonl")
    records = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert len(records) == 200 * 3
    scorer = RougeScorer(RougeSettings.from_flags("-n 2 -r 100"))
    case = next(c for c in CASES if c["system"] == "11")
    expected = scorer.score(candidate=case["candidate"], references=case["references"])["ROUGE-2"]
    got = next(r for r in records if r["system"] == "11" and r["doc_id"] == case["doc_id"] and r["metric"] == "ROUGE-2")
    assert (got["recall"], got["precision"], got["f_measure"]) == (expected.recall, expected.precision, expected.f_measure)


def test_stdin(tmp_path):
    data = (GOLDEN / "cases.jsonl").read_text()
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "score", "-", "--rouge-args", PYROUGE],
        input=data, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (GOLDEN / "sample-output" / "ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m.out").read_text()


def test_misspelled_options_and_runners_fail_with_a_suggestion(tmp_path):
    data = GOLDEN / "cases.jsonl"
    run = cli("run", "--input", data, "--ouput", tmp_path / "out")
    assert run.returncode == 2 and "unknown option --ouput; did you mean --output?" in run.stderr
    score = cli("score", data, "--strcit")
    assert score.returncode == 2 and "did you mean --strict?" in score.stderr
    runner = cli("run", "--input", data, "--output", tmp_path / "out", "--runner", "DirectRuner")
    assert runner.returncode == 2 and "unknown runner 'DirectRuner'; did you mean DirectRunner?" in runner.stderr
    beam = cli("run", "--input", data, "--output", tmp_path / "o", "--dry-run", "--direct_num_workers", "2")
    assert beam.returncode == 0, beam.stderr  # a real Beam option passes
    assert not (tmp_path / "out").exists()


def test_a_glob_that_matches_nothing_fails_fast_naming_it(tmp_path):
    result = cli("run", "--input", GOLDEN / "cases.jsonl", "--input", tmp_path / "nope" / "*.jsonl",
                 "--output", tmp_path / "out")
    # Refused before Beam starts (no "reading N candidate file(s); runner: ..." line, no staging
    # folder), not after scoring the files that do exist.
    assert "runner:" not in result.stderr and not list(tmp_path.glob("out.staging-*"))
    assert result.returncode == 2 and f"no file matches '{tmp_path / 'nope' / '*.jsonl'}'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_demo_config_works_from_any_folder(tmp_path):
    result = cli("run", "--config", GOLDEN.parents[2] / "configs" / "demo.toml", "--output", tmp_path / "demo",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "runner: in this process" in result.stderr
    lines = result.stdout.splitlines()
    assert result.stdout.count("signature:") == 1
    # The sample's best system by ROUGE-1, as the official script prints it: 0.27397 (0.22021 - 0.33224).
    assert next(line.split() for line in lines if line.split()[:1] == ["1"])[:4] == ["1", "sys24", "25/25", "27.40"]
    assert "(22.02-33.22)" in result.stdout


def test_the_rouge_score_preset_from_the_command_line_equals_the_rouge_score_package(tmp_path):
    from rouge_score import rouge_scorer

    cand, refs, _ = text_files(tmp_path, "12", 1)
    done = cli("score", "--candidates", cand, "--references", *refs, "--preset", "rouge_score",
               "--rouge-types", "rouge1,rougeLsum", "--stem", "--format", "jsonl", "--sentence-sep", "<q>")
    assert done.returncode == 0, done.stderr
    records = {(r["doc_id"], r["metric"]): r for r in map(json.loads, done.stdout.splitlines())}
    peer = rouge_scorer.RougeScorer(["rouge1", "rougeLsum"], use_stemmer=True)
    lines = zip(cand.read_text().splitlines(), refs[0].read_text().splitlines())
    for n, (c, r) in enumerate(lines, 1):
        expected = peer.score(r.replace("<q>", "\n"), c.replace("<q>", "\n"))
        for metric in ("rouge1", "rougeLsum"):
            got, want = records[str(n), metric], expected[metric]
            assert (got["recall"], got["precision"], got["f_measure"]) == (want.recall, want.precision, want.fmeasure)
    assert "signature: rouge_score|types:rouge1,rougeLsum|tok:rouge_score-0.1.2|stem:nltk-porter" in done.stderr
    unicode = cli("score", "--candidates", cand, "--references", *refs, "--preset", "unicode", "--format", "csv",
                  "--rouge-args", "-n 2")
    assert unicode.returncode == 0 and "signature: unicode|" in unicode.stderr
    wrong = cli("score", "--candidates", cand, "--references", *refs, "--rouge-types", "rouge1")
    assert wrong.returncode == 2 and "--rouge-types is an option of the rouge_score preset" in wrong.stderr


def test_a_bad_kernel_request_is_refused_before_the_run_starts(tmp_path):
    import os

    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"system": "s", "doc_id": "d", "candidate": "a b", "references": ["a b"]}) + "\n")
    done = subprocess.run([sys.executable, "-m", "pipeline", "run", "--input", str(data), "--output", str(tmp_path / "o")],
                          capture_output=True, text=True, env=dict(os.environ, ROUGE_CORE_KERNEL="garbage"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "rouge-pipeline: error: ROUGE_CORE_KERNEL must be 'auto', 'c' or 'python'; got 'garbage'"
    assert not (tmp_path / "o").exists()  # (before: said by the graph's first worker to score, "[while running ...]")
