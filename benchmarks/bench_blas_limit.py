"""The bootstrap's block products with BLAS limited per block (the context
`rouge_core.aggregate.one_blas_thread`, as committed), limited for good (the
process-wide limit it replaced) and not limited: CPU seconds of
`SystemSums` over N documents (7 metrics, 1,000 replicates), two processes at
once (as two Beam workers on a 2-core machine), each a fresh interpreter.

    python benchmarks/bench_blas_limit.py --documents 100000 --repeat 3 --out benchmarks/results

Writes OUT/blas_limit.json and OUT/blas_limit.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

MODES = ("context", "global", "none")

CHILD = r"""
import contextlib, json, sys, time
import numpy as np
import threadpoolctl
from rouge_core import aggregate
mode, n = sys.argv[1], int(sys.argv[2])
if mode == "global":  # the limit for good, as before issue 32
    threadpoolctl.threadpool_limits(limits=1, user_api="blas")
if mode != "context":
    aggregate.one_blas_thread = contextlib.nullcontext
rng = np.random.default_rng(0)
docs = []
for i in range(n):
    v = rng.integers(0, 50, size=(7, 6)).astype(np.float64)
    v[:, 3:6] = rng.integers(0, 100_000, size=(7, 3)) / 1e5
    docs.append((f"d{i}", v.tobytes()))
cpu = time.process_time()
sums = aggregate.SystemSums(1000, 20).extend(docs, 0).flush(0)
[sums.metric(m) for m in range(7)]
print(json.dumps({"cpu": time.process_time() - cpu}))
"""


def measure(mode: str, documents: int) -> list[float]:
    """CPU seconds of each of two processes run at once."""
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    children = [subprocess.Popen([sys.executable, "-c", CHILD, mode, str(documents)], stdout=subprocess.PIPE,
                                 text=True, env=env) for _ in range(2)]
    return [json.loads(child.communicate()[0])["cpu"] for child in children]


CONTEXT_COST = r"""
import json, time
import numpy
from rouge_core.aggregate import one_blas_thread
cpu = time.process_time()
for _ in range(10_000):
    with one_blas_thread():
        pass
print(json.dumps({"us": (time.process_time() - cpu) * 100}))
"""


def context_cost() -> float:
    """CPU microseconds of entering and leaving `one_blas_thread` (once per block)."""
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    done = subprocess.run([sys.executable, "-c", CONTEXT_COST], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)["us"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    results = {mode: [] for mode in MODES}
    for repetition in range(args.repeat):
        for mode in MODES[repetition % 2:] + MODES[:repetition % 2]:  # (the order alternates: the load drifts)
            results[mode] += measure(mode, args.documents)
    cost = context_cost()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    record = {"documents": args.documents, "repeat": args.repeat, "commit": commit,
              "date": time.strftime("%Y-%m-%d"), "cpu_seconds": results, "context_us": cost,
              "command": " ".join(["python", *sys.argv])}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "blas_limit.json"), "w") as fh:
        json.dump(record, fh, indent=1)
    lines = [f"# BLAS limit of the bootstrap's block products ({record['date']}, {commit})", "",
             f"`{record['command']}`: SystemSums over {args.documents:,} documents (7 metrics, 1,000 replicates), "
             "two fresh processes at once on this 2-core machine; CPU seconds of each process.", "",
             "| BLAS | CPU seconds (each process, each repetition) | median | least |", "|---|---|---|---|"]
    names = {"context": "one thread per block, restored after (committed)", "global": "one thread for good (before)",
             "none": "not limited"}
    for mode in MODES:
        values = sorted(results[mode])
        lines.append(f"| {names[mode]} | {', '.join(f'{v:.2f}' for v in results[mode])} | "
                     f"{values[len(values) // 2]:.2f} | {values[0]:.2f} |")
    lines += ["", f"Entering and leaving the context (once per block of 512 documents): {cost:.1f} us of CPU."]
    with open(os.path.join(args.out, "blas_limit.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
