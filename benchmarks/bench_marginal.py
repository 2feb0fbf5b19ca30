"""Marginal CPU per pair: the cost of one more pair, start-up cancelled, for the
pipeline in process, with 2 worker processes and `rouge-pipeline score`, beside
the C kernel's on the same pairs in the same session.

    python benchmarks/bench_marginal.py --small '/tmp/m20k/*.jsonl' --large '/tmp/m80k/*.jsonl'

For each path, one run on SMALL and one on LARGE (the same corpus, LARGE a
superset), each a fresh process tree measured by benchmarks/bench_pipeline.py's
`measure` (CPU of every process of the tree, peak memory); the marginal CPU per
pair is (CPU at LARGE - CPU at SMALL) / (pairs at LARGE - pairs at SMALL); with
--repeat N, each size runs N times and the median CPU of each is used.  The
kernel's CPU per pair: `RougeScorer.score_batch_values` (the call the pipeline
makes; `score_batch`'s dicts also reported) alone on the LARGE files' pairs
(the fastest of three passes, after JSON parsing), in a fresh process; with
--repeat, measured again before each repetition, and each repetition's
marginal cost divided by the kernel's just before it: the median of these
ratios is the comparison that this shared machine's drifting speed (5-15%
within minutes) does not move.  Writes OUT/marginal.json and OUT/marginal.md
with every command.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_pipeline import HERE, PYROUGE, measure

PATHS = {
    "in process": ["run", "--runner=FnApiRunner", "--direct_running_mode=in_memory"],
    "2 worker processes": ["run", "--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"],
    "score": ["score"],
    # a dask.distributed scheduler and 2 worker processes on loopback, started by
    # this script; their CPU is added to the run's
    "dask, 2 worker processes": ["run", "--runner", "DaskRunner", "--shared-filesystem"],
}


class DaskCluster:
    """`dask scheduler` + `dask worker --nworkers 2 --nthreads 1` on loopback, with
    this checkout importable, started detached (re-parented to init, so they are not
    part of the measured process tree, and started before this script becomes the
    tree's subreaper); `cpu_s()` is the CPU time of every process of the cluster."""

    def __init__(self, python: str, env: dict, cwd: Path):
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        scheduler = shlex.join([python, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                                str(port), "--no-dashboard"])
        workers = shlex.join([python, "-m", "distributed.cli.dask_worker", self.address, "--nworkers", "2",
                              "--nthreads", "1", "--no-dashboard"])
        script = f"{scheduler} >/dev/null 2>&1 & echo $!; {workers} >/dev/null 2>&1 & echo $!"
        out = subprocess.run(["sh", "-c", script], env=env, cwd=cwd, capture_output=True, text=True, check=True)
        self.pids = [int(pid) for pid in out.stdout.split()]
        code = (f"from distributed import Client; import time\nc = Client('{self.address}', timeout=120)\n"
                "while len(c.scheduler_info()['workers']) < 2: time.sleep(0.2)\nc.close()\n")
        subprocess.run([python, "-c", code], env=env, cwd=cwd, check=True, timeout=300)

    def cpu_s(self) -> float:
        from benchmarks.bench_pipeline import processes

        table = processes()
        tree = set(self.pids)
        while more := {pid for pid, (parent, _) in table.items() if parent in tree and pid not in tree}:
            tree |= more
        return sum(table[pid][1] for pid in tree if pid in table)

    def stop(self) -> None:
        import signal

        for pid in reversed(self.pids):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def command(python: str, path: str, config: str, files: list[str], flags: str, out: Path) -> list[str]:
    how = PATHS[path]
    if how[0] == "score":
        return [python, "-m", "pipeline", "score", *files, "--rouge-args", flags]
    return [python, "-m", "pipeline", "run", "--config", config, *[f"--input={f}" for f in files],
            "--output", str(out), "--rouge-args", flags, *how[1:]]


def scored(path: str, out: Path, files: list[str]) -> int:
    """Pairs scored: the run's count; for `score` (which prints a table), the input's rows."""
    if path == "score":
        return sum(sum(1 for _ in open(f, encoding="utf-8")) for f in files)
    return json.loads((out / "run.json").read_text())["counts"]["scored"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", required=True, help="glob of the small input (joined form)")
    ap.add_argument("--large", required=True, help="glob of the large input (joined form)")
    ap.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS))
    ap.add_argument("--rouge-args", default=PYROUGE)
    ap.add_argument("--config", default=str(HERE / "configs" / "pyrouge.toml"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--scratch")
    ap.add_argument("--out", default=str(HERE / "benchmarks" / "results"))
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each size per path, small and large in turn: the marginal cost is taken "
                         "from the median CPU of each size (this machine's run-to-run spread is about 10%%); "
                         "the kernel is measured again before each repetition, and each repetition's "
                         "marginal cost divided by it (the median of those ratios cancels the machine's drift)")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(HERE))
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="rouge-marginal-"))
    scratch.mkdir(parents=True, exist_ok=True)
    clusters = {path: DaskCluster(args.python, env, scratch) for path in args.paths if path.startswith("dask")}
    if ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    sizes = {"small": sorted(glob.glob(args.small)), "large": sorted(glob.glob(args.large))}
    where = f"cd {scratch} && PYTHONPATH={HERE} "

    spec = json.dumps({"files": sizes["large"], "pairs": 10**9, "flags": args.rouge_args})
    kernel_cmd = [args.python, str(HERE / "benchmarks" / "bench_pipeline.py"), "--kernel-worker", spec]

    def measure_kernel() -> dict:
        done = subprocess.run(kernel_cmd, env=env, cwd=scratch, capture_output=True, text=True, check=True)
        return json.loads(done.stdout)

    kernel = measure_kernel()
    kernel_us = 1e6 / kernel["pairs_per_cpu_s"]
    dicts_us = 1e6 / kernel["pairs_per_cpu_s_dicts"]
    print(f"kernel: {kernel['pairs']:,} pairs, {kernel_us:.1f} us/pair packed as the pipeline calls it "
          f"({dicts_us:.1f} us/pair returning a dict of MetricStats per pair)", flush=True)

    results = []
    for path in args.paths:
        every: dict = {"small": [], "large": []}
        cluster = clusters.get(path)
        kernel_each = []  # the kernel again before each repetition: this machine's speed drifts
        for rep in range(args.repeat):
            if args.repeat > 1:
                kernel_each.append(1e6 / measure_kernel()["pairs_per_cpu_s"])
            for size, files in sizes.items():
                out = scratch / f"{path.replace(' ', '-')}-{size}-{rep}"
                cmd = command(args.python, path, args.config, files, args.rouge_args, out)
                if cluster:
                    cmd.append(f"--dask_client_address={cluster.address}")
                cluster_before = cluster.cpu_s() if cluster else 0.0
                with open(scratch / f"{out.name}.log", "w") as log:
                    r = measure(cmd, env, str(scratch), log)
                if cluster:
                    r["cluster_cpu_s"] = cluster.cpu_s() - cluster_before
                    r["cpu_s"] += r["cluster_cpu_s"]
                if r["exit"]:
                    sys.exit(f"{path} {size} failed: see {scratch / out.name}.log")
                r.update(pairs=scored(path, out, files), command=where + shlex.join(cmd))
                r.pop("processes")
                every[size].append(r)
                print(f"{path} {size}: {r['pairs']:,} pairs, {r['cpu_s']:.1f} CPU-s, {r['wall_s']:.1f} s, "
                      f"{r['peak_rss_sum_mib']:,.0f} MiB", flush=True)
        if cluster:
            cluster.stop()
        # the run of median CPU of each size (the lower middle one of an even number)
        runs = {size: sorted(rs, key=lambda r: r["cpu_s"])[(len(rs) - 1) // 2] for size, rs in every.items()}
        marginal = (runs["large"]["cpu_s"] - runs["small"]["cpu_s"]) / (runs["large"]["pairs"] - runs["small"]["pairs"])
        each = [(l["cpu_s"] - s["cpu_s"]) / (l["pairs"] - s["pairs"]) * 1e6 for s, l in zip(every["small"], every["large"])]
        ratios = [u / k for u, k in zip(each, kernel_each)]
        results.append({"path": path, "runs": runs, "marginal_us": marginal * 1e6, "over_kernel": marginal * 1e6 / kernel_us,
                        "each_repetition_us": each, "cpu_s": {size: [r["cpu_s"] for r in rs] for size, rs in every.items()},
                        "kernel_each_us": kernel_each, "each_over_kernel": ratios,
                        "median_over_kernel": sorted(ratios)[(len(ratios) - 1) // 2] if ratios else None})
        print(f"{path}: {marginal * 1e6:.1f} us/pair = {marginal * 1e6 / kernel_us:.1f}x the kernel"
              + (f" (medians of {args.repeat}; each repetition: {', '.join(f'{u:.1f}' for u in each)} us, against the "
                 f"kernel measured before it ({', '.join(f'{k:.1f}' for k in kernel_each)} us): "
                 f"{', '.join(f'{x:.2f}' for x in ratios)}x, median {results[-1]['median_over_kernel']:.2f}x)"
                 if args.repeat > 1 else ""), flush=True)

    record = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "flags": args.rouge_args,
              "kernel": dict(kernel, us_per_pair=kernel_us, command=where + shlex.join(kernel_cmd)), "results": results,
              "command": shlex.join(sys.argv)}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "marginal.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = [f"Marginal CPU per pair, {record['when']}, flags `{args.rouge_args}`; kernel {kernel_us:.1f} us/pair "
             f"({kernel['pairs']:,} pairs; `score_batch_values`, the call the pipeline makes: {dicts_us:.1f} us/pair "
             "with `score_batch`'s dicts of MetricStats).", "",
             "| path | small: pairs / CPU-s / wall s / peak MiB | large: pairs / CPU-s / wall s / peak MiB | us per pair | x kernel |",
             "|---|---|---|---:|---:|"]
    for r in results:
        s, l = r["runs"]["small"], r["runs"]["large"]
        cell = lambda x: f"{x['pairs']:,} / {x['cpu_s']:.1f} / {x['wall_s']:.1f} / {x['peak_rss_sum_mib']:,.0f}"  # noqa: E731
        lines.append(f"| {r['path']} | {cell(s)} | {cell(l)} | {r['marginal_us']:.1f} | {r['over_kernel']:.1f} |")
    if args.repeat > 1:
        lines += ["", f"Each size run {args.repeat} times (small and large in turn); the table shows the run of median "
                  "CPU of each.  Every run's CPU-s and each repetition's marginal cost:", ""]
        cpu = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        lines += [f"* {r['path']}: CPU-s small {cpu(r['cpu_s']['small'])}, large {cpu(r['cpu_s']['large'])}; "
                  f"{', '.join(f'{u:.1f}' for u in r['each_repetition_us'])} us per pair; against the kernel "
                  f"measured before each repetition ({', '.join(f'{k:.1f}' for k in r['kernel_each_us'])} us): "
                  f"{', '.join(f'{x:.2f}' for x in r['each_over_kernel'])}x, median {r['median_over_kernel']:.2f}x"
                  for r in results]
    lines += ["", "Commands:", "", "```", record["command"], record["kernel"]["command"]]
    lines += [r["runs"][size]["command"] for r in results for size in ("small", "large")] + ["```", ""]
    (Path(args.out) / "marginal.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
