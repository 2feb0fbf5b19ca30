"""Result folders on object stores keep the local contracts (issue 30): on a GCS API
emulator and on moto's S3 server, both on loopback (tests/object_stores.py, started
for the session and stopped after; never skipped).

Each store gets the same two scenarios, on tiny inputs (30 documents): the tables of
a run into a URL are the local run's, byte for byte; `compare` of two bucket folders
is the local compare; `--overwrite` with other systems and shards leaves exactly the
new run's files, while a poller never sees the completion marker beside files of two
runs and a reader that opened the old folder is refused, not misled; two runs into
one URL: the second fails before writing anything and the first publishes a clean
run's tables; a run SIGKILLed halfway through publishing an --overwrite leaves
nothing a reader takes for a result, and a rerun without --overwrite succeeds and
equals a clean run.  Then: `meta-eval --run` and `compare --output` on a store, Beam's
local worker processes given the store by an option alone, a failed run's errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid

import pytest

from pipeline import cli as rouge_cli
from pipeline.io.result_folder import NUMBER, TEXT, FolderChanged, ResultFolder, ResultFolderError
from tests.object_stores import ROOT, Bucket
from tests.pipeline.runs import run_pipeline, write_jsonl
from tests.pipeline.test_compare import corpus

FLAGS = ["--rouge-args", "-n 1 -r 10", "--quiet"]
# Files that name their run (its id, paths, timings): the tables are the rest.
NAMED = {"run.json", "report.html", "_SUCCESS", "_ROUGE_PIPELINE"}


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """Inputs and local runs: A (2 systems, 4 per-document shards), B (3 systems, 2)."""
    base = tmp_path_factory.mktemp("local")
    write_jsonl(base / "a.jsonl", corpus(False))
    write_jsonl(base / "b.jsonl", corpus(True) + [dict(r, system="extra") for r in corpus(False) if r["system"] == "weak"])
    for name, shards in (("a", 4), ("b", 2)):
        (base / f"{name}.toml").write_text(f"[output]\nper_document_shards = {shards}\n")
        run_pipeline(base / name.upper(), [base / f"{name}.jsonl"], flags="-n 1 -r 10", per_document_shards=shards)
    return base


@pytest.fixture(params=["gcs", "s3"])
def store(request, monkeypatch):
    """A fresh bucket on the store; this process and its children point at it."""
    env = request.getfixturevalue(f"{request.param}_store")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return Bucket(request.param, env, f"t-{uuid.uuid4().hex[:12]}")


def tables(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if name not in NAMED}


def local_tables(folder) -> dict[str, bytes]:
    return tables({str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()})


def command(*args) -> list[str]:
    return [sys.executable, "-m", "pipeline", *map(str, args)]


def cli(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture
def paused(tmp_path):
    """start_paused for this test: its processes are killed when the test ends, even
    when it fails (a run paused for ever must not outlive it)."""
    started = []

    def start(args, step):
        process, resume = start_paused(args, step, tmp_path)
        started.append(process)
        return process, resume

    yield start
    for process in started:
        if process.poll() is None:
            kill(process)


def start_paused(args, step: str, tmp_path):
    """`rouge-pipeline ARGS` stopped at the publishing step `step` (the test pause of
    pipeline.io.publish): (process, resume file)."""
    resume = tmp_path / f"resume-{uuid.uuid4().hex[:6]}"
    process = subprocess.Popen(command(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT),
                                    "ROUGE_PIPELINE_TEST_PAUSE": f"{step}:{resume}"})
    watchdog = threading.Timer(600, process.kill)
    watchdog.start()
    seen = []
    for line in process.stderr:
        seen.append(line)
        if f"test pause at {step}" in line:
            watchdog.cancel()
            return process, resume
    watchdog.cancel()
    process.wait()
    raise AssertionError(f"the run ended ({process.returncode}) before {step}: {''.join(seen)[-3000:]}")


def finish(process, resume) -> str:
    resume.write_text("")
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return err


def kill(process) -> None:
    process.kill()  # SIGKILL: no handler runs
    process.wait()
    if process.stderr:
        process.stderr.close()


class Poller(threading.Thread):
    """Lists a folder again and again (as another tool would) while it is replaced:
    each time the listing shows `_SUCCESS` (and stays the same while the marker is
    read), the files beside it must be exactly those the marker lists, at their sizes."""

    def __init__(self, bucket: Bucket, prefix: str):
        super().__init__(daemon=True)
        self.bucket, self.prefix = bucket, prefix + "/"
        self.stop, self.complete, self.violations = threading.Event(), 0, []

    def run(self):
        while not self.stop.is_set():
            first = self.bucket.list(self.prefix)
            marker = self.bucket.get(self.prefix + "_SUCCESS")
            if marker is None or first != self.bucket.list(self.prefix):
                continue
            listed = {name: entry["bytes"] for name, entry in json.loads(marker)["files"].items()}
            present = {key[len(self.prefix):]: size for key, size in first.items() if key != self.prefix + "_SUCCESS"}
            self.complete += 1
            if present != listed:
                self.violations.append(sorted(set(present) ^ set(listed)))


def compare_table(old: str, new: str, out) -> bytes:
    assert rouge_cli.main(["compare", old, new, "--output", str(out), "--quiet"]) == 1  # B's drop (test_compare)
    return (out / "comparison.csv").read_bytes()


def test_tables_compare_and_overwrite_on_a_store_are_the_local_ones(store, local, tmp_path, capsys, paused):
    # In this process, into a new URL: the local run's tables, byte for byte.
    run_pipeline(store.url("one"), [local / "a.jsonl"], flags="-n 1 -r 10", per_document_shards=4)
    assert tables(store.folder("one")) == local_tables(local / "A")
    # The command line, the input itself on the store (listed before Beam starts).
    store.put("in/b.jsonl", (local / "b.jsonl").read_bytes())
    done = cli("run", "--config", local / "b.toml", "--input", store.url("in/b.jsonl"), "--output", store.url("two"),
               *FLAGS)
    assert done.returncode == 0, done.stderr
    assert tables(store.folder("two")) == local_tables(local / "B")
    expected = compare_table(str(local / "A"), str(local / "B"), tmp_path / "local")
    assert compare_table(store.url("one"), store.url("two"), tmp_path / "on-store") == expected
    # compare --output to the store: published like a run (lock, staging, manifest last)
    assert rouge_cli.main(["compare", store.url("one"), store.url("two"), "--output", store.url("cmp"), "--quiet"]) == 1
    published = store.folder("cmp")
    assert published["comparison.csv"] == expected
    assert set(published) == set(json.loads(published["_SUCCESS"])["files"]) | {"_SUCCESS"}
    # meta-eval --run on the store: the local numbers
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [
        {"system": r["system"], "doc_id": r["doc_id"], "quality": (i * 7) % 5} for i, r in enumerate(corpus(False))])
    for where, out in ((store.url("two"), "me-store"), (str(local / "B"), "me-local")):
        assert rouge_cli.main(["meta-eval", "--run", where, "--judgments", str(judgments), "--replicates", "0",
                               "--output", str(tmp_path / out), "--quiet"]) == 0
    assert (tmp_path / "me-store" / "correlations.csv").read_bytes() == (tmp_path / "me-local" / "correlations.csv").read_bytes()
    capsys.readouterr()

    # --overwrite A (2 systems, 4 shards) with B (3 systems, 2 shards), a reader having
    # opened A and a poller listing the folder all along.
    reader = ResultFolder.open(store.url("one"))
    poller = Poller(store, "one")
    poller.start()
    process, resume = paused(["run", "--config", local / "b.toml", "--input", local / "b.jsonl", "--output",
                              store.url("one"), "--overwrite", *FLAGS], "publishing")
    assert store.get("one/_SUCCESS") is None  # halfway: the old marker went first
    with pytest.raises(ResultFolderError, match="not a complete result folder"):
        ResultFolder.open(store.url("one"))
    finish(process, resume)
    poller.stop.set()
    poller.join()
    assert poller.violations == [] and poller.complete >= 1
    published = store.folder("one")
    manifest = json.loads(published["_SUCCESS"])
    assert set(published) == set(manifest["files"]) | {"_SUCCESS"}  # no stale shard of A
    assert tables(published) == local_tables(local / "B")
    shard = reader.names("per_document/*.parquet")[0]
    with pytest.raises(FolderChanged):
        list(reader.rows(shard, {"system": TEXT, "f_measure": NUMBER}))
    assert not [key for key in store.list() if ".staging-" in key or key.endswith(".lock")]
    assert all(size > 0 for size in store.list().values())  # no 0-byte object (S3 cannot write one)


def test_one_writer_at_a_time_and_killed_runs_leave_no_result(store, local, paused):
    a = ["run", "--config", local / "a.toml", "--input", local / "a.jsonl", "--output", store.url("out"), *FLAGS]
    b = ["run", "--config", local / "b.toml", "--input", local / "b.jsonl", "--output", store.url("out"), *FLAGS]
    # Two runs into one URL: A holds the lock (paused before publishing); B fails at
    # once, writing nothing; A goes on and publishes the tables of a clean run.
    first, resume = paused(a, "before_publish")
    before = set(store.list())
    done = cli(*b)
    assert done.returncode == 2 and "another run is writing" in done.stderr and "wrote nothing" in done.stderr
    assert set(store.list()) == before
    finish(first, resume)
    assert tables(store.folder("out")) == local_tables(local / "A")

    # B --overwrite SIGKILLed halfway through publishing: the old marker gone, files of
    # both runs in the folder, the dead run's lock and staging left; nothing there is
    # taken for a result ...
    second, _ = paused(b + ["--overwrite"], "publishing")
    kill(second)
    assert store.get("out/_SUCCESS") is None and store.list("out/") and store.get("out.lock")
    with pytest.raises(ResultFolderError, match="not a complete result folder"):
        ResultFolder.open(store.url("out"))
    # ... and a rerun without --overwrite takes the dead run's lock over at once (its
    # process is gone), removes what its journal names and its staging, and succeeds.
    done = cli(*b)
    assert done.returncode == 0, done.stderr
    assert "taking over the lock" in done.stderr and "on this machine is gone" in done.stderr
    assert "was killed while publishing" in done.stderr and "removed the staging files of run" in done.stderr
    published = store.folder("out")
    assert set(published) == set(json.loads(published["_SUCCESS"])["files"]) | {"_SUCCESS"}
    assert tables(published) == local_tables(local / "B")
    assert not [key for key in store.list() if ".staging-" in key or key.endswith(".lock")]


def test_workers_get_the_stores_options_from_the_command_line(s3_store, local, monkeypatch):
    """Two worker processes, the store named by Beam's options alone (no endpoint in the
    environment): Beam starts its local workers without the pipeline's options, yet
    they write the spill files and shards to the store the driver was told of (they
    went to AWS itself before ROUGE_PIPELINE_STORE_OPTIONS)."""
    for key, value in s3_store.items():
        monkeypatch.setenv(key, value)
    store = Bucket("s3", s3_store, f"w-{uuid.uuid4().hex[:12]}")
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    done = cli("run", "--config", local / "a.toml", "--input", local / "a.jsonl", "--output", store.url("w"), *FLAGS,
               "--direct_running_mode=multi_processing", "--direct_num_workers=2",
               "--s3_endpoint_url", s3_store["AWS_ENDPOINT_URL"])
    assert done.returncode == 0, done.stderr
    assert tables(store.folder("w")) == local_tables(local / "A")


def test_a_failed_run_on_a_store_keeps_its_errors_and_publishes_nothing(gcs_store, local, monkeypatch, tmp_path):
    for key, value in gcs_store.items():
        monkeypatch.setenv(key, value)
    bucket = Bucket("gcs", gcs_store, f"f-{uuid.uuid4().hex[:12]}")
    bad = write_jsonl(tmp_path / "bad.jsonl", corpus(False)[:4] + [{"system": "good", "doc_id": "x"}])
    done = cli("run", "--input", bad, "--output", bucket.url("out"), "--strict", *FLAGS)
    assert done.returncode == 1 and "strict mode: 1 error rows" in done.stderr, done.stderr
    left = bucket.list()
    assert not bucket.list("out/") and not [k for k in left if ".staging-" in k or k.endswith(".lock")]
    [kept] = {k.split("/")[0] for k in left}
    assert kept.startswith("out.failed-") and f"{bucket.url(kept)}/errors/" in done.stderr
    rows = [json.loads(line) for key in left if key.endswith(".jsonl") for line in bucket.get(key).splitlines()]
    assert [r["reason"] for r in rows] == ["missing_field"] and rows[0]["doc_id"] == "x"
