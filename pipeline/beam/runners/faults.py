"""A Beam worker process that dies, or is wedged, ends the run promptly.

The local multi-processing runner (FnApiRunner) starts each worker as a subprocess
from a thread that raises "Worker subprocess exited with return code N" when the
worker ends abnormally (SIGKILL, the OOM killer, a crash) -- and then nothing
else happens: the runner waits for ever for the dead worker's answer.  `watch_workers`
turns that thread's exception into the run's failure: the other workers (every
descendant process of this one) are killed, and the main thread, wherever it
waits, gets `WorkerLost` through a signal.  Nothing is published (the staging
folder is discarded by the caller) and no process is left behind.

A worker that is alive but wedged never exits, so the runner would wait for it for
ever too.  With `stall_seconds`, a thread looks at the run's processes (this one and
every descendant) twice a second and stops the run the same way (`WorkerStalled`)
when, for `stall_seconds`:

* a process of the run is stopped (state T or t in /proc: SIGSTOP, a debugger), or
* no progress counter moved (the workers' files in the progress folder:
  pipeline/beam/progress.py) while no process was stopped, and either
  - the workers had begun counting and a process of the run kept at least
    BUSY_SHARE of a core busy: a step that never ends (a loop without progress),
    or one slower than the limit allows, which the message says; or
  - no process of the run used WORKING_SHARE of a core, nor waited for a CPU
    WAIT_SHARE of the time: everything waits on something that does not come.
    Idle workers and the driver use well under 1% (gRPC's wake-ups).

A run that works slowly is never stopped as wedged: before its first counter
(Beam's start-up moves none) a process that uses a CPU or waits for one is
starting; on a starved CPU (every process held to a few percent of a core by a
quota) its processes use that little and wait for a CPU the rest of the time
(the run-queue wait of /proc/PID/task/*/schedstat), which an idle process does not.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

_WORKER_EXIT = "Worker subprocess exited with return code"


class WorkerLost(Exception):
    """A worker process of the run ended abnormally; the run stopped."""


class WorkerStalled(WorkerLost):
    """A process of the run was stopped, or nothing moved, for too long; the run stopped."""


BUSY_SHARE = 0.2  # of one core, over the window: busy (with no counter moving: no progress; a starved run uses less)
WORKING_SHARE = 0.02  # of one core: a process using more is working (idle ones use under 1%)
WAIT_SHARE = 0.5  # of the time, a process waiting this long for a CPU wants one: starved, not idle
LOOK_SECONDS = 0.5
FAULT_WAIT_SECONDS = 5.0  # after the runner fails, for a worker's exit to be seen
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _state(pid: int):
    """(state letter, CPU ticks used) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def run_queue_wait(pid: int) -> float:
    """Seconds the threads of a process have waited, runnable, for a CPU (the second
    field of /proc/PID/task/TID/schedstat); 0 where the kernel does not keep it."""
    waited = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as fh:
                waited += int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return waited / 1e9


def _folder_state(folder):
    """What changes when a worker writes its counters: each file's name, size and time."""
    if not folder:
        return ()
    try:
        with os.scandir(folder) as entries:
            return tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries))
    except OSError:
        return ()


class StallWatch:
    """The wedge rules over successive looks (`look` returns a reason, or None).
    `waited(pid)`: seconds the process has waited for a CPU so far (run_queue_wait)."""

    def __init__(self, limit: float, waited=run_queue_wait):
        self.limit = limit
        self.waited = waited
        self.stopped_since: dict = {}
        self.window_start = None
        self.window_ticks: dict = {}
        self.counters = None
        self.half = None  # (time, {pid: waited}) halfway through a window without progress

    def look(self, now: float, processes: dict, counters, workers: bool) -> str | None:
        """`processes`: {pid: (state, ticks)} of the driver and its descendants;
        `counters`: anything that changes when a counter moves, empty (false) before
        the first; `workers`: the run has worker processes (without them the rules
        do not apply)."""
        for pid, (state, _) in processes.items():
            if state in ("T", "t"):
                since = self.stopped_since.setdefault(pid, now)
                if now - since >= self.limit:
                    return (f"a Beam worker process ({pid}) has been stopped (state {state}: SIGSTOP or a "
                            f"debugger) for {now - since:.0f} s")
            else:
                self.stopped_since.pop(pid, None)
        for pid in list(self.stopped_since):
            if pid not in processes:
                del self.stopped_since[pid]
        # A stopped process explains why nothing moves (its own rule says so at its
        # limit): no window without progress runs meanwhile, so the reason is never
        # a busy peer's that waits for it.
        if self.stopped_since or not workers or counters != self.counters or self.window_start is None:
            self._new_window(now, processes, counters)
            return None
        elapsed = now - self.window_start
        if self.half is None and elapsed >= self.limit / 2:  # (the threads' waits: read twice a window)
            self.half = (now, {pid: self.waited(pid) for pid in processes})
        if elapsed < self.limit:
            return None
        used = {pid: (ticks - self.window_ticks.get(pid, 0)) / _TICKS / elapsed for pid, (_, ticks) in processes.items()}
        busiest = max(used, key=used.get, default=None)
        share = used.get(busiest, 0.0)
        if share >= BUSY_SHARE and counters:
            return (f"no progress counter moved for {elapsed:.0f} s while a process of the run ({busiest}) kept "
                    f"{share:.0%} of a core busy: a step that never ends (such as a regex that backtracks), or "
                    "one slower than the limit allows (raise it if the run is only slow)")
        since, before = self.half
        waiting = max((self.waited(pid) - w for pid, w in before.items() if pid in processes), default=0.0)
        if share >= WORKING_SHARE or waiting >= WAIT_SHARE * max(now - since, 1e-9):
            self._new_window(now, processes, counters)  # working, or starved of CPU: slow, not wedged
            return None
        return (f"no progress for {elapsed:.0f} s: no counter moved, and no process of the run used "
                f"{WORKING_SHARE:.0%} of a core or waited for one (the run waits for something that does not "
                "come: a wedged worker)")

    def _new_window(self, now, processes, counters):
        self.window_start = now
        self.window_ticks = {pid: ticks for pid, (_, ticks) in processes.items()}
        self.counters = counters
        self.half = None


