"""The whole `rouge-pipeline run` at scale: wall time, CPU time and memory of the
run's process tree with 1, 2, ... local worker processes, against the C kernel's
own cost per pair on the same pairs.

    python benchmarks/make_scale_corpus.py --out /tmp/scale                  # 4 x 250,000 pairs
    python benchmarks/bench_pipeline.py --input '/tmp/scale/*.jsonl.gz' --workers 1 2
    python benchmarks/bench_pipeline.py --config configs/cnndm.toml --workers 1 2   # 45,960 CNN/DM pairs
    python benchmarks/bench_pipeline.py --repo /work/main --input ... # the code of another checkout

Each run is a fresh `python -m pipeline run` (the code of --repo, put first on
PYTHONPATH; default: the checkout holding this script) with the flags of
--rouge-args (default pyrouge's), on Beam's FnApiRunner in multi-process mode
(--direct_running_mode=multi_processing --direct_num_workers=N; always named, so
the pipeline's own choice of runner for small inputs does not apply; options this
script does not know go to every run, e.g. other Beam options).  Measured:

* wall time; CPU time (user + system) of the whole process tree: this script is
  the tree's subreaper, so every process of the run, Beam's worker processes
  included, is reaped either by its parent or by this script, and
  RUSAGE_CHILDREN counts it;
* peak resident memory of every process of the tree (VmHWM, polled every 0.2 s
  in /proc; a process living under 0.2 s can be missed) and the peak of their sum;
* pairs per wall second and per CPU second (pairs = the run's scored count), the
  speed-up of N workers over 1 (wall time), and the CPU per pair of the pipeline
  over that of the kernel: rouge_core.RougeScorer.score_batch_values alone, in a fresh
  process, on a sample of the same pairs with the same flags (as
  benchmarks/bench_peers.py measures it; the fastest of three passes).

Writes OUT/pipeline.json and OUT/pipeline.md with every command line.  The machine
may be shared: each run records how many cores the rest of the machine kept busy
meanwhile (/proc/stat).  Other work stretches wall time and speed-ups most, but CPU
time too (on a 2-core VM, one busy core made the kernel's CPU time 1.6x longer).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import gzip
import json
import os
import platform
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
TICK = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ the kernel alone (fresh process)
def kernel_worker(spec: dict) -> dict:
    from rouge_core import RougeScorer, RougeSettings, kernel_info

    per_file = -(-spec["pairs"] // len(spec["files"]))
    pairs = []
    for path in spec["files"]:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for _, line in zip(range(per_file), fh):
                row = json.loads(line)
                pairs.append((row["candidate"], row["references"]))
    scorer = RougeScorer(RougeSettings.from_flags(spec["flags"]))

    def fastest(score) -> list:
        passes = []
        for _ in range(3):  # the fastest of three passes: a short measurement on a shared machine is noisy
            before = resource.getrusage(resource.RUSAGE_SELF)
            score(pairs)
            after = resource.getrusage(resource.RUSAGE_SELF)
            passes.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        return passes

    # The kernel as the pipeline calls it (the statistics packed in C), and as a
    # user's score_batch returns them (a dict of MetricStats per pair).
    packed, dicts = fastest(scorer.score_batch_values), fastest(scorer.score_batch)
    return {
        "pairs": len(pairs),
        "cpu_s_passes": packed,
        "pairs_per_cpu_s": len(pairs) / min(packed),
        "cpu_s_passes_dicts": dicts,
        "pairs_per_cpu_s_dicts": len(pairs) / min(dicts),
        "kernel": kernel_info()["kernel"],
    }


# ------------------------------------------------------------------ the process tree in /proc
def processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds so far) for every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK)
    return out


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (every CPU, every process) since boot."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(
        int, Path("/proc/stat").read_text().split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / TICK


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) in KiB; (0, 0) for a process that is gone or a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    values = {
        line.split(":")[0]: int(line.split()[1]) for line in status.splitlines() if line.startswith("Vm")
    }
    return values.get("VmHWM", 0), values.get("VmRSS", 0)


def kind(pid: int, root: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    if pid == root:
        return "main"
    name = Path(cmd[0].decode(errors="replace")).name
    return "beam worker" if b"sdk_worker_main" in b" ".join(cmd) and "python" in name else name


def measure(cmd: list[str], env: dict, cwd: str, log) -> dict:
    """Run `cmd` and follow its process tree until every process of it has ended."""
    seen: dict[int, dict] = {}  # pid -> kind, peak KiB, CPU s at the last look
    tree: set[int] = set()
    me, peak_sum = os.getpid(), 0

    def look(root: int) -> None:
        nonlocal peak_sum
        table = processes()
        tree.intersection_update(table)
        while True:  # this script's descendants: the run's tree, orphans re-parented to this script included
            more = {
                p for p, (parent, _) in table.items() if (parent in tree or parent == me) and p not in tree
            }
            if not more:
                break
            tree.update(more)
        rss_sum = 0
        for pid in tree:
            hwm, rss = memory_kib(pid)
            info = seen.setdefault(pid, {"kind": kind(pid, root), "peak_kib": 0, "cpu_s": 0.0})
            info["peak_kib"] = max(info["peak_kib"], hwm)
            info["cpu_s"] = max(info["cpu_s"], table[pid][1])
            rss_sum += rss
        peak_sum = max(peak_sum, rss_sum)

    before, busy = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_s()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    while True:
        look(proc.pid)
        pid, status, root_usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.2)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    orphans = 0
    while True:  # what the run left running was re-parented to this script: wait for it
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            orphans += 1
        else:
            look(proc.pid)
            time.sleep(0.2)
    after, busy = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_s() - busy
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    elapsed = time.perf_counter() - started
    return {
        "exit": proc.returncode,
        # The machine's other work meanwhile (other jobs, and this script's polling), in cores.
        "others_cores": max(0.0, busy - cpu) / elapsed,
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_s_reaped_by_run": root_usage.ru_utime + root_usage.ru_stime,
        "orphans": orphans,
        "cpu_s_seen_in_proc": sum(p["cpu_s"] for p in seen.values()),
        "processes": [dict(pid=pid, **info) for pid, info in sorted(seen.items())],
        "peak_rss_mib": max(p["peak_kib"] for p in seen.values()) / 1024,
        "peak_rss_sum_mib": peak_sum / 1024,
    }


# ------------------------------------------------------------------ the benchmark
def input_files(args) -> list[str]:
    """The candidate files the run reads (the config's paths are relative to the config)."""
    if args.input:
        patterns = args.input
    else:
        config = tomllib.loads(Path(args.config).read_text())
        base = Path(args.config).resolve().parent
        patterns = [p if "://" in p else str(base / p) for p in config["input"]["candidates"]]
        if config["input"].get("references"):
            return []  # split form: the kernel sample needs joined rows
    return sorted(f for p in patterns for f in glob.glob(p))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--input", action="append", metavar="GLOB", help="joined-form files (default: the config's)"
    )
    ap.add_argument("--config", help="run config (default: REPO/configs/pyrouge.toml)")
    ap.add_argument("--rouge-args", default=PYROUGE, help=f"ROUGE flags (default {PYROUGE!r})")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker processes, one run each")
    ap.add_argument("--repo", default=str(HERE), help="the checkout whose code runs (default: this one)")
    ap.add_argument(
        "--python", default=sys.executable, help="the interpreter with the project's dependencies"
    )
    ap.add_argument("--kernel-pairs", type=int, default=20_000, help="pairs of the kernel's sample (0: skip)")
    ap.add_argument("--scratch", help="folder for the runs' outputs and logs (default: a new one in /tmp)")
    ap.add_argument("--keep-output", action="store_true", help="keep the result folders")
    ap.add_argument(
        "--out", default=str(HERE / "benchmarks" / "results"), help="folder for pipeline.{json,md}"
    )
    ap.add_argument("--kernel-worker", help=argparse.SUPPRESS)
    args, beam_args = ap.parse_known_args()  # the rest goes to every run (Beam options)
    if args.kernel_worker:
        print(json.dumps(kernel_worker(json.loads(args.kernel_worker))))
        return

    repo = Path(args.repo).resolve()
    args.config = str(Path(args.config).resolve() if args.config else repo / "configs" / "pyrouge.toml")
    if ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER: the run's orphans come here
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))
    )
    env.pop("ROUGE_CORE_KERNEL", None)
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="rouge-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    where = f"cd {scratch} && PYTHONPATH={repo} "

    def python(*argv: str) -> str:
        cmd = [args.python, *argv]
        done = subprocess.run(cmd, env=env, cwd=scratch, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"{shlex.join(argv)[:200]} failed:\n{done.stderr[-2000:]}")
        return done.stdout

    imported = python(
        "-c", "import pipeline, rouge_core; print(pipeline.__file__, rouge_core.kernel_info()['kernel'])"
    )
    commit = subprocess.run(
        ["git", "-C", str(repo), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    code = dict(zip(["pipeline", "kernel"], imported.split()), repo=str(repo), commit=commit)
    print(f"code: {code['pipeline']} ({commit}, kernel: {code['kernel']})", flush=True)

    files = input_files(args)
    kernel = None
    if args.kernel_pairs and files:
        spec = json.dumps({"files": files, "pairs": args.kernel_pairs, "flags": args.rouge_args})
        kernel = json.loads(python(str(Path(__file__).resolve()), "--kernel-worker", spec))
        kernel["command"] = where + shlex.join(
            [args.python, str(Path(__file__).resolve()), "--kernel-worker", spec]
        )
        print(f"kernel: {kernel['pairs']:,} pairs, {kernel['pairs_per_cpu_s']:,.0f} pairs/CPU-s", flush=True)

    runs = []
    for n in args.workers:
        output = scratch / f"workers-{n}"
        cmd = [args.python, "-m", "pipeline", "run", "--config", args.config]
        cmd += [f"--input={p}" for p in args.input or []]
        cmd += ["--output", str(output), "--rouge-args", args.rouge_args]
        cmd += ["--runner=FnApiRunner", "--direct_running_mode=multi_processing", f"--direct_num_workers={n}"]
        cmd += beam_args
        with open(scratch / f"workers-{n}.log", "w") as log:
            r = measure(cmd, env, str(scratch), log)
        r.update(workers=n, command=where + shlex.join(cmd))
        if r["exit"] != 0:
            r["log_tail"] = (scratch / f"workers-{n}.log").read_text()[-2000:]
            print(f"workers={n}: exit {r['exit']}\n{r['log_tail']}", flush=True)
            runs.append(r)
            continue
        record = json.loads((output / "run.json").read_text())
        pairs = record["counts"]["scored"]
        r.update(
            pairs=pairs,
            rows_read=record["counts"]["rows_read"],
            errors=record["counts"]["errors"],
            run_json_seconds=record["seconds"],
            kernel_in_run=record["versions"]["rouge_core_kernel"],
            pairs_per_wall_s=pairs / r["wall_s"],
            pairs_per_cpu_s=pairs / r["cpu_s"],
        )
        if kernel:
            r["cpu_per_pair_over_kernel"] = kernel["pairs_per_cpu_s"] / r["pairs_per_cpu_s"]
        if not args.keep_output:
            shutil.rmtree(output)
        print(
            f"workers={n}: {pairs:,} pairs, wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, "
            f"{r['pairs_per_cpu_s']:,.0f} pairs/CPU-s, {len(r['processes'])} processes, "
            f"peak RSS {r['peak_rss_mib']:.0f} MiB (sum {r['peak_rss_sum_mib']:.0f} MiB), "
            f"others kept {r['others_cores']:.2f} cores busy",
            flush=True,
        )
        runs.append(r)
    one = next((r for r in runs if r["workers"] == 1 and r["exit"] == 0), None)
    for r in runs:
        if one and r["exit"] == 0:
            r["speedup_vs_1"] = one["wall_s"] / r["wall_s"]

    record = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "code": code,
        "bench_command": shlex.join([sys.executable] + sys.argv),
        "input": args.input or f"the config's [input] ({args.config})",
        "files": len(files),
        "rouge_args": args.rouge_args,
        "kernel": kernel,
        "runs": runs,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pipeline.json").write_text(json.dumps(record, indent=1) + "\n")
    (out / "pipeline.md").write_text(markdown(record))
    print(f"wrote {out / 'pipeline.json'} and {out / 'pipeline.md'}")


COLUMNS = [
    "workers", "pairs", "wall s", "CPU s", "cores used", "pairs/wall-s", "pairs/CPU-s", "speed-up vs 1",
    "CPU per pair / kernel's", "processes", "peak RSS MiB (largest process)", "peak RSS MiB (sum)",
    "CPU s by process", "others' cores",
]  # fmt: skip
NOTE = (
    "CPU s is user + system time of every process of the run (its worker processes included; this script is "
    "the subreaper of the tree); CPU s by process is each process's own time as last seen in /proc (polled "
    "every 0.2 s; `sh`: the shell Beam starts each worker with).  Wall time ends when the run's main process "
    "exits; cores used: CPU s / wall s; speed-up: wall time of 1 worker over N workers.  Others' cores: the "
    "CPU time the machine spent outside the run meanwhile (other jobs: the machine may be shared), over the wall "
    "time; with it above 0.1 or so, wall times and speed-ups are not the run's own."
)


def markdown(record: dict) -> str:
    code, machine, kernel = record["code"], record["machine"], record["kernel"]
    title = (
        f"`rouge-pipeline run`, {record['date_utc']} UTC, {machine['platform']}, {machine['cpus']} CPUs, "
        f"Python {machine['python']}; code {code['repo']} ({code['commit']}, kernel: {code['kernel']}); "
        f"input {record['input']} ({record['files']} files); flags `{record['rouge_args']}`."
    )
    lines = [
        title,
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---:|" * (len(COLUMNS) - 2) + "---|---|",
    ]
    for r in record["runs"]:
        if r["exit"] != 0:
            lines.append(f"| {r['workers']} | failed (exit {r['exit']}) |" + " |" * (len(COLUMNS) - 2))
            continue
        ratio = r.get("cpu_per_pair_over_kernel")
        cells = [
            r["workers"], f"{r['pairs']:,}", f"{r['wall_s']:.1f}", f"{r['cpu_s']:.1f}",
            f"{r['cpu_s'] / r['wall_s']:.2f}", f"{r['pairs_per_wall_s']:,.0f}",
            f"{r['pairs_per_cpu_s']:,.0f}",
            f"{r['speedup_vs_1']:.2f}x" if "speedup_vs_1" in r else "", f"{ratio:.1f}x" if ratio else "",
            len(r["processes"]), f"{r['peak_rss_mib']:,.0f}", f"{r['peak_rss_sum_mib']:,.0f}",
            ", ".join(f"{p['kind']} {p['cpu_s']:.1f}" for p in r["processes"]),
            f"{r['others_cores']:.2f}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    lines.append("")
    if kernel:
        lines.append(
            f"Kernel alone: `RougeScorer.score_batch_values` on {kernel['pairs']:,} of the pairs (the first rows of "
            f"each file), {kernel['pairs_per_cpu_s']:,.0f} pairs/CPU-s ({kernel['kernel']} kernel; the fastest "
            f"of {len(kernel['cpu_s_passes'])} passes)."
        )
    lines += ["", NOTE, "", "Commands:", "", "```", record["bench_command"]]
    lines += [r["command"] for r in record["runs"]] + ["```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
