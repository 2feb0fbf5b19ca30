"""The portable submission path (what Spark and Flink use) and the Dataflow graph,
exercised without a cluster: see DESIGN.md section 9."""

import os
import re
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
REPO = Path(__file__).resolve().parents[4]


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


def run_direct_and(tmp_path, name: str, beam_args: list[str], **options) -> dict:
    """The same two shards run on the DirectRunner and with `beam_args`; the latter's record."""
    data = [write_jsonl(tmp_path / "in" / f"{i}.jsonl", CASES[i::2]) for i in range(2)]
    run_pipeline(tmp_path / "direct", data, flags=FLAGS)
    return run_pipeline(tmp_path / name, data, flags=FLAGS, beam_args=beam_args, **options)


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
        shared_filesystem=True,  # (the worker pool is a process of this machine)
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


# ------------------------------------------------------------ what cannot work, refused up front

REMOTE = {
    "dask": ["--runner", "DaskRunner", "--dask_client_address", "tcp://10.255.255.1:8786"],
    "portable (docker)": ["--runner", "PortableRunner", "--job_endpoint", "localhost:1"],
    "portable (external)": ["--runner", "PortableRunner", "--job_endpoint", "localhost:1",
                            "--environment_type", "EXTERNAL", "--environment_config", "localhost:2"],
    "flink cluster": ["--runner", "FlinkRunner", "--flink_master", "flink-host:8081"],
    "spark cluster": ["--runner", "SparkRunner", "--spark_master_url", "spark://spark-host:7077"],
    "dataflow": ["--runner", "DataflowRunner", "--project", "dummy-project", "--region", "us-central1",
                 "--temp_location", "gs://dummy-bucket/tmp"],
}


def _cli(args, capsys) -> tuple[int, str]:
    from pipeline import cli

    code = cli.main(args)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("runner", REMOTE, ids=list(REMOTE))
