"""Dask against the in-process runner: CPU of the whole process tree on the same input,
tables compared byte for byte.

    python benchmarks/make_scale_corpus.py --out /tmp/dask80k --systems 8 --documents 10000 --shards 1 --jobs 1
    python benchmarks/bench_dask.py --input '/tmp/dask80k/*.jsonl.gz' --repeat 3 --out benchmarks/results

Each repetition runs `python -m pipeline run` twice on the same input with the flags
of --rouge-args (default issue 30's: `-c 95 -r 1000 -n 2 -m`):

* in process (`--runner=FnApiRunner --direct_running_mode=in_memory`);
* on Dask: a fresh `dask scheduler` and `dask worker --nworkers N --nthreads 1`
  (default 2 workers) on loopback, started by this script, and the run with
  `--runner DaskRunner --dask_client_address ... --shared-filesystem`, twice: on
  the fresh cluster, then again on the same cluster (its workers have imported
  Beam and the pipeline's modules by then, as a long-lived cluster's have).

CPU is user + system time: for the driver, of its whole process tree (the
driver and what it reaped: RUSAGE_CHILDREN once this script reaped it); for the
cluster, what the scheduler and every worker process (nannies included) used from
just before the driver started until it ended (from /proc).  The cluster is started
before and stopped after those windows (its start-up is not a run's), so the
workers' first imports of Beam and the pipeline's modules (seconds of CPU in each
worker) are in the first run's window, and not in the second's.  Writes
OUT/dask.json and OUT/dask.md with the commands.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_pipeline import HERE, machine_busy_s, processes

TABLES = ["system_scores.csv", "system_scores.parquet", "rouge155.txt", "significance.csv", "significance.parquet"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(cmd: list[str], env: dict, log) -> dict:
    """Run `cmd`: its exit status, wall time, the CPU of it and its reaped descendants,
    and the cores the rest of the machine kept busy meanwhile."""
    before, busy, started = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_s(), time.perf_counter()
    code = subprocess.run(cmd, env=env, cwd=HERE, stdout=log, stderr=subprocess.STDOUT).returncode
    after, busy, wall = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_s() - busy, time.perf_counter() - started
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"exit": code, "wall_s": wall, "cpu_s": cpu, "others_cores": max(0.0, busy - cpu) / wall}


def tree_cpu(roots: list[int]) -> float:
    """CPU seconds used so far by `roots` and every process below them (alive ones)."""
    table = processes()
    found, stack = set(), list(roots)
    while stack:
        pid = stack.pop()
        if pid in table and pid not in found:
            found.add(pid)
            stack += [p for p, (parent, _) in table.items() if parent == pid]
    return sum(table[p][1] for p in found)


class Cluster:
    """A scheduler and `workers` worker processes on loopback, each in its own session."""

    def __init__(self, workers: int, env: dict, log):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.workers = workers
        self.env, self.log = env, log

    def __enter__(self) -> "Cluster":
        python = sys.executable
        self.scheduler = subprocess.Popen(
            [python, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(self.port),
             "--no-dashboard"], env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.worker = subprocess.Popen(
            [python, "-m", "distributed.cli.dask_worker", self.address, "--nworkers", str(self.workers),
             "--nthreads", "1", "--no-dashboard"], env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        from distributed import Client

        with Client(self.address, timeout=120) as client:
            deadline = time.monotonic() + 120
            while len(client.scheduler_info()["workers"]) < self.workers:
                if time.monotonic() > deadline:
                    raise RuntimeError("the Dask workers did not start")
                time.sleep(0.2)
        time.sleep(1)  # the workers' own start-up settles
        return self

    def cpu(self) -> float:
        return tree_cpu([self.scheduler.pid, self.worker.pid])

    def __exit__(self, *exc) -> None:
        for process in (self.worker, self.scheduler):
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="glob of the input files")
    ap.add_argument("--rouge-args", default="-c 95 -r 1000 -n 2 -m")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--scratch", default=None, help="folder for the runs' outputs (default: a temporary one)")
    args = ap.parse_args()
    inputs = sorted(glob.glob(args.input))
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="bench-dask-"))
    scratch.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(HERE))
    base = [sys.executable, "-m", "pipeline", "run", *[f"--input={p}" for p in inputs],
            "--rouge-args", args.rouge_args, "--quiet"]
    rows, commands = [], []
    with open(scratch / "log.txt", "w") as log:
        for rep in range(1, args.repeat + 1):
            local_out, dask_out = scratch / "inprocess", scratch / "dask"
            for folder in (local_out, dask_out):
                shutil.rmtree(folder, ignore_errors=True)
            local = base + ["--output", str(local_out), "--runner=FnApiRunner", "--direct_running_mode=in_memory"]
            measured = measure(local, env, log)
            rows.append({"run": rep, "runner": "in process", "exit": measured["exit"], "cpu_s": measured["cpu_s"],
                         "wall_s": measured["wall_s"], "others_cores": measured["others_cores"]})
            local_cpu = rows[-1]["cpu_s"]
            print(json.dumps(rows[-1]), flush=True)
            with Cluster(args.workers, env, log) as cluster:
                dask = base + ["--output", str(dask_out), "--runner", "DaskRunner",
                               f"--dask_client_address={cluster.address}", "--shared-filesystem"]
                for which in ("fresh cluster", "same cluster again"):
                    shutil.rmtree(dask_out, ignore_errors=True)
                    before = cluster.cpu()
                    measured = measure(dask, env, log)
                    cluster_cpu = cluster.cpu() - before
                    same = all((local_out / t).read_bytes() == (dask_out / t).read_bytes() for t in TABLES)
                    same = same and _per_document(local_out) == _per_document(dask_out)
                    rows.append({"run": rep, "runner": f"Dask, {args.workers} workers, {which}", "exit": measured["exit"],
                                 "cpu_s": measured["cpu_s"] + cluster_cpu, "driver_cpu_s": measured["cpu_s"],
                                 "cluster_cpu_s": cluster_cpu, "wall_s": measured["wall_s"],
                                 "others_cores": max(0.0, measured["others_cores"] - cluster_cpu / measured["wall_s"]),
                                 "tables_identical": same})
                    rows[-1]["ratio"] = rows[-1]["cpu_s"] / local_cpu
                    print(json.dumps(rows[-1]), flush=True)
            commands = [shlex.join(local), shlex.join(dask)]
    write(Path(args.out), rows, commands, args, inputs)


def _per_document(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted((folder / "per_document").glob("*"))}


def write(out: Path, rows: list, commands: list, args, inputs: list) -> None:
    from tabulate import tabulate

    out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    def median(which: str):
        ratios = sorted(r["ratio"] for r in rows if r["runner"].endswith(which))
        return ratios, (ratios[len(ratios) // 2] if ratios else None)

    (fresh, fresh_median), (again, again_median) = median("fresh cluster"), median("same cluster again")
    meta = {"date": time.strftime("%Y-%m-%d"), "commit": commit, "machine": platform.platform(),
            "cores": os.cpu_count(), "inputs": inputs, "rouge_args": args.rouge_args, "workers": args.workers,
            "ratios_fresh_cluster": fresh, "median_ratio_fresh_cluster": fresh_median,
            "ratios_same_cluster_again": again, "median_ratio_same_cluster_again": again_median}
    (out / "dask.json").write_text(json.dumps({"meta": meta, "runs": rows, "commands": commands}, indent=1) + "\n")
    columns = ["run", "runner", "exit", "cpu_s", "driver_cpu_s", "cluster_cpu_s", "wall_s", "others_cores",
               "tables_identical", "ratio"]
    table = tabulate([[r.get(c, "") for c in columns] for r in rows], headers=columns, tablefmt="github", floatfmt=".2f")
    text = (f"# Dask against in process: CPU of the whole process tree\n\n"
            f"{meta['date']}, commit {commit}, {meta['cores']} cores ({meta['machine']}); {len(inputs)} input files; "
            f"flags `{args.rouge_args}`; Dask: a scheduler and {args.workers} workers x 1 thread on loopback.\n\n"
            f"{table}\n\nDask / in process CPU, on a fresh cluster: {', '.join(f'{r:.2f}' for r in fresh)} "
            f"(median {fresh_median:.2f}); on the same cluster again: {', '.join(f'{r:.2f}' for r in again)} "
            f"(median {again_median:.2f}).\n\nCommands (benchmarks/bench_dask.py):\n\n```\n"
            + "\n".join(commands) + "\n```\n")
    (out / "dask.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
