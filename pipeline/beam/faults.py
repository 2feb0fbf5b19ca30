"""A Beam worker process that dies ends the run promptly.

The local multi-processing runner (FnApiRunner) starts each worker as a subprocess
from a thread that raises "Worker subprocess exited with return code N" when the
worker ends abnormally (SIGKILL, the OOM killer, a crash) -- and then nothing
else happens: the runner waits for ever for the dead worker's answer.  `watch_workers`
turns that thread's exception into the run's failure: the other workers (every
descendant process of this one) are killed, and the main thread, wherever it
waits, gets `WorkerLost` through a signal.  Nothing is published (the staging
folder is discarded by the caller) and no process is left behind.
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
def watch_workers():
    """Run the body; a worker process that dies meanwhile raises WorkerLost in it."""
    if threading.current_thread() is not threading.main_thread() or not os.path.isdir("/proc"):
        yield
        return
    fault: list[str] = []
    previous_hook = threading.excepthook
    previous_handler = signal.getsignal(signal.SIGUSR1)

    def hook(args):
        if isinstance(args.exc_value, RuntimeError) and _WORKER_EXIT in str(args.exc_value) and not fault:
            fault.append(str(args.exc_value))
            kill_descendants()
            os.kill(os.getpid(), signal.SIGUSR1)
            return
        if fault or type(args.exc_value).__name__ == "RpcError":
            # The runner's threads fail after a lost worker (a broken gRPC stream,
            # sometimes before the worker's exit is seen): one line says it all.
            return
        previous_hook(args)

    def on_signal(signum, frame):
        if fault:
            raise WorkerLost(describe(fault[0]))

    threading.excepthook = hook
    signal.signal(signal.SIGUSR1, on_signal)
    try:
        yield
        if fault:  # the pipeline finished anyway: its results are not trusted
            raise WorkerLost(describe(fault[0]))
    finally:
        signal.signal(signal.SIGUSR1, previous_handler)
        if not fault:
            threading.excepthook = previous_hook
        else:
            kill_descendants()


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
