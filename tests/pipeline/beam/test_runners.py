"""The portable submission path (what Spark and Flink use) and the Dataflow graph,
exercised without a cluster: see DESIGN.md section 9."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import run_pipeline, table_bytes, write_jsonl

CASES = read_jsonl(GOLDEN / "cases.jsonl")[:48]
FLAGS = "-n 2 -w 1.2 -2 4 -u -m -r 200"
REPO = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _serve(module: str, port_flag: str, what: str):
    """Start a Beam service on a free loopback port; yield its address; stop it."""
    port = _free_port()
    service = subprocess.Popen(
        [sys.executable, "-m", module, f"{port_flag}={port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
        # The pool starts each worker as `python ...` from PATH: this interpreter's.
        env=dict(os.environ, PYTHONPATH=str(REPO), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("localhost", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or service.poll() is not None:
                    pytest.fail(f"{what} did not start")
                time.sleep(0.2)
        yield f"localhost:{port}"
    finally:
        service.terminate()
        service.wait(timeout=30)


@pytest.fixture
def job_service():
    yield from _serve("apache_beam.runners.portability.local_job_service_main", "--port", "Beam's local job service")


@pytest.fixture
def worker_pool():
    """An SDK worker pool in its own process, reached over gRPC, as the workers of a
    Flink or Spark cluster are (`--environment_type=EXTERNAL`)."""
    yield from _serve("apache_beam.runners.worker.worker_pool_main", "--service_port", "the SDK worker pool")


def run_direct_and(tmp_path, name: str, beam_args: list[str]) -> dict:
    """The same two shards run on the DirectRunner and with `beam_args`; the latter's record."""
    data = [write_jsonl(tmp_path / "in" / f"{i}.jsonl", CASES[i::2]) for i in range(2)]
    run_pipeline(tmp_path / "direct", data, flags=FLAGS)
    return run_pipeline(tmp_path / name, data, flags=FLAGS, beam_args=beam_args)


def test_portable_runner_with_external_workers_gives_the_same_tables(tmp_path, job_service, worker_pool):
    record = run_direct_and(
        tmp_path,
        "external",
        [
            "--runner=PortableRunner",
            f"--job_endpoint={job_service}",
            "--environment_type=EXTERNAL",
            f"--environment_config={worker_pool}",
        ],
    )
    assert record["runner"] == "PortableRunner" and record["counts"]["scored"] == 48
    assert table_bytes(tmp_path / "external") == table_bytes(tmp_path / "direct")


def test_portable_runner_gives_the_same_tables(tmp_path, job_service):
    record = run_direct_and(
        tmp_path, "portable", ["--runner=PortableRunner", f"--job_endpoint={job_service}", "--environment_type=LOOPBACK"]
    )
    assert record["runner"] == "PortableRunner"
    assert record["counts"]["scored"] == 48
    assert table_bytes(tmp_path / "portable") == table_bytes(tmp_path / "direct")


def test_dataflow_graph_builds_and_serialises_offline(tmp_path):
    if not os.environ.get("CI"):  # in CI, apache-beam[gcp] is installed by scripts/test.sh: fail, not skip
        pytest.importorskip("apache_beam.runners.dataflow.internal.apiclient", reason="needs apache-beam[gcp]")
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.beam.graph import build_pipeline
    from pipeline.config import InputConfig, RougeConfig, RunConfig
    from pipeline.beam.run import resolve_inputs

    data = write_jsonl(tmp_path / "in.jsonl", CASES)
    config = RunConfig(input=InputConfig(candidates=(str(data),)), rouge=RougeConfig(args=FLAGS)).validate()
    options = PipelineOptions(
        [
            "--runner=DataflowRunner",
            "--project=dummy-project",
            "--region=us-central1",
            "--temp_location=gs://dummy-bucket/tmp",
            "--dry_run=True",
            "--job_name=rouge-dry-run",
            f"--setup_file={REPO / 'pyproject.toml'}",
        ]
    )
    p = beam.Pipeline(options=options)
    build_pipeline(p, config, resolve_inputs(config), "gs://dummy-bucket/out")
    result = p.run()
    proto = result.job.proto_pipeline
    names = {t.unique_name for t in proto.components.transforms.values()}
    for stage in (
        "ReadSummaries",
        "GroupDocuments",
        "ScoreDocuments",
        "AggregatePerSystem",
        "AggregatePerSystem/WriteSystemTables",
        "WriteResults",
        "CountRows",
    ):
        assert any(name.startswith(stage) for name in names), stage
    staged = {
        a.role_payload.decode("utf-8", "ignore")
        for env in proto.components.environments.values()
        for a in env.dependencies
    }
    assert any("workflow.tar.gz" in s or "rouge_pipeline" in s or "rouge-pipeline" in s for s in staged), (
        staged
    )