def _watch_stalls(limit: float, folder, done: threading.Event, on_stall) -> None:
    """Look twice a second; the process tree (a walk of all /proc) every 2 s, or when a
    process left it.  This thread's own CPU is not the driver's work."""
    watch = StallWatch(limit)
    me = os.getpid()
    below: list = []
    looks = 0
    while not done.wait(LOOK_SECONDS):
        if looks % 4 == 0:
            below = descendants(me)
        looks += 1
        processes = {pid: s for pid in [me] + below if (s := _state(pid)) is not None}
        if len(processes) < 1 + len(below):
            looks = 0  # a process ended: walk the tree again at the next look
        if me in processes:
            state, ticks = processes[me]
            processes[me] = (state, ticks - int(time.thread_time() * _TICKS))
        reason = watch.look(time.monotonic(), processes, _folder_state(folder), workers=bool(below))
        if reason:
            on_stall(reason)
            return


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, their children ...), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_descendants(wait_seconds: float = 5.0) -> None:
    """SIGKILL every process below this one and wait (a little) until each is gone.

    The workers (grandchildren: the runner starts each through `sh -c`) are killed
    first, so that their shell lives to reap them and then exits by itself; a
    shell still there after a while is killed, and this process reaps its own
    children: no zombie outlives the run."""
    me = os.getpid()
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        children = _children_of(me)
        for pid in children:  # reap a finished child here: the runner's thread may not get to it
            if not _alive(pid):
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
        children = _children_of(me)
        deeper = [pid for pid in descendants(me) if pid not in children]
        if not children and not deeper:
            return
        late = time.monotonic() > deadline - wait_seconds / 2
        for pid in deeper or (children if late else []):
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.05)


def _children_of(pid: int) -> list[int]:
    """The direct children of `pid` (started by any of its threads)."""
    below = descendants(pid)
    out = []
    for child in below:
        try:
            with open(f"/proc/{child}/stat", encoding="ascii", errors="replace") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(child)
        except OSError:
            pass
    return out


@contextlib.contextmanager
def watch_workers(stall_seconds: float = 0, progress_folder: str | None = None):
    """Run the body; a worker process that dies meanwhile raises WorkerLost in it,
    one stopped or wedged for `stall_seconds` (0: never) WorkerStalled."""
    if threading.current_thread() is not threading.main_thread() or not os.path.isdir("/proc"):
        yield
        return
    fault: list = []
    lock = threading.Lock()
    done = threading.Event()
    previous_hook = threading.excepthook
    previous_handler = signal.getsignal(signal.SIGUSR1)

    def stop_run(error: WorkerLost) -> bool:
        with lock:
            if fault:
                return False
            fault.append(error)
        kill_descendants()
        with lock:  # only while the handler is ours (SIGUSR1's default ends the process)
            if not done.is_set():
                os.kill(os.getpid(), signal.SIGUSR1)
        return True

    def on_stall(reason: str) -> None:
        stop_run(WorkerStalled(f"{reason} (run.worker_stall_seconds = {stall_seconds:g}); the run was stopped"))

    def hook(args):
        if isinstance(args.exc_value, RuntimeError) and _WORKER_EXIT in str(args.exc_value):
            stop_run(WorkerLost(describe(str(args.exc_value))))  # (the first fault stops the run)
            return
        if fault or type(args.exc_value).__name__ == "RpcError":
            # The runner's threads fail after a lost worker (a broken gRPC stream,
            # sometimes before the worker's exit is seen): one line says it all.
            return
        previous_hook(args)

    def on_signal(signum, frame):
        if fault:
            raise fault[0]

    threading.excepthook = hook
    signal.signal(signal.SIGUSR1, on_signal)
    if stall_seconds:
        threading.Thread(target=_watch_stalls, args=(stall_seconds, progress_folder, done, on_stall),
                         name="rouge-stall-watch", daemon=True).start()
    try:
        yield
    except Exception:
        # A worker killed mid-stream often fails the runner's main thread first
        # ("Channel closed prematurely"), a moment before its exit is seen: that
        # exit, not the broken channel, is the reason to show.
        deadline = time.monotonic() + FAULT_WAIT_SECONDS
        while not fault and descendants(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.05)
        if fault:
            raise fault[0] from None
        raise
    else:
        if fault:  # the pipeline finished anyway: its results are not trusted
            raise fault[0]
    finally:
        with lock:
            done.set()
        signal.signal(signal.SIGUSR1, previous_handler)
        if fault:
            kill_descendants()
        threading.excepthook = previous_hook  # (the runner's threads failing later: the CLI's own hook)


def describe(message: str) -> str:
    code = message.rsplit(" ", 1)[-1]
    how = ""
    if code.lstrip("-").isdigit():
        number = int(code)
        sig = -number if number < 0 else number - 128 if number > 128 else None
        if sig:
            try:
                how = f" (killed by {signal.Signals(sig).name})"
            except ValueError:
                pass
    return f"a Beam worker process ended abnormally, exit status {code}{how}; the run was stopped"
