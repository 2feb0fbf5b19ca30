"""Memory and CPU of all-pairs significance (rouge_core.significance.PairSums) at
many systems: S systems x D documents x C score columns, every pair of systems
tested on every column, Holm across the pairs of each column.

    python benchmarks/bench_significance.py                      # the default grid
    python benchmarks/bench_significance.py --grid 300x1000 100x5 --columns 9
    python benchmarks/bench_significance.py --grid 300x1000 --missing 0.05

Each grid point runs in a fresh process (`--child`), which:

1. imports numpy and rouge_core and records its resident memory (the floor);
2. draws ROUGE-like scores (integer units of 1e-5, per-system offsets plus noise)
   for D documents, a block of 256 documents at a time, as a Beam CombineFn would
   receive them, and adds each block to C PairSums (one per score column: with
   `-n 2 -m`, 3 metrics x recall/precision/F = 9); with --missing, each system
   skips that share of the documents (the pairwise matrices are then needed);
3. merges the C accumulators into fresh ones through pickle (a combiner's merge);
4. computes every pair's paired test on every column and Holm per column.

Measured per point: peak resident memory of the process (VmHWM from /proc, and
ru_maxrss), the floor before any work, CPU seconds (user + system) of the
process, the bytes held by the accumulators, and the number of pair tests.
Results go to benchmarks/results/significance.{json,md}, with the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
BLOCK = 256


def peak_rss_mb() -> float:
    """VmHWM of this process, in MB (falls back to ru_maxrss)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(systems: int, documents: int, columns: int, missing: float, seed: int) -> dict:
    import numpy as np

    from rouge_core.significance import PairSums, holm_array, paired_tests

    floor = rss_mb()
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    rng = np.random.default_rng(seed)
    names = [f"system-{k:04d}" for k in range(systems)]
    offsets = rng.uniform(0.25, 0.45, systems)  # each system's mean score
    accumulators = [PairSums() for _ in range(columns)]
    for start in range(0, documents, BLOCK):
        rows = min(BLOCK, documents - start)
        ids = [f"doc-{i:07d}" for i in range(start, start + rows)]
        difficulty = rng.normal(0, 0.1, (rows, 1))
        present = rng.random((rows, systems)) >= missing if missing else None
        for acc in accumulators:
            scores = np.clip(offsets + difficulty + rng.normal(0, 0.08, (rows, systems)), 0, 1)
            acc.add(ids, names, np.round(scores * 100_000).astype(np.int64), present)
    accumulator_bytes = sum(acc.nbytes for acc in accumulators)
    # a combiner's merge: every accumulator crosses pickle into an empty one
    accumulators = [PairSums().merge(pickle.loads(pickle.dumps(acc))) for acc in accumulators]
    after_sums = cpu_seconds()
    a, b = np.triu_indices(systems, 1)
    significant = 0
    for acc in accumulators:
        result = paired_tests(acc, a, b)
        adjusted = holm_array(result["p_value"])
        significant += int(np.count_nonzero(adjusted < 0.05))
        del result, adjusted
    return {
        "systems": systems,
        "documents": documents,
        "columns": columns,
        "missing": missing,
        "pair_tests": int(len(a) * columns),
        "significant_after_holm": significant,
        "accumulator_mb": round(accumulator_bytes / 2**20, 2),
        "floor_rss_mb": round(floor, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "cpu_s_sums": round(after_sums - cpu0, 2),
        "cpu_s_total": round(cpu_seconds() - cpu0, 2),
        "wall_s": round(time.perf_counter() - wall0, 2),
    }


def run_point(spec: str, args) -> dict:
    systems, documents = (int(x) for x in spec.lower().split("x"))
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        str(systems),
        str(documents),
        "--columns",
        str(args.columns),
        "--missing",
        str(args.missing),
        "--seed",
        str(args.seed),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    env.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: the figure of one worker
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def markdown(results: list[dict], command: str) -> str:
    lines = [
        "# All-pairs significance: memory and CPU (rouge_core.significance.PairSums)",
        "",
        f"`{command}`",
        "",
        (
            f"{platform.node()}, {platform.machine()}, Python {platform.python_version()}, "
            f"{os.cpu_count()} cores (shared), OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '1')}."
        ),
        "",
        (
            "| systems x documents | columns | missing | pair tests | accumulators MB | floor RSS MB "
            "| peak RSS MB | CPU s (sums) | CPU s (total) | significant after Holm |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['systems']:,} x {r['documents']:,} | {r['columns']} | {r['missing']:g} | {r['pair_tests']:,} "
            f"| {r['accumulator_mb']} | {r['floor_rss_mb']} | {r['peak_rss_mb']} | {r['cpu_s_sums']} "
            f"| {r['cpu_s_total']} | {r['significant_after_holm']:,} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--grid", nargs="+", default=["100x5", "300x1000", "1000x1000"], help="SxD points")
    parser.add_argument("--columns", type=int, default=9, help="score columns (9: -n 2 -m, R/P/F)")
    parser.add_argument("--missing", type=float, default=0.0, help="share of documents each system skips")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "benchmarks" / "results"))
    parser.add_argument(
        "--child", nargs=2, type=int, metavar=("SYSTEMS", "DOCUMENTS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.columns, args.missing, args.seed)))
        return
    command = "python benchmarks/bench_significance.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    results = []
    for spec in args.grid:
        results.append(run_point(spec, args))
        print(json.dumps(results[-1]), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "significance" if not args.missing else f"significance-missing-{args.missing:g}"
    (out / f"{name}.json").write_text(json.dumps({"command": command, "results": results}, indent=2) + "\n")
    (out / f"{name}.md").write_text(markdown(results, command))
    print(markdown(results, command))


if __name__ == "__main__":
    main()
