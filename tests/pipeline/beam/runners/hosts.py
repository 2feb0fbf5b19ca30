"""Several hosts on one machine, for tests of a multi-host cluster: each host a
network namespace and, for each process started on it, a mount namespace with a
private /tmp (and /dev/shm), so that no two hosts share a scratch folder.  The
hosts are joined by a bridge in a hub namespace of their own (one /24 that no
other namespace routes to); the machine's own network is never touched.

    with Hosts(["store", "sched", "drv", "w1", "w2"]) as hosts:
        hosts.start("sched", ["dask", "scheduler", "--host", hosts.ip("sched")])
        hosts.run("drv", ["python", "-c", "..."], files={"run.toml": b"..."})

Everything is removed when the `with` ends, however it ends: every process
started on a host (by process group, then whatever is left in the host's network
namespace, by pid), then the namespaces (the mounts go with their last process).
Namespaces left by a test process that was killed outright (names carry its pid)
are removed by the next one.  Needs root and `ip`, `unshare` and `mount`.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import uuid
from pathlib import Path

PREFIX = "rpt"  # network namespaces: rpt<pid>-<tag>-<host>
SUBNET = "10.213.0"

# Run inside a new mount namespace: /tmp and /dev/shm private (tmpfs), but for the
# folders of $ROUGE_TEST_KEEP (the checkout and the interpreter, when they are under
# /tmp: held open before, bound back after); the files the caller gave (a tar on
# stdin) unpacked into the private /tmp; then the command.
_PRIVATE_TMP = """set -e
n=3; for p in $ROUGE_TEST_KEEP; do eval "exec $n<\\"\\$p\\""; n=$((n+1)); done
mount -t tmpfs -o size=2g,mode=1777 hosttmp /tmp
mount -t tmpfs -o size=512m,mode=1777 hostshm /dev/shm
n=3; for p in $ROUGE_TEST_KEEP; do
  mkdir -p "$p"; mount --no-canonicalize --bind /proc/self/fd/$n "$p"; eval "exec $n<&-"; n=$((n+1))
done
if [ "$ROUGE_TEST_HOST_FILES" = 1 ]; then tar -x -C /tmp; fi
exec "$@"
"""


def _kept() -> str:
    """The folders a host must still see that a private /tmp would hide."""
    here = Path(__file__).resolve().parents[4]
    folders = {str(here), sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent)}
    return " ".join(sorted(f for f in folders if f.startswith(("/tmp/", "/dev/shm/"))))


def usable() -> str:
    """Why hosts cannot be made here ("" when they can)."""
    if os.geteuid() != 0:
        return "needs root (network and mount namespaces)"
    missing = [tool for tool in ("ip", "unshare", "mount") if not shutil.which(tool)]
    if missing:
        return f"needs {', '.join(missing)}"
    probe = f"{PREFIX}{os.getpid()}-probe"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if done.returncode:
        return f"cannot create a network namespace: {done.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ""


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


def _namespaces() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(PREFIX)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(namespace: str) -> None:
    """Kill what is left in a network namespace, by pid, then delete it."""
    for _ in range(50):
        pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout.split()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    subprocess.run(["ip", "netns", "del", namespace], capture_output=True)


def remove_stale() -> None:
    """Namespaces of test processes that no longer exist (killed before their cleanup)."""
    for namespace in _namespaces():
        match = re.match(rf"{PREFIX}(\d+)-", namespace)
        if match and not _alive(int(match.group(1))):
            _remove(namespace)


class Hosts:
    def __init__(self, names: list[str], log_folder: Path):
        self.names = names
        self.tag = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:4]}"
        self.ips = {name: f"{SUBNET}.{10 + i}" for i, name in enumerate(names)}
        self.logs = log_folder
        self.processes: list[subprocess.Popen] = []

    def namespace(self, host: str) -> str:
        return f"{self.tag}-{host}"

    def ip(self, host: str) -> str:
        return self.ips[host]

    def __enter__(self) -> "Hosts":
        remove_stale()
        try:
            hub = self.namespace("hub")
            _sh("ip", "netns", "add", hub)
            _sh("ip", "-n", hub, "link", "add", "br0", "type", "bridge")
            _sh("ip", "-n", hub, "link", "set", "br0", "up")
            for i, host in enumerate(self.names):
                namespace, veth = self.namespace(host), f"v{os.getpid() % 10000}{self.tag[-4:]}{i}"[:15]
                _sh("ip", "netns", "add", namespace)
                _sh("ip", "link", "add", veth, "netns", hub, "type", "veth", "peer", "name", "eth0", "netns", namespace)
                _sh("ip", "-n", hub, "link", "set", veth, "master", "br0", "up")
                _sh("ip", "-n", namespace, "addr", "add", f"{self.ips[host]}/24", "dev", "eth0")
                _sh("ip", "-n", namespace, "link", "set", "eth0", "up")
                _sh("ip", "-n", namespace, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def _argv(self, host: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.namespace(host), "unshare", "--mount", "--propagation", "private",
                "--", "/bin/sh", "-c", _PRIVATE_TMP, "host", *argv]

    def start(self, host: str, argv: list[str], env: dict, name: str | None = None,
              files: dict | None = None) -> subprocess.Popen:
        """`argv` on `host`, in the background, in a process group of its own; its
        output in the log folder (`name`.log); `files` ({name: bytes}) in its /tmp."""
        log = open(self.logs / f"{name or host}.log", "ab")
        env = dict(env, ROUGE_TEST_HOST_FILES="1" if files else "0", ROUGE_TEST_KEEP=_kept())
        process = subprocess.Popen(self._argv(host, argv), env=env, stdin=subprocess.PIPE if files else subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        if files:
            process.stdin.write(_tar(files))
            process.stdin.close()
        self.processes.append(process)
        return process

    def run(self, host: str, argv: list[str], env: dict, timeout: float, files: dict | None = None,
            private: bool = True) -> subprocess.CompletedProcess:
        """`argv` on `host` until it ends (stdout and stderr kept).  Not `private`: in
        the host's network namespace only, seeing this machine's files (a test's
        hands, e.g. to upload its inputs to the store)."""
        argv = self._argv(host, argv) if private else ["ip", "netns", "exec", self.namespace(host), *argv]
        env = dict(env, ROUGE_TEST_HOST_FILES="1" if files else "0", ROUGE_TEST_KEEP=_kept())
        process = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        self.processes.append(process)
        try:
            out, err = process.communicate(_tar(files) if files else b"", timeout=timeout)
        finally:
            self.kill(process)
        return subprocess.CompletedProcess(argv, process.returncode, out.decode(errors="replace"),
                                           err.decode(errors="replace"))

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL a process started here and every process of its group."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass

    def __exit__(self, *exc) -> None:
        for process in reversed(self.processes):
            self.kill(process)
        for host in self.names + ["hub"]:
            _remove(self.namespace(host))


def _tar(files: dict) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0
