"""Where a runner's workers are, and the local paths they cannot reach.

A runner whose workers may be other machines (Dask with a scheduler address,
PortableRunner, Flink and Spark with a cluster's master, Dataflow) reads the inputs
and writes the output, its spill files and Beam's temp files on those machines.
A path of this machine (`out/run`, `/tmp/in.jsonl`) names nothing there, or
something else: the run would fail deep inside, after minutes, on another worker's
file (or leave its staging folder on a worker).  So such a path is refused before
any work, in one sentence, unless the user declares that every worker sees this
machine's paths (`--shared-filesystem`, run.shared_filesystem: an NFS mount, or
workers on this machine); then a relative input is made absolute here, since a
worker's working folder is not the driver's.

Workers are this process (LOOPBACK) or this machine's processes for the local
runners, Dask without an address (a LocalCluster started here), and a portable
runner whose environment is LOOPBACK: given, or Beam's own default for Flink and
Spark with a local master (`[auto]`, `[local]`, `local[N]`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from rouge_core import RougeConfigError

# Runners whose workers are this process or its children.
LOCAL_RUNNERS = {"", "DirectRunner", "SwitchingDirectRunner", "FnApiRunner", "BundleBasedDirectRunner", "PrismRunner"}
PORTABLE_RUNNERS = {"PortableRunner", "FlinkRunner", "SparkRunner"}
_FLINK_LOCAL = ("[local]", "[auto]")
_SPARK_LOCAL = re.compile(r"local(\[.+\])?")


@dataclass(frozen=True)
class Placement:
    """The chosen runner's short name, whether its workers may be other machines,
    and how a sentence names them ("a Dask cluster at tcp://10.0.0.3:8786")."""

    runner: str
    remote: bool
    workers: str


def runner_name(options) -> str:
    """The runner's class name (`--runner` may be a module path)."""
    from apache_beam.options.pipeline_options import StandardOptions

    return (options.view_as(StandardOptions).runner or "").rsplit(".", 1)[-1]


def placement(options) -> Placement:
    """Where the workers of the runner `options` choose are."""
    from apache_beam.options import pipeline_options as po

    name = runner_name(options)
    if name in LOCAL_RUNNERS:
        return Placement(name or "DirectRunner", False, "this machine's Beam runner")
    if name == "DaskRunner":
        given = options.get_all_options(drop_default=True)  # (DaskOptions' own names for the two flags)
        where = given.get("address") or given.get("scheduler_file")
        if where:
            return Placement(name, True, f"the workers of the Dask cluster at {where}")
        return Placement(name, False, "a Dask cluster started on this machine")
    if name in PORTABLE_RUNNERS:
        environment = (options.view_as(po.PortableOptions).environment_type or "").upper()
        if not environment and name == "FlinkRunner" and options.view_as(po.FlinkRunnerOptions).flink_master in _FLINK_LOCAL:
            environment = "LOOPBACK"
        if not environment and name == "SparkRunner" and _SPARK_LOCAL.fullmatch(
                options.view_as(po.SparkRunnerOptions).spark_master_url or ""):
            environment = "LOOPBACK"
        if environment == "LOOPBACK":
            return Placement(name, False, f"{name} with LOOPBACK workers (this process)")
        return Placement(name, True, f"{name}'s {environment or 'DOCKER'} workers")
    return Placement(name, True, f"{name}'s workers")


def _local_paths(options, config) -> list[tuple[str, str]]:
    """(what, path) of every local path the workers must reach: the output, Beam's
    temp and staging folders, the inputs (as given: globs, not yet listed)."""
    from apache_beam.options.pipeline_options import GoogleCloudOptions

    cloud = options.view_as(GoogleCloudOptions)
    found = [("output folder", config.output.folder)]
    found += [("--temp_location folder", cloud.temp_location), ("--staging_location folder", cloud.staging_location)]
    found += [("input", path) for path in config.input.candidates + config.input.references]
    return [(what, path) for what, path in found if path and "://" not in path]


def refuse_unreachable(options, config) -> None:
    """With workers that may be other machines, a local path not declared shared
    (run.shared_filesystem) is refused: RougeConfigError, before any work."""
    where = placement(options)
    local = _local_paths(options, config)
    if where.remote and local and not config.run.shared_filesystem:
        what, path = local[0]
        others = f" (and {len(local) - 1} more local path{'s' if len(local) > 2 else ''})" if len(local) > 1 else ""
        raise RougeConfigError(
            f"the {what} {path}{others} is on this machine, but {where.workers} may run on other machines, "
            "where it names nothing: use a URL every worker reaches (gs://..., s3://...), or pass "
            "--shared-filesystem (run.shared_filesystem = true) if every worker sees this machine's paths"
        )


def reachable_inputs(options, inputs: dict) -> dict:
    """The listed inputs as the workers must see them: with workers that may be other
    machines (their paths declared shared), relative paths made absolute; else as
    they are."""
    if not placement(options).remote:
        return inputs
    return {**inputs, **{kind: [_absolute(p) for p in inputs[kind]] for kind in ("candidates", "references")}}


def _absolute(path: str) -> str:
    return path if "://" in path else os.path.abspath(path)
