import json
import os
import random
import re
import shutil
import tempfile
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "rouge155"
# ../shared/data next to the checkout, or wherever ROUGE_SHARED_DATA points (a worktree elsewhere).
SHARED_DATA = Path(os.environ.get("ROUGE_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def markdown_cells(text: str) -> list[list[str]]:
    """The cells of every Markdown table line in `text` (lines starting with '|'),
    stripped of their padding; an escaped pipe (\\|) stays inside its cell."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append([cell.strip() for cell in cells])
    return rows


def require_shared(path: Path) -> Path:
    """`path` under ../shared/data; absent, the test skips, or fails when CI is set
    (CI must have the shared data beside the checkout)."""
    if not path.exists():
        message = f"{path} is absent (set ROUGE_SHARED_DATA to the shared data folder)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def golden():
    return GOLDEN


def require_kernel(name: str) -> str:
    """The scoring path `name` ("python" or "c"); "c" skips when the compiled kernel
    is not built, and fails instead when the environment variable CI is set (unless
    ROUGE_CORE_KERNEL=python says that this run is the pure-Python one)."""
    from rouge_core import kernel_info

    if name == "c" and not kernel_info()["available"]:
        message = "the compiled kernel is not built (pip install -e . with a C compiler)"
        if os.environ.get("CI") and os.environ.get("ROUGE_CORE_KERNEL") != "python":
            pytest.fail(message)
        pytest.skip(message)
    return name


@pytest.fixture(params=["python", "c"])
def kernel(request):
    """Each test using it runs on both scoring paths: the pure-Python reference and the kernel."""
    return require_kernel(request.param)


def pytest_configure(config):
    """One seed for the differential test (tests/test_differential.py) in every process
    of a run: pytest-xdist's workers (scripts/test.sh) each collect the tests, and
    must name the same ones.  A fresh seed per run, unless ROUGE_DIFF_SEED is given."""
    os.environ.setdefault("ROUGE_DIFF_SEED", str(random.SystemRandom().randrange(2**32)))


@pytest.fixture(scope="session", autouse=True)
def _temporary_folders(tmp_path_factory):
    """Every temporary file or folder this test process makes through `tempfile` goes
    in one folder that the session removes.  Beam makes a folder per Pipeline and
    removes it only when the pipeline runs (`run` removes it when building fails,
    pipeline.beam.run), so tests that build a graph and never run it, or see it
    refused, left one in /tmp each.  The processes the tests start inherit it as
    TMPDIR: a Beam job service's artifacts and its stager's files, Dask's scratch
    space (the hosts of tests/pipeline/beam/runners/hosts.py get an environment of
    their own and a private /tmp)."""
    folder = tmp_path_factory.mktemp("tempfile")
    before, before_env = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = os.environ["TMPDIR"] = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = before
        if before_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before_env
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def gcs_store():
    """A GCS API emulator on loopback for the whole session (tests/object_stores.py):
    the environment that points clients at it."""
    from tests.object_stores import gcs_emulator

    with gcs_emulator() as env:
        yield env


@pytest.fixture(scope="session")
def s3_store():
    """moto's S3 server on loopback for the whole session: the environment (endpoint,
    credentials) that points clients at it."""
    from tests.object_stores import s3_server

    with s3_server() as env:
        yield env
