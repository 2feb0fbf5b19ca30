"""Everything a run needs around Beam for its runner, in one context manager, so that
pipeline/beam/run.py says only "run the graph on this runner":

* the runner object: Beam's own (None: Beam makes it from the options), or the
  Dask runner with the run's cluster bound and progress folder;
* the FnApiRunner's data-plane fixes, for the modes that have a data plane, undone
  after the run (pipeline.beam.runners.fn_runner_fixes);
* the local workers watched: a dead or wedged worker process ends the run
  (pipeline.beam.runners.faults);
* a Flink or Spark job server that could not be fetched or started, said in one
  sentence naming how to supply its jar (pipeline.beam.runners.portable).
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager

from pipeline.beam.runners import fn_runner_fixes
from pipeline.beam.runners.faults import watch_workers
from pipeline.beam.runners.locality import LOCAL_RUNNERS, runner_name
from pipeline.beam.runners.options import runner_path
from pipeline.beam.runners.portable import explain_job_server_failure
from pipeline.config import RunOptions

# Runners whose workers hand their progress counters to the driver.
SHOWS_PROGRESS = LOCAL_RUNNERS | {"DaskRunner"}


def shows_progress(options) -> bool:
    return runner_name(options) in SHOWS_PROGRESS


def make_runner(options, run: RunOptions, progress_folder: str | None):
    """The runner object for `options` (None: Beam's, from the options).  The Dask
    runner's class is found by its name, as Beam finds runners (importing it loads
    dask: only a run on Dask pays for that)."""
    if runner_name(options) == "DaskRunner":
        module, _, name = runner_path("DaskRunner").rpartition(".")
        return getattr(importlib.import_module(module), name)(run.cluster_wait_seconds, progress_folder)
    return None


@contextmanager
def runner_session(options, run: RunOptions, progress_folder: str | None):
    """`with runner_session(...) as runner, beam.Pipeline(runner=runner, ...)`."""
    name = runner_name(options)
    with fn_runner_fixes.fixed(options), watch_workers(run.worker_stall_seconds, progress_folder):
        try:
            yield make_runner(options, run, progress_folder)
        except Exception as err:
            explained = explain_job_server_failure(err, options, name)
            if explained is err:
                raise
            raise explained from err