def test_a_local_output_with_remote_workers_is_refused_before_any_work(tmp_path, capsys, runner):
    if runner == "dataflow" and not os.environ.get("CI"):
        pytest.importorskip("apache_beam.runners.dataflow.internal.apiclient", reason="needs apache-beam[gcp]")
    data = write_jsonl(tmp_path / "in.jsonl", CASES[:4])
    code, err = _cli(["run", "--input", str(data), "--output", str(tmp_path / "out"), "--quiet", *REMOTE[runner]], capsys)
    assert code == 2, err
    assert re.search(rf"error: the output folder {re.escape(str(tmp_path / 'out'))} \(and 1 more local path\) is on "
                     r"this machine, but .* may run on other machines, where it names nothing: use a URL every worker "
                     r"reaches \(gs://\.\.\., s3://\.\.\.\), or pass --shared-filesystem \(run\.shared_filesystem = "
                     r"true\) if every worker sees this machine's paths", err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # nothing made: no staging folder, no lock


def test_a_local_input_or_temp_folder_with_remote_workers_is_refused(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", CASES[:4])
    code, err = _cli(["run", "--input", str(data), "--output", "gs://bucket/out", *REMOTE["dask"]], capsys)
    assert code == 2 and f"the input {data} is on this machine, but the workers of the Dask cluster at " \
                          "tcp://10.255.255.1:8786 may run on other machines" in err, err
    code, err = _cli(["run", "--input", "gs://bucket/in.jsonl", "--output", "gs://bucket/out", *REMOTE["flink cluster"],
                      "--temp_location", str(tmp_path / "tmp")], capsys)
    assert code == 2 and f"the --temp_location folder {tmp_path / 'tmp'} is on this machine, but FlinkRunner's " \
                          "DOCKER workers may run on other machines" in err, err


def _placement(*args: str):
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.beam.runners.options import choose_runner
    from pipeline.beam.runners.locality import placement

    return placement(PipelineOptions(choose_runner(list(args), 0)[0]))


@pytest.mark.parametrize("args, remote", [
    ([], False),
    (["--runner=FnApiRunner", "--direct_running_mode=multi_processing"], False),
    (["--runner=DaskRunner"], False),  # a LocalCluster started by the driver, on this machine
    (["--runner=DaskRunner", "--dask_client_address=tcp://h:1"], True),
    (["--runner=DaskRunner", "--dask_scheduler_file=/shared/scheduler.json"], True),
    (["--runner=PortableRunner", "--job_endpoint=h:1", "--environment_type=LOOPBACK"], False),
    (["--runner=PortableRunner", "--job_endpoint=h:1", "--environment_type=loopback"], False),
    (["--runner=PortableRunner", "--job_endpoint=h:1"], True),
    (["--runner=PortableRunner", "--job_endpoint=h:1", "--environment_type=PROCESS"], True),
    (["--runner=FlinkRunner"], False),  # Beam's own default: an embedded Flink, LOOPBACK workers
    (["--runner=FlinkRunner", "--flink_master=[local]"], False),
    (["--runner=FlinkRunner", "--flink_master=h:8081"], True),
    (["--runner=FlinkRunner", "--environment_type=DOCKER"], True),
    (["--runner=SparkRunner"], False),  # local[4]
    (["--runner=SparkRunner", "--spark_master_url=spark://h:7077"], True),
    (["--runner=DataflowRunner"], True),
], ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_where_the_workers_are(args, remote):
    if "--runner=DataflowRunner" in args and not os.environ.get("CI"):
        pytest.importorskip("apache_beam.runners.dataflow.internal.apiclient", reason="needs apache-beam[gcp]")
    assert _placement(*args).remote is remote


def test_declared_shared_a_relative_input_is_made_absolute(tmp_path, monkeypatch):
    """The workers' working folder is not the driver's: a relative input used to fail
    on the workers as "No such file or directory"."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.beam.runners.locality import reachable_inputs

    monkeypatch.chdir(tmp_path)
    options = PipelineOptions(["--runner=DaskRunner", "--dask_client_address=tcp://h:1"])
    inputs = {"candidates": ["in/a.jsonl", "gs://b/c.jsonl"], "references": ["r.jsonl"], "bytes": 1}
    assert reachable_inputs(options, inputs) == {
        "candidates": [str(tmp_path / "in" / "a.jsonl"), "gs://b/c.jsonl"], "references": [str(tmp_path / "r.jsonl")],
        "bytes": 1}
    local = PipelineOptions(["--runner=FnApiRunner"])
    assert reachable_inputs(local, inputs) == inputs  # this machine's runner: as given


# ------------------------------------------------------------ job services and job-server jars

def test_a_job_endpoint_where_nothing_answers_fails_within_the_bound(tmp_path):
    """Beam waits --job_server_timeout (300 s) in silence; the run fails after
    run.cluster_wait_seconds, saying so, before any work."""
    data = write_jsonl(tmp_path / "in.jsonl", CASES[:4])
    (tmp_path / "run.toml").write_text("[run]\ncluster_wait_seconds = 2\n")
    port = _free_port()  # (free: nothing listens there)
    started = time.monotonic()
    done = _run_cli(tmp_path, "--input", str(data), "--output", str(tmp_path / "out"), "--config", str(tmp_path / "run.toml"),
                    "--runner", "PortableRunner", f"--job_endpoint=localhost:{port}", "--environment_type=LOOPBACK")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith(
        f"error: no Beam job service answered at localhost:{port} (--job_endpoint) within 2 s (run.cluster_wait_seconds): "
        "start the job service (Flink's or Spark's job server, or `python -m apache_beam.runners.portability."
        "local_job_service_main --port PORT`) or correct the address")
    assert time.monotonic() - started < 2 + 60  # the bound, and a fresh process's start
    assert not (tmp_path / "out").exists()


def _run_cli(tmp_path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", "run", "--quiet", *args], cwd=tmp_path, text=True,
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=300)


@pytest.fixture
def offline(tmp_path):
    """No download reaches anything (a proxy where nothing listens), an empty jar
    cache, and a `java` that records how it was started and fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = bin_dir / "java"
    java.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path}/java-args\nexit 1\n')
    java.chmod(0o755)
    dead = f"http://127.0.0.1:{_free_port()}"
    return {"env": {"https_proxy": dead, "HTTPS_PROXY": dead, "http_proxy": dead, "HTTP_PROXY": dead,
                    "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "JAVA_HOME": ""},
            "cache": tmp_path / "jars", "java_args": tmp_path / "java-args"}


@pytest.mark.parametrize("runner, jar", [("FlinkRunner", "beam-runners-flink-2.2-job-server-2.77.0.jar"),
                                         ("SparkRunner", "beam-runners-spark-3-job-server-2.77.0.jar")])
def test_without_its_jar_a_flink_or_spark_run_says_how_to_supply_it(tmp_path, offline, runner, jar):
    data = write_jsonl(tmp_path / "in.jsonl", CASES[:4])
    option = "--flink_job_server_jar" if runner == "FlinkRunner" else "--spark_job_server_jar"
    started = time.monotonic()
    done = _run_cli(tmp_path, "--input", str(data), "--output", str(tmp_path / "out"), "--runner", runner,
                    f"--jar_cache_dir={offline['cache']}", env=offline["env"])
    assert done.returncode == 2, done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith(
        f"rouge-pipeline: error: {runner} needs Beam's job-server jar, which could not be downloaded here: pass {option} "
        f"PATH (a local jar or a URL), or stage the jar at {offline['cache'] / jar} (Beam's jar cache; --jar_cache_dir "
        "names another folder). Beam said: Unable to fetch remote job server jar at "), error
    assert error.endswith(f"If no Internet access at runtime, stage the jar at {offline['cache'] / jar}"), error  # whole
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()


def _start_with_jar(tmp_path, offline, jar: Path, *runner_args: str) -> tuple[str, list[str]]:
    """A run whose job-server jar is `jar` (an empty file: it does not start): its
    stderr, and the arguments Beam started `java` with."""
    data = write_jsonl(tmp_path / "in.jsonl", CASES[:4])
    jar.parent.mkdir(exist_ok=True)
    jar.write_bytes(b"")
    done = _run_cli(tmp_path, "--input", str(data), "--output", str(tmp_path / "out"), *runner_args, env=offline["env"])
    assert done.returncode == 2, done.stderr
    return done.stderr, offline["java_args"].read_text().split("\n")


def test_a_given_job_server_jar_reaches_beam(tmp_path, offline):
    jar = tmp_path / "my-flink-job-server.jar"
    err, java = _start_with_jar(tmp_path, offline, jar, "--runner", "FlinkRunner", f"--flink_job_server_jar={jar}")
    assert f"error: FlinkRunner's job server did not start from {jar} (given by --flink_job_server_jar)" in err
    assert java[java.index("-jar") + 1] == str(jar)  # Beam started its job server from the jar given


def test_a_jar_staged_in_beams_jar_cache_is_used(tmp_path, offline):
    staged = offline["cache"] / "beam-runners-spark-3-job-server-2.77.0.jar"
    err, java = _start_with_jar(tmp_path, offline, staged, "--runner", "SparkRunner", f"--jar_cache_dir={offline['cache']}")
    assert f"error: SparkRunner's job server did not start from {staged} (from Beam's jar cache)" in err
    assert java[java.index("-jar") + 1] == str(staged)
    assert "--spark-master-url" in java  # (Beam's command for its Spark job server)
