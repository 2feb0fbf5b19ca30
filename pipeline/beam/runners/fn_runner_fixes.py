"""Beam's FnApiRunner (apache-beam 2.77) with the fix of the defect that lost rows
between stages with worker processes (issue 18, docs/scaling.md section 3).
`fixed(options)` applies it for a run whose FnApiRunner has a data plane (worker
threads or processes: `--direct_running_mode` multi_threading or multi_processing)
and restores Beam's own methods when the run ends; each replaced method, and what
the fix relies on, is checked first (pipeline.beam.runners.patches).

RUNNER_INPUT_WRITE_RACE.  The runner sends each bundle's input to its worker
through a data-plane output stream (`BundleManager._send_input_to_worker`: one
`write` per buffered chunk, then `close`).  The runner's streams are
`TimeBasedBufferingClosableOutputStream`s (worker_handlers.DATA_BUFFER_TIME_LIMIT_MS
= 1000), which a timer thread flushes every second: `flush` takes the buffer
(`get`), hands it to the send queue, and then clears the buffer (`_clear`), under
its own `_flush_lock`; `write` takes no lock.  A chunk the runner's thread writes
between the flusher's `get` and `_clear` is dropped: never sent, no error, no log.
The window is wide exactly when it matters: handing the buffer to the send queue
blocks while the queue holds 100 MB (the worker reads slower than the runner
writes), and meanwhile the runner keeps writing.  A stage whose input arrives as
many chunks (a Flatten, e.g. CoGroupByKey's, whose input is everything the
reading stage emitted) then silently misses whole chunks: 1,000,000 rows in one
file lost 12,023 to 256,355 rows in 5 of 7 runs.  In process there is no data
plane (and no loss); worker processes write their outputs through size-based
streams with no timer thread.

The fix: the runner writes each chunk while holding the stream's `_flush_lock`,
so a flush sees every chunk written before it or none of one, and a chunk written
during a flush waits for it.  Chunks are whole elements, so a flush still never
cuts an element.

EMBEDDED_WORKER_TIMED_FLUSH.  With `--direct_running_mode=multi_threading` the
workers are threads of the runner's process and get the same timed streams
(`EmbeddedGrpcWorkerHandler`: data_buffer_time_limit_ms = DATA_BUFFER_TIME_LIMIT_MS)
for their outputs, written element by element by Beam's encoders: the same race
loses elements, and a timer flush can also cut an element in two (the next stage
then fails to decode it).  The fix: their streams flush by size only, between
elements, as worker processes' streams do (data_buffer_time_limit_ms = 0).  tests/pipeline/beam/runners/test_fn_runner_fixes.py shows the race on
the stream itself and the loss in a small pipeline with the runner's flushing
forced (every millisecond, into a one-element send queue), both failing without
the fix.
"""

from __future__ import annotations

import contextlib

from apache_beam.runners.portability.fn_api_runner import fn_runner, worker_handlers
from apache_beam.runners.worker import data_plane

from pipeline.beam.runners.locality import runner_name
from pipeline.beam.runners.patches import Internals

# Runners that are Beam's FnApiRunner here, and its modes that have a data plane.
FN_API_RUNNERS = {"", "DirectRunner", "SwitchingDirectRunner", "FnApiRunner"}
DATA_PLANE_MODES = {"multi_threading", "multi_processing"}


def _locked(stream):
    """The stream's flush lock (time-based streams have one), else nothing."""
    return getattr(stream, "_flush_lock", None) or contextlib.nullcontext()


def send_input_to_worker(self, process_bundle_id: str, read_transform_id: str, byte_streams) -> None:
    data_out = self._worker_handler.data_conn.output_stream(process_bundle_id, read_transform_id)
    for byte_stream in byte_streams or []:
        with _locked(data_out):
            data_out.write(byte_stream)
    data_out.close()


def send_timers_to_worker(self, process_bundle_id, transform_id, timer_family_id, timers) -> None:
    timer_out = self._worker_handler.data_conn.output_timer_stream(process_bundle_id, transform_id, timer_family_id)
    for timer in timers:
        with _locked(timer_out):
            timer_out.write(timer)
    timer_out.close()


_START_EMBEDDED = worker_handlers.EmbeddedGrpcWorkerHandler.start_worker


def start_embedded_worker(self) -> None:
    """EMBEDDED_WORKER_TIMED_FLUSH: a worker thread's output streams flush by size
    only (between elements), never by a timer."""
    self._data_buffer_time_limit_ms = 0
    _START_EMBEDDED(self)


def _stream_probe():
    """A time-based stream, closed at once: what the lock of `_locked` is read from."""
    stream = data_plane.TimeBasedBufferingClosableOutputStream(time_flush_threshold_ms=10**9)
    stream.close()
    return stream


FIXES = Internals(
    "RUNNER_INPUT_WRITE_RACE + EMBEDDED_WORKER_TIMED_FLUSH (pipeline/beam/runners/fn_runner_fixes.py)",
    uses=lambda: [
        (_stream_probe(), "_flush_lock"),
        (_START_EMBEDDED.__code__, "_data_buffer_time_limit_ms"),
        (worker_handlers.GrpcWorkerHandler, "data_conn"),
    ],
    replaces=lambda: [
        (fn_runner.BundleManager, "_send_input_to_worker", send_input_to_worker),
        (fn_runner.BundleManager, "_send_timers_to_worker", send_timers_to_worker),
        (worker_handlers.EmbeddedGrpcWorkerHandler, "start_worker", start_embedded_worker),
    ],
)


def needed(options) -> bool:
    """Whether the run's runner is the FnApiRunner with worker threads or processes."""
    from apache_beam.options.pipeline_options import DirectOptions

    return runner_name(options) in FN_API_RUNNERS and options.view_as(DirectOptions).direct_running_mode in DATA_PLANE_MODES


@contextlib.contextmanager
def fixed(options):
    """The fixes in place while the body runs, if the runner needs them."""
    if not needed(options):
        yield
        return
    with FIXES.applied():
        yield


def applied() -> bool:
    """Whether Beam's methods are replaced by the fixes now."""
    return all(getattr(owner, attr) is ours for owner, attr, ours in FIXES.replaces())
