"""The compiled kernel on the real CNN/DailyMail test outputs (../shared/data, read
from there): all 45,960 pairs in batches, the report byte-identical to the
official script's (tests/golden/cnndm), and per-document statistics equal to the
pure-Python path's on a sample."""

import gzip
import json
import random

import pytest

from rouge_core import RougeScorer, RougeSettings, render_report
from tests.conftest import GOLDEN, SHARED_DATA, require_kernel, require_shared

CNNDM = SHARED_DATA / "cnndm_test_outputs"
PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"


def rows():
    require_shared(CNNDM)
    out = []
    for path in sorted(CNNDM.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            out += [json.loads(line) for line in fh]
    return out


@pytest.mark.slow
def test_the_kernel_reproduces_the_scripts_report_on_all_45960_pairs():
    require_kernel("c")
    data = rows()
    assert len(data) == 45_960
    settings = RougeSettings.from_flags(PYROUGE)
    scorer = RougeScorer(settings, kernel="c")
    results: dict = {}
    for start in range(0, len(data), 1000):  # bundles, as a Beam DoFn would hand them over
        batch = data[start : start + 1000]
        for row, scores in zip(batch, scorer.score_batch([(r["candidate"], r["references"]) for r in batch])):
            assert isinstance(scores, dict), (row["system"], row["doc_id"], scores)
            results.setdefault(row["system"], {})[row["doc_id"]] = scores
    golden = GOLDEN.parent / "cnndm" / "rouge155-c95-2-1-U-r1000-n4-w1.2-a-m.txt"
    assert render_report(results, settings) == golden.read_text()


def test_the_kernel_equals_python_on_a_cnndm_sample():
    require_kernel("c")
    data = random.Random(12).sample(rows(), 400)
    pairs = [(r["candidate"], r["references"]) for r in data]
    for flags in (PYROUGE, "-n 2 -m -f B", "-n 2 -w 1.2 -2 4 -u -m -s -l 30", "-n 3 -w 1.2 -m -b 200"):
        settings = RougeSettings.from_flags(flags)
        expected = RougeScorer(settings, kernel="python").score_batch(pairs)
        got = RougeScorer(settings, kernel="c").score_batch(pairs)
        for e, g in zip(expected, got):
            assert [(t, tuple(map(type, s)), s) for t, s in e.items()] == [
                (t, tuple(map(type, s)), s) for t, s in g.items()
            ], flags
