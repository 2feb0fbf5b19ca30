"""The pipeline on a multi-host Dask cluster, simulated on this machine (issue 30): a
GCS API emulator (gcp-storage-emulator with GCS's preconditions, tests/object_stores.py:
the only storage the hosts share), a Dask
scheduler, two workers and the driver, each on a host of its own: its own network
namespace, its own private /tmp (tests/pipeline/beam/runners/hosts.py).  Started and
removed by the tests.

* the tables are byte for byte those of the in-process run on the same rows;
* a worker SIGKILLed mid-run: its tasks run again elsewhere, the tables are the
  same and the counts balance;
* every worker killed: the run fails within run.cluster_wait_seconds, saying so,
  and publishes nothing.

Skipped only where namespaces cannot be made (not root, no `ip`), and never under
CI=true: there that is a failure.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from pathlib import Path

import pytest

from pipeline.beam.runners.faults import descendants
from tests.pipeline.beam.runners import hosts as hosts_module
from tests.pipeline.beam.runners.hosts import Hosts, cpu_ticks
from tests.pipeline.runs import run_pipeline, table_bytes, write_jsonl

pytest.importorskip("dask.distributed", reason="needs dask[distributed] (the test extra)")
pytest.importorskip("gcp_storage_emulator", reason="needs gcp-storage-emulator (the test extra)")

REPO = Path(__file__).resolve().parents[4]
PYTHON = sys.executable
FLAGS = "-c 95 -r 1000 -n 2 -m"
GCS_PORT, SCHEDULER_PORT = 9023, 8786
BUCKET = "rouge"
WAIT_SECONDS = 5  # run.cluster_wait_seconds of the run whose workers all die
BOUND_SECONDS = WAIT_SECONDS + 90  # from the kill to the driver's exit (a fresh process's start and end included)

# Runs in the driver's network namespace, with this machine's files: the test's hands.
UPLOAD = """
import os, sys
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
client = storage.Client(project="rouge-test", credentials=AnonymousCredentials())
bucket = client.lookup_bucket(sys.argv[1]) or client.create_bucket(sys.argv[1])
for path in sys.argv[3:]:
    bucket.blob(sys.argv[2] + os.path.basename(path)).upload_from_filename(path)
"""
DOWNLOAD = """
import os, sys
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
client = storage.Client(project="rouge-test", credentials=AnonymousCredentials())
names = []
for blob in client.list_blobs(sys.argv[1], prefix=sys.argv[2]):
    names.append(blob.name)
    path = os.path.join(sys.argv[3], blob.name[len(sys.argv[2]):])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    blob.download_to_filename(path)
print("\\n".join(names))
"""
READY = """
import socket, sys, time
from distributed import Client
host, port, scheduler = sys.argv[1], int(sys.argv[2]), sys.argv[3]
deadline = time.monotonic() + 120
while socket.socket().connect_ex((host, port)):
    assert time.monotonic() < deadline, "the storage emulator did not start"
    time.sleep(0.2)
with Client(scheduler, timeout=120) as client:
    while len(client.scheduler_info()["workers"]) < 2:
        assert time.monotonic() < deadline, "the workers did not join"
        time.sleep(0.2)
"""


def corpus(folder: Path) -> list[Path]:
    """12,000 summaries (2 systems x 6,000 documents of 60 words) in 4 files."""
    rng = random.Random(30)
    words = [f"w{i}" for i in range(400)]
    rows = []
    for d in range(6000):
        reference = " ".join(rng.choice(words) for _ in range(60))
        rows += [{"system": s, "doc_id": f"d{d:05d}", "candidate": " ".join(rng.choice(words) for _ in range(60)),
                  "references": [reference]} for s in ("a", "b")]
    return [write_jsonl(folder / f"part-{i}.jsonl", rows[i::4]) for i in range(4)]


class Cluster:
    """The hosts, their services, and the driver's runs."""

    def __init__(self, hosts: Hosts, inputs: list[Path], scratch: Path):
        self.hosts, self.scratch = hosts, scratch
        store, scheduler = hosts.ip("store"), hosts.ip("sched")
        self.scheduler = f"tcp://{scheduler}:{SCHEDULER_PORT}"
        self.env = {
            "PATH": f"{Path(PYTHON).parent}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
            "PYTHONPATH": str(REPO), "STORAGE_EMULATOR_HOST": f"http://{store}:{GCS_PORT}",
            # no Google credentials to look for (the store is an emulator), nor a metadata server to wait for
            "ROUGE_PIPELINE_GCS_ANONYMOUS": "1", "NO_GCE_CHECK": "True", "GCE_METADATA_HOST": "127.0.0.1:9",
            "GCE_METADATA_IP": "127.0.0.1:9", "GOOGLE_CLOUD_PROJECT": "rouge-test",
        }
        # the emulator with GCS's preconditions (tests/object_stores.py): the output's lock object needs them
        hosts.start("store", [PYTHON, "-m", "tests.object_stores", "gcs", str(GCS_PORT), store], self.env)
        hosts.start("sched", [PYTHON, "-m", "distributed.cli.dask_scheduler", "--host", scheduler,
                              "--port", str(SCHEDULER_PORT), "--no-dashboard"], self.env)
        self.workers = {name: self.start_worker(name) for name in ("w1", "w2")}
        ready = hosts.run("drv", [PYTHON, "-c", READY, store, str(GCS_PORT), self.scheduler], self.env, timeout=180)
        assert ready.returncode == 0, ready.stderr
        put = hosts.run("drv", [PYTHON, "-c", UPLOAD, BUCKET, "in/", *map(str, inputs)], self.env, timeout=120,
                        private=False)
        assert put.returncode == 0, put.stderr

    def start_worker(self, name: str):
        return self.hosts.start(name, [PYTHON, "-m", "distributed.cli.dask_worker", self.scheduler, "--host",
                                       self.hosts.ip(name), "--name", name, "--nworkers", "1", "--nthreads", "1",
                                       "--no-dashboard"], self.env)

    def worker_process(self, name: str) -> int:
        """The pid of the worker process that a worker host's nanny started."""
        for pid in descendants(self.workers[name].pid):
            try:
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
            except OSError:
                continue
        raise AssertionError(f"no worker process on {name}")

    def driver(self, output: str, wait_seconds: float = 60):
        """`rouge-pipeline run` on the driver's host into gs://rouge/`output`, started."""
        command = [PYTHON, "-m", "pipeline", "run", "--config", "/tmp/run.toml", "--input", f"gs://{BUCKET}/in/*.jsonl",
                   "--output", f"gs://{BUCKET}/{output}", "--rouge-args", FLAGS, "--runner", "DaskRunner",
                   f"--dask_client_address={self.scheduler}", "--no_auth", "--quiet"]
        config = f"[run]\ncluster_wait_seconds = {wait_seconds}\n".encode()
        return self.hosts.start("drv", command, self.env, name=f"driver-{output}", files={"run.toml": config})

    def log(self, output: str) -> str:
        return (self.hosts.logs / f"driver-{output}.log").read_text(errors="replace")

    def fetch(self, output: str) -> tuple[Path, list[str]]:
        """The result folder gs://rouge/`output`, downloaded; and the names it holds."""
        dest = self.scratch / output
        got = self.hosts.run("drv", [PYTHON, "-c", DOWNLOAD, BUCKET, f"{output}/", str(dest)], self.env, timeout=120,
                             private=False)
        assert got.returncode == 0, got.stderr
        return dest, got.stdout.split()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = hosts_module.usable()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"the multi-host test must run in CI: {why}")
        pytest.skip(why)
    scratch = tmp_path_factory.mktemp("cluster")
    inputs = corpus(scratch / "in")
    (scratch / "logs").mkdir()
    with Hosts(["store", "sched", "drv", "w1", "w2"], scratch / "logs") as hosts:
        yield Cluster(hosts, inputs, scratch)


