"""The portable runners (PortableRunner, FlinkRunner, SparkRunner): a job service
that does not answer, and a job-server jar that cannot be had, each said in one
sentence that names what to do.

* `--runner PortableRunner --job_endpoint HOST:PORT` with nothing answering there:
  Beam waits `--job_server_timeout` (300 s) in silence.  Here the endpoint is
  asked first, for at most run.cluster_wait_seconds, and the run is refused
  (before any work) when it does not answer.
* `--runner FlinkRunner` / `SparkRunner` start Beam's job server from a jar that
  Beam downloads from Maven Central into its jar cache
  (`~/.apache_beam/cache/jars`, or `--jar_cache_dir`).  Without network that
  fails with a long message whose hint (where to stage the jar) came last and was
  cut; here it becomes a sentence naming `--flink_job_server_jar` /
  `--spark_job_server_jar` and the cache path, with Beam's own message after it.
  A jar that is there but does not start is named too.
"""

from __future__ import annotations

import os

import grpc

from rouge_core import RougeConfigError

_JAR_OPTION = {"FlinkRunner": "flink_job_server_jar", "SparkRunner": "spark_job_server_jar"}
_NO_JAR = "Unable to fetch remote job server jar"
_NOT_STARTED = "Service failed to start up"


def check_job_service(options, runner: str, wait_seconds: float) -> None:
    """A PortableRunner's `--job_endpoint` must answer within `wait_seconds` (0: no
    bound): else RougeConfigError, before any work."""
    from apache_beam.options.pipeline_options import PortableOptions

    endpoint = options.view_as(PortableOptions).job_endpoint
    if runner != "PortableRunner" or not endpoint or endpoint == "embed" or not wait_seconds:
        return
    channel = grpc.insecure_channel(endpoint)
    try:
        grpc.channel_ready_future(channel).result(timeout=wait_seconds)
    except grpc.FutureTimeoutError:
        raise RougeConfigError(
            f"no Beam job service answered at {endpoint} (--job_endpoint) within {wait_seconds:g} s "
            "(run.cluster_wait_seconds): start the job service (Flink's or Spark's job server, or "
            "`python -m apache_beam.runners.portability.local_job_service_main --port PORT`) or correct the address"
        ) from None
    finally:
        channel.close()


def job_server_jar(options, runner: str) -> tuple[str, bool]:
    """(the jar Beam starts its job server from, whether the user named it):
    `--{flink,spark}_job_server_jar`, else Beam's default in its jar cache."""
    from apache_beam.options.pipeline_options import JobServerOptions
    from apache_beam.runners.portability import flink_runner, spark_runner
    from apache_beam.utils.subprocess_server import JavaJarServer

    given = options.get_all_options().get(_JAR_OPTION[runner])
    if given:
        return given, True
    server = (flink_runner.FlinkJarJobServer if runner == "FlinkRunner" else spark_runner.SparkJarJobServer)(options)
    cache = options.view_as(JobServerOptions).jar_cache_dir or JavaJarServer.JAR_CACHE
    return os.path.join(cache, os.path.basename(server.path_to_jar())), False


def explain_job_server_failure(err: Exception, options, runner: str) -> Exception:
    """A Flink or Spark job server that could not be fetched or started, as a
    RougeConfigError naming the jar and how to supply it; any other error as it is."""
    message = str(err)
    if runner not in _JAR_OPTION or not isinstance(err, (RuntimeError, ValueError)):
        return err
    option = "--" + _JAR_OPTION[runner]
    try:
        jar, named = job_server_jar(options, runner)
    except Exception:  # noqa: BLE001 (only the hint is lost)
        jar, named = "", False
    if _NO_JAR in message:
        return RougeConfigError(
            f"{runner} needs Beam's job-server jar, which could not be downloaded here: pass {option} PATH "
            f"(a local jar or a URL), or stage the jar at {jar} (Beam's jar cache; --jar_cache_dir names "
            f"another folder). Beam said: {message}"
        )
    if "Java" in message and "install" in message:
        return RougeConfigError(
            f"{runner} starts Beam's job server with Java, which is not installed here (nor in JAVA_HOME): "
            f"install a Java runtime, or run the job server elsewhere and use --runner PortableRunner "
            f"--job_endpoint HOST:PORT. Beam said: {message}"
        )
    if "Unable to parse jar URL" in message:
        return RougeConfigError(f"{option} names {jar}, which is neither a file here nor a URL. Beam said: {message}")
    if _NOT_STARTED in message:
        how = f"given by {option}" if named else "from Beam's jar cache"
        return RougeConfigError(
            f"{runner}'s job server did not start from {jar} ({how}): check that it is Beam's "
            f"{runner.removesuffix('Runner')} job-server jar for this Beam version and that `java` runs it "
            f"(--verbose shows the command). Beam said: {message}"
        )
    return err
