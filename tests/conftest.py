import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "rouge155"
# ../shared/data next to the checkout, or wherever ROUGE_SHARED_DATA points (a worktree elsewhere).
SHARED_DATA = Path(os.environ.get("ROUGE_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture
def golden():
    return GOLDEN
