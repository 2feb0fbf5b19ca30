"""Every compat test runs on both scoring paths: the compiled kernel and the Python reference."""

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA, require_kernel, require_shared

DATA = Path(__file__).parent / "data"
CNNDM = SHARED_DATA / "cnndm_test_outputs"


@pytest.fixture(params=["c", "python"])
def scoring_path(request, monkeypatch):
    """ROUGE_CORE_KERNEL for the scorers the test builds (rouge_core.compat reads it
    when it first scores)."""
    monkeypatch.setenv("ROUGE_CORE_KERNEL", require_kernel(request.param))
    return request.param


def cnndm_pairs(count: int) -> list[tuple[str, str]]:
    """(reference, candidate) of the first `count` CNN/DM pairs: the systems' files in
    name order, each in file order (11,490 pairs each, one reference per pair)."""
    pairs = []
    for path in sorted(CNNDM.glob("*.jsonl.gz")):
        require_shared(path)
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                pairs.append((row["references"][0], row["candidate"]))
                if len(pairs) == count:
                    return pairs
    require_shared(CNNDM / f"at least {count} pairs")
    return pairs
