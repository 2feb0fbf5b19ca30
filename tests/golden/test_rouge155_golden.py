"""ROUGE-1.5.5's own outputs, reproduced byte for byte.

The expected files are the official sample outputs and outputs of the official
script made on the sample data (provenance: golden/rouge155/README.md).
"""

import pytest

from rouge_core import RougeScorer, RougeSettings, render_report
from tests.conftest import GOLDEN, read_jsonl

BASE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2"
# The nine official ROUGE-test runs: file name suffix, extra flags.
OFFICIAL_RUNS = [
    ("-a", "-a"),
    ("-a-m", "-a -m"),
    ("-a-m-s", "-a -m -s"),
    ("-l10-a", "-l 10 -a"),
    ("-l10-a-m", "-l 10 -a -m"),
    ("-l10-a-m-s", "-l 10 -a -m -s"),
    ("-b75-a", "-b 75 -a"),
    ("-b75-a-m", "-b 75 -a -m"),
    ("-b75-a-m-s", "-b 75 -a -m -s"),
]

# (expected output, input cases, ROUGE-1.5.5 flags)
SAMPLE_OUTPUTS = [
    (f"ROUGE-test-c95-2-1-U-r1000-n4-w1.2{suffix}.out", "cases.jsonl", f"{BASE} {flags}")
    for suffix, flags in OFFICIAL_RUNS
] + [
    ("verify-c95-2-1-U-r1000-n4-w1.2-b75-a-m-s.out", "cases_verify.jsonl", f"{BASE} -b 75 -a -m -s"),
    ("verify-spl-c95-2-1-U-r1000-n4-w1.2-b75-a-m-s.out", "cases_verify_spl.jsonl", f"{BASE} -b 75 -a -m -s"),
    ("DUC2002-ROUGE.in.26.spl.out", "cases_duc2002_spl.jsonl", "-n 4"),
]

ORACLE_OUTPUTS = [
    (f"ROUGE-test-c95-2-1-U-r1000-n4-w1.2{suffix}-d.out", "cases.jsonl", f"{BASE} {flags} -d")
    for suffix, flags in OFFICIAL_RUNS
] + [
    (
        "ROUGE-test-n4-w1.2-m-2-4-u-c95-r1000-a-d.out",
        "cases.jsonl",
        "-n 4 -w 1.2 -m -2 4 -u -c 95 -r 1000 -a -d",
    ),
    (
        "ROUGE-test-n4-w1.2-m-2-4-u-c95-r1000-fB-p0.3-a-d.out",
        "cases.jsonl",
        "-n 4 -w 1.2 -m -2 4 -u -c 95 -r 1000 -f B -p 0.3 -a -d",
    ),
    ("ROUGE-test-n2-m-2-4-U-c90-r500-t1-a-d.out", "cases.jsonl", "-n 2 -m -2 4 -U -c 90 -r 500 -t 1 -a -d"),
    ("ROUGE-test-n2-w1.2-m-2-4-U-t2-a-d.out", "cases.jsonl", "-n 2 -w 1.2 -m -2 4 -U -t 2 -a -d"),
]

EDGE_OUTPUTS = [
    (f"edge/edge-{name}.out", "edge_cases.jsonl", f"{flags} -a -d")
    for name, flags in [
        ("F1-n4-w1.2-2-4-u-c95-r1000", "-n 4 -w 1.2 -2 4 -u -c 95 -r 1000"),
        ("F2-n4-w1.2-m-2-4-u-c95-r1000", "-n 4 -w 1.2 -m -2 4 -u -c 95 -r 1000"),
        ("F3-n2-m-s-2-1-U-l8-r100", "-n 2 -m -s -2 -1 -U -l 8 -r 100"),
        ("F4-n2-w1.2-2-4-u-b20-r100", "-n 2 -w 1.2 -2 4 -u -b 20 -r 100"),
        ("F5-n2-w1.2-2-4-u-fB-p0.25-r100", "-n 2 -w 1.2 -2 4 -u -f B -p 0.25 -r 100"),
        ("F6-n2-w1.2-2-4-U-t1-c90-r200", "-n 2 -w 1.2 -2 4 -U -t 1 -c 90 -r 200"),
        ("F7-n2-w1.2-2-4-u-t2", "-n 2 -w 1.2 -2 4 -u -t 2"),
    ]
] + [("edge/crash-n2-no-w.out", "edge_crash.jsonl", "-n 2 -2 4 -u -r 10 -a -d")]


def report_for(cases_file: str, flags: str, kernel: str) -> str:
    """The report of the cases, scored one by one (python) or in one batch (c)."""
    settings = RougeSettings.from_flags(flags)
    scorer = RougeScorer(settings, kernel=kernel)
    cases = read_jsonl(GOLDEN / cases_file)
    if kernel == "c":
        scores = scorer.score_batch([(case["candidate"], case["references"]) for case in cases])
    else:
        scores = [scorer.score(candidate=case["candidate"], references=case["references"]) for case in cases]
    results: dict = {}
    for case, score in zip(cases, scores):
        results.setdefault(case["system"], {})[case["doc_id"]] = score
    return render_report(results, settings)


def assert_same_report(actual: str, expected: str, name: str) -> None:
    if actual == expected:
        return
    got, want = actual.splitlines(), expected.splitlines()
    diffs = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    shown = "\n".join(f"line {i + 1}:\n  got      {g}\n  expected {w}" for i, g, w in diffs[:10])
    pytest.fail(
        f"{name}: {len(diffs)} differing lines of {len(want)} (got {len(got)} lines)\n{shown}",
        pytrace=False,
    )


@pytest.mark.parametrize("expected, cases, flags", SAMPLE_OUTPUTS, ids=[e for e, _, _ in SAMPLE_OUTPUTS])
def test_official_sample_outputs(expected, cases, flags, kernel):
    expected_text = (GOLDEN / "sample-output" / expected).read_text(encoding="utf-8")
    assert_same_report(report_for(cases, flags, kernel), expected_text, expected)


@pytest.mark.parametrize(
    "expected, cases, flags",
    ORACLE_OUTPUTS + EDGE_OUTPUTS,
    ids=[e for e, _, _ in ORACLE_OUTPUTS + EDGE_OUTPUTS],
)
def test_oracle_outputs_with_per_document_lines(expected, cases, flags, kernel):
    expected_text = (GOLDEN / "oracle-output" / expected).read_text(encoding="utf-8")
    assert_same_report(report_for(cases, flags, kernel), expected_text, expected)


@pytest.mark.parametrize(
    "expected, flags",
    [
        ("crash-n2-w1.2.out", "-n 2 -w 1.2 -2 4 -u -r 10 -a -d"),
        ("crash-n2-w1.2-s.out", "-n 2 -w 1.2 -2 4 -u -s -r 10 -a -d"),
    ],
)
def test_rouge_w_with_a_tokenless_reference_goes_on_where_the_script_dies(expected, flags, kernel):
    """ROUGE-1.5.5 dies ("Illegal division by zero") in the ROUGE-W block when a
    reference has no tokens.  Everything it printed before dying is reproduced;
    the ROUGE-W block follows with that reference scored as recall 0."""
    partial = (GOLDEN / "oracle-output" / "edge" / expected).read_text(encoding="utf-8")
    report = report_for("edge_crash.jsonl", flags, kernel)
    assert report.startswith(partial)
    w_block = report[len(partial) :]
    assert "A ROUGE-W-1.2 Eval c1_empty_reference.A R:0.00000 P:0.00000 F:0.00000" in w_block