@pytest.fixture(scope="module")
def in_process(cluster):
    """The same rows, in this process, on this machine's files."""
    out = cluster.scratch / "in-process"
    run_pipeline(out, sorted((cluster.scratch / "in").glob("*.jsonl")), flags=FLAGS)
    return out


def tables(folder: Path) -> dict[str, bytes]:
    """Every table's bytes (None when absent: an errors shard with no rows is not written)
    and every per-document file's."""
    shards = sorted(str(p.relative_to(folder)) for p in (folder / "per_document").glob("*"))
    return {**table_bytes(folder), **{name: (folder / name).read_bytes() for name in shards}}


def finish(cluster: Cluster, driver, output: str, timeout: float = 600) -> None:
    driver.wait(timeout=timeout)
    assert driver.returncode == 0, cluster.log(output)


def test_the_tables_are_those_of_the_in_process_run(cluster, in_process):
    driver = cluster.driver("dask")
    finish(cluster, driver, "dask")
    folder, names = cluster.fetch("dask")
    assert tables(folder) == tables(in_process)
    record = json.loads((folder / "run.json").read_text())
    assert record["runner"].endswith("DaskRunner") and record["counts"]["scored"] == 12_000
    assert not [n for n in names if "_spill" in n or "staging" in n]  # the run's scratch removed


def test_a_worker_killed_mid_run_changes_nothing(cluster, in_process):
    started = {name: cpu_ticks(cluster.worker_process(name)) for name in ("w1", "w2")}
    driver = cluster.driver("killed-one")
    victim = cluster.worker_process("w1")
    while cpu_ticks(victim) - started["w1"] < 100:  # a second of CPU: w1 works for the run
        assert driver.poll() is None, "the run ended before w1 worked for it: " + cluster.log("killed-one")
        time.sleep(0.05)
    os.kill(victim, 9)  # SIGKILL; its nanny starts another worker process
    finish(cluster, driver, "killed-one")
    folder, _ = cluster.fetch("killed-one")
    assert tables(folder) == tables(in_process)
    counts = json.loads((folder / "run.json").read_text())["counts"]
    assert counts["balanced"] and counts["rows_read"] == counts["scored"] == 12_000


def test_every_worker_killed_fails_the_run_within_the_bound(cluster):
    victims = {name: cluster.worker_process(name) for name in ("w1", "w2")}
    started = cpu_ticks(victims["w1"])
    driver = cluster.driver("killed-all", wait_seconds=WAIT_SECONDS)
    while cpu_ticks(victims["w1"]) - started < 100:
        assert driver.poll() is None, "the run ended before w1 worked for it: " + cluster.log("killed-all")
        time.sleep(0.05)
    killed = time.monotonic()
    for name in ("w1", "w2"):  # the nannies too: nothing comes back
        cluster.hosts.kill(cluster.workers[name])
    driver.wait(timeout=BOUND_SECONDS + 60)
    seconds = time.monotonic() - killed
    log = cluster.log("killed-all")
    assert driver.returncode == 1, log
    assert re.search(rf"rouge-pipeline: error: .*no Dask worker has been connected to the scheduler at "
                     rf"{re.escape(cluster.scheduler)} for \d+ s \(run.cluster_wait_seconds = {WAIT_SECONDS}\); the "
                     r"run was stopped, nothing was published", log), log
    assert seconds < BOUND_SECONDS
    _, names = cluster.fetch("killed-all")
    assert "killed-all/_SUCCESS" not in names and "killed-all/run.json" not in names
