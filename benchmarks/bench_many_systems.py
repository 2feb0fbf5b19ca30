"""Many systems with significance: `rouge-pipeline run` on S systems x D documents
(every pair of systems tested), its wall time, CPU time and peak memory.

    python benchmarks/bench_many_systems.py --grid 100x1000 300x1000 1000x1000
    python benchmarks/bench_many_systems.py --grid 300x1000 --missing 0.01 --check 200
    python benchmarks/bench_many_systems.py --grid 1000x1000 --form split
    python benchmarks/bench_many_systems.py --grid 100x1000 -- --direct_running_mode=multi_processing

The input is generated, deterministically (the bytes are a function of S, D,
--missing and --seed), by benchmarks/make_scale_corpus.py's generator:
CNN/DM-like texts (one reference of about 56 words, candidates that perturb
it, a different share kept by each system), in --shards gzipped JSONL files that
each hold a block of documents for every system: in the joined form (one row per
(system, document), with the references: S copies of each reference) or, with
--form split, without them, and the references once per document in
references.jsonl.gz.  With --missing, each
(system, document) row is left out with that probability (but every document
keeps at least two systems).  Inputs are cached in --scratch.

Each grid point is one fresh `python -m pipeline run` (the default runner, the
pipeline's own choice, unless Beam options follow `--`), with --rouge-args
(default `-c 95 -r 1000 -n 2 -m`: ROUGE-1, -2, -L, 9 score columns for the
significance table).  Measured: wall time; CPU time of the whole process tree
(RUSAGE_CHILDREN: this script is the tree's subreaper); peak memory of the
process tree: the largest sum of the tree's resident memory over the samples
(every 0.2 s, /proc/PID/status VmRSS of every descendant) and the largest
single process (VmHWM).  benchmarks/bench_pipeline.py's `measure` does the
sampling.

--check N recomputes N pairs of the significance table (ROUGE-1 F, spread over
the table) with scipy.stats.ttest_rel from the run's per-document table and
prints the largest difference of t and of p (the full check on a small grid is
tests/pipeline/test_significance_grid.py).

Results go to OUT/many-systems.{json,md}, with the commands.
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from bench_pipeline import measure
from make_scale_corpus import make_chunk, words_and_weights

FLAGS = "-c 95 -r 1000 -n 2 -m"
CHUNK = 50  # documents generated at a time (x systems rows)


def make_input(folder: Path, systems: int, documents: int, shards: int, missing: float, seed: int, form: str) -> int:
    """Write the grid's shards into `folder` (once); returns the number of candidate rows.
    Split form: the candidate rows without references, and references.jsonl.gz with
    each document's references once."""
    done = folder / "ROWS"
    if done.exists():
        return int(done.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    words, cumulative = words_and_weights(seed)
    drop = np.random.default_rng([seed, systems, documents, 7])
    rows = 0
    bounds = [documents * k // shards for k in range(shards + 1)]
    references = None
    if form == "split":
        raw = open(folder / "references.jsonl.gz", "wb")
        references = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0)
    for shard in range(shards):
        path = folder / f"part-{shard:05d}-of-{shards:05d}.jsonl.gz"
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0) as fh:
            for first in range(bounds[shard], bounds[shard + 1], CHUNK):
                n = min(CHUNK, bounds[shard + 1] - first)
                lines = make_chunk(seed, 0, first, n, systems, words, cumulative)  # one list per system
                keep = drop.random((systems, n)) >= missing
                keep[:2] |= keep.sum(axis=0) < 2  # every document keeps two systems at least
                out = [lines[s][d] for d in range(n) for s in range(systems) if keep[s, d]]
                rows += len(out)
                if references:
                    parsed = [json.loads(line) for line in out]
                    out = [json.dumps({k: r[k] for k in ("system", "doc_id", "candidate")}) + "\n" for r in parsed]
                    first_rows = [json.loads(lines[0][d]) for d in range(n)]
                    references.write("".join(
                        json.dumps({"doc_id": r["doc_id"], "references": r["references"]}) + "\n" for r in first_rows
                    ).encode())  # fmt: skip
                fh.write("".join(out).encode())
    if references:
        references.close()
        raw.close()
    done.write_text(str(rows))
    return rows


