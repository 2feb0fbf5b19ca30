"""Full runs, several in a row, per input layout and runner: is every row scored
every time, and what do they cost?

    python benchmarks/make_scale_corpus.py --out /tmp/perf/s1m --systems 10 --documents 100000 --shards 1 --jobs 1
    zcat /tmp/perf/s1m/*.gz > /tmp/perf/one1m.jsonl                      # one file of 1,000,000 rows
    python benchmarks/bench_full_runs.py --layout one=/tmp/perf/one1m.jsonl --shards 16 \\
        --runners default '2 worker processes' --repeat 3 --out /tmp/full

`--shards N` adds the layout "N shards": the first layout's rows dealt round-robin
into N files (made once, in --scratch).  Each run is a fresh `python -m pipeline
run` with issue 18's flags (`-c 95 -r 1000 -n 2 -m`, --rouge-args to change),
measured by benchmarks/bench_pipeline.py's `measure`: exit status, wall time, CPU
of the whole process tree, peak memory (the sum over the tree, and the largest
process).  From run.json: rows read, scored, error rows, and whether they balance.
Writes OUT/full_runs.json and OUT/full_runs.md with every command line.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from tabulate import tabulate

from benchmarks.bench_pipeline import HERE, measure

RUNNERS = {
    "default": [],  # the pipeline's own choice
    "in process": ["--runner=FnApiRunner", "--direct_running_mode=in_memory"],
    "2 worker processes": ["--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"],
}


def deal(source: list[str], shards: int, folder: Path) -> list[str]:
    """The rows of `source` dealt round-robin into `shards` JSONL files in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"part-{i:05d}-of-{shards:05d}.jsonl" for i in range(shards)]
    if all(p.exists() for p in paths):
        return [str(p) for p in paths]
    outs = [open(p, "w", encoding="utf-8") for p in paths]
    try:
        n = 0
        for path in source:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    outs[n % shards].write(line)
                    n += 1
    finally:
        for out in outs:
            out.close()
    return [str(p) for p in paths]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layout", action="append", required=True, metavar="NAME=GLOB", help="an input layout (joined form)")
    ap.add_argument("--shards", type=int, default=0, help="also the first layout's rows in this many files")
    ap.add_argument("--runners", nargs="+", default=["default"], choices=list(RUNNERS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rouge-args", default="-c 95 -r 1000 -n 2 -m")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--scratch", default=tempfile.gettempdir())
    ap.add_argument("--out", default=str(HERE / "benchmarks" / "results"))
    args = ap.parse_args()

    layouts = {}
    for item in args.layout:
        name, _, pattern = item.partition("=")
        layouts[name] = sorted(glob.glob(pattern))
    if args.shards:
        first = next(iter(layouts.values()))
        layouts[f"{args.shards} shards"] = deal(first, args.shards, Path(args.scratch) / f"full-runs-{args.shards}-shards")
    env = dict(os.environ, PYTHONPATH=str(HERE))
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for layout, files in layouts.items():
        for runner in args.runners:
            for k in range(1, args.repeat + 1):
                folder = Path(args.scratch) / "full-runs-out"
                shutil.rmtree(folder, ignore_errors=True)
                cmd = [args.python, "-m", "pipeline", "run", *[f"--input={f}" for f in files], "--output", str(folder),
                       "--rouge-args", args.rouge_args, "--quiet", *RUNNERS[runner]]
                with open(out_dir / "full_runs.log", "a") as log:
                    m = measure(cmd, env, str(HERE), log)
                counts = {}
                if (folder / "run.json").exists():
                    counts = json.loads((folder / "run.json").read_text())["counts"]
                row = {
                    "layout": layout, "runner": runner, "run": k, "exit": m["exit"],
                    "rows_read": counts.get("rows_read"), "scored": counts.get("scored"),
                    "errors": counts.get("errors"), "balanced": counts.get("balanced"),
                    "wall_s": round(m["wall_s"], 1), "cpu_s": round(m["cpu_s"], 1),
                    "peak_sum_mib": round(m["peak_rss_sum_mib"]), "peak_largest_mib": round(m["peak_rss_mib"]),
                    "others_cores": round(m["others_cores"], 2), "command": " ".join(cmd),
                }
                results.append(row)
                print({k: v for k, v in row.items() if k != "command"}, flush=True)
                (out_dir / "full_runs.json").write_text(json.dumps(results, indent=1))
    shown = [{k: v for k, v in r.items() if k != "command"} for r in results]
    text = tabulate(shown, headers="keys", tablefmt="github", intfmt=",")
    commands = "\n".join(sorted({r["command"] for r in results}))
    (out_dir / "full_runs.md").write_text(f"{text}\n\nCommands:\n\n```\n{commands}\n```\n")
    print(text)


if __name__ == "__main__":
    main()
