"""The README's table "which setting reproduces each published number" (issue 19),
run as a user runs it: `score FILE --rouge-args "-c 95 -r 1000 -n 2 -a -m"` on the
released outputs in ../shared/data (read from there, never copied).  The published
numbers are the papers' and READMEs' own (SOURCE.md of each folder); See et al.'s
three rows are tests/pipeline/test_cnndm.py's."""

import json
import os

import pytest

from tests.conftest import SHARED_DATA
from tests.test_cli import cli

FLAGS = ("--rouge-args", "-c 95 -r 1000 -n 2 -a -m", "--format", "json")
PTB_SENTENCES = "sep: . | ? | ! "

pytestmark = pytest.mark.skipif(
    not SHARED_DATA.is_dir() and not os.environ.get("CI"),
    reason=f"{SHARED_DATA} is absent (the corpora are not copied here)",
)


def r1_r2_rl(*options):
    """ROUGE-1, -2, -L F x 100 as score prints them (ROUGE-1.5.5's average), and stderr."""
    result = cli("score", *options, *FLAGS)
    assert result.returncode == 0, result.stderr
    scores = {o["name"]: o["score"] for o in json.loads(result.stdout)}
    return (scores["ROUGE-1"], scores["ROUGE-2"], scores["ROUGE-L"]), result.stderr


@pytest.mark.slow
def test_simcls_cnndm_rouge_l_is_43_54_with_its_sentence_separator():
    # SimCLS's README, CNN/DM "Ours": 46.67 / 22.15 / 43.54.  Its file holds each summary
    # on one line, sentences separated by " . ".
    simcls = SHARED_DATA / "cnndm_test_outputs" / "simcls_2021.jsonl.gz"
    split, _ = r1_r2_rl(simcls, "--sentence-split", PTB_SENTENCES)
    assert split == (46.67, 22.15, 43.54)
    # As given, ROUGE-L sees one sentence per summary, and score says so and what to use.
    given, warnings = r1_r2_rl(simcls)
    assert given == (46.67, 22.15, 31.56)
    # One line for the kind: SimCLS's summaries and its references (11,420 of them, read off the file).
    assert ("warning: 22,899 texts (11,420 reference texts; simcls_2021 11,479) were scored as one sentence but "
            "hold several sentences") in warnings
    assert f'use --sentence-split sentencex (or "{PTB_SENTENCES}" for PTB-tokenized text)' in warnings
    segmented, _ = r1_r2_rl(simcls, "--sentence-split", "sentencex")
    assert segmented == (46.67, 22.15, 43.06)  # a segmenter misses some PTB boundaries


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, published, printed",
    [
        # SimCLS's README, XSum "Ours"; BRIO's README, XSum BRIO-Mul.  One sentence per
        # summary: sentences as given.  The last digit differs as the README explains.
        ("simcls_2021", (47.61, 24.57, 39.44), (47.61, 24.57, 39.43)),
        ("brio_mul_2022", (49.07, 25.59, 40.40), (49.06, 25.58, 40.39)),
    ],
)
def test_xsum_as_given(name, published, printed):
    scores, _ = r1_r2_rl(SHARED_DATA / "xsum_test_outputs" / f"{name}.jsonl.gz")
    assert scores == printed
    assert all(abs(a - b) <= 0.011 for a, b in zip(scores, published))