def check_significance(output: Path, pairs: int) -> dict:
    """Largest |t - t_scipy| and |p - p_scipy| over `pairs` pairs of ROUGE-1 F rows,
    from the run's per-document table (scipy.stats.ttest_rel on the documents both
    systems scored)."""
    import pyarrow.parquet as pq
    from scipy import stats

    rows = [
        r
        for r in pq.read_table(output / "significance.parquet").to_pylist()
        if r["metric"] == "ROUGE-1" and r["measure"] == "f_measure"
    ]
    docs = pq.read_table(output / "per_document", columns=["system", "doc_id", "metric", "f_measure"]).to_pylist()
    units = {}  # system -> {doc_id: F in units of 1e-5, as the run's scores enter the test}
    for d in docs:
        if d["metric"] == "ROUGE-1":
            units.setdefault(d["system"], {})[d["doc_id"]] = round(d["f_measure"] * 100_000)
    picked = [rows[k] for k in np.linspace(0, len(rows) - 1, min(pairs, len(rows))).astype(int)]
    dt = dp = 0.0
    for row in picked:
        a, b = units[row["system_a"]], units[row["system_b"]]
        both = sorted(a.keys() & b.keys())
        ref = stats.ttest_rel([a[i] for i in both], [b[i] for i in both])
        dt = max(dt, abs(row["statistic"] - ref.statistic))
        dp = max(dp, abs(row["p_value"] - max(ref.pvalue, 2.0 ** (1 - len(both)))))
    return {"pairs_checked": len(picked), "max_abs_t_diff": dt, "max_abs_p_diff": dp}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", nargs="+", default=["100x1000", "300x1000", "1000x1000"], help="SYSTEMSxDOCUMENTS")
    ap.add_argument("--missing", type=float, default=0.0, help="share of (system, document) rows left out")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument(
        "--form", choices=["joined", "split"], default="joined",
        help="joined: references on every row (S copies per document); split: once per document",
    )  # fmt: skip
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--rouge-args", default=FLAGS)
    ap.add_argument("--check", type=int, default=0, metavar="N", help="check N pairs against scipy")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--scratch", default=str(Path(tempfile.gettempdir()) / "rouge-many-systems"))
    ap.add_argument("--out", default=str(HERE / "benchmarks" / "results"))
    ap.add_argument("beam_args", nargs="*", help="Beam options for every run (after --)")
    args = ap.parse_args()

    if ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    runs = []
    for point in args.grid:
        systems, documents = map(int, point.split("x"))
        name = f"{systems}x{documents}-m{args.missing:g}-s{args.seed}-{args.form}"
        folder = scratch / f"input-{name}"
        started = time.perf_counter()
        rows = make_input(folder, systems, documents, args.shards, args.missing, args.seed, args.form)
        made = time.perf_counter() - started
        output = scratch / f"out-{name}"
        shutil.rmtree(output, ignore_errors=True)
        cmd = [args.python, "-m", "pipeline", "run", "--config", str(HERE / "configs" / "pyrouge.toml")]
        cmd += [f"--input={folder}/part-*.jsonl.gz", "--output", str(output), "--rouge-args", args.rouge_args]
        if args.form == "split":
            cmd += [f"--references={folder}/references.jsonl.gz"]
        cmd += ["--quiet", *args.beam_args]
        with open(scratch / f"run-{name}.log", "w") as log:
            r = measure(cmd, env, str(scratch), log)
        r.update(
            systems=systems, documents=documents, missing=args.missing, form=args.form, rows=rows,
            input_seconds=made,
            command=f"cd {scratch} && PYTHONPATH={HERE} " + shlex.join(cmd),
        )  # fmt: skip
        r["processes"] = [{k: p[k] for k in ("kind", "peak_kib", "cpu_s")} for p in r["processes"]]
        if r["exit"] != 0:
            r["log_tail"] = (scratch / f"run-{name}.log").read_text()[-3000:]
            print(f"{point}: exit {r['exit']}\n{r['log_tail']}", flush=True)
        else:
            record = json.loads((output / "run.json").read_text())
            import pyarrow.parquet as pq

            r.update(
                scored=record["counts"]["scored"],
                significance_rows=pq.read_metadata(output / "significance.parquet").num_rows,
            )
            if args.check:
                r.update(check_significance(output, args.check))
            print(
                f"{point} (missing {args.missing:g}): {r['scored']:,} pairs scored, {r['significance_rows']:,} "
                f"significance rows; wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, peak RSS of the tree "
                f"{r['peak_rss_sum_mib']:,.0f} MiB (largest process {r['peak_rss_mib']:,.0f} MiB)"
                + (f"; vs scipy on {r['pairs_checked']} pairs: |dt| <= {r['max_abs_t_diff']:.2g}, "
                   f"|dp| <= {r['max_abs_p_diff']:.2g}" if args.check else ""),
                flush=True,
            )  # fmt: skip
            shutil.rmtree(output)
        runs.append(r)

    record = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "bench_command": shlex.join([sys.executable] + sys.argv),
        "rouge_args": args.rouge_args,
        "runs": runs,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "many-systems.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = [
        f"`rouge-pipeline run` with significance (every pair), {record['date_utc']} UTC, {record['machine']['cpus']} "
        f"CPUs, Python {record['machine']['python']}; flags `{args.rouge_args}`.",
        "",
        "| systems x documents | input form | missing | rows | significance rows | wall s | CPU s | peak RSS of the tree MiB "
        "| largest process MiB | others' cores | exit |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {r['systems']:,} x {r['documents']:,} | {r['form']} | {r['missing']:g} | {r['rows']:,} | "
            f"{r.get('significance_rows', 0):,} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{r['peak_rss_sum_mib']:,.0f} | {r['peak_rss_mib']:,.0f} | {r['others_cores']:.2f} | {r['exit']} |"
        )
    lines += ["", "Commands:", "", "```", record["bench_command"], *[r["command"] for r in runs], "```", ""]
    (out / "many-systems.md").write_text("\n".join(lines))
    print(f"wrote {out / 'many-systems.json'} and {out / 'many-systems.md'}")


if __name__ == "__main__":
    main()
