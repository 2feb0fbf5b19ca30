"""Memory and CPU of all-pairs significance (rouge_core.significance.PairSums) at
many systems: S systems x D documents x C score columns, every pair of systems
tested on every column, Holm across the pairs of each column.

    python benchmarks/bench_significance.py                      # the default grid
    python benchmarks/bench_significance.py --grid 300x1000 100x5 --columns 9
    python benchmarks/bench_significance.py --grid 300x1000 --missing 0.05
    python benchmarks/bench_significance.py --t-error     # the t approximation vs the exact test
    python benchmarks/bench_significance.py --beam --grid 100x5 300x100   # the Beam transform

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

--beam runs the pipeline's PairedSignificance transform instead (Beam's
FnApiRunner in this process, in_memory): synthetic ScoredDocuments of 3 metrics
(ROUGE-1, -2, -L: 9 score columns) in, significance.{parquet,csv,md} written to a
temporary folder; peak RSS and CPU of the process as above.

--t-error measures how far Student's t (used above 20 documents) is from the exact
sign-flip p-value, on real data: the per-document ROUGE-1 F differences of the six
pairs of CNN/DM systems (../shared/data, scored with -n 2 -m), 600 random subsets of
n documents per n, each shifted by a random share of its mean so that p spreads over
(0, 1]; written to benchmarks/results/significance-t-error.md.
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


def t_error(seed: int, sizes=(10, 15, 20, 21, 25, 30), subsets: int = 600) -> str:
    """The t approximation against exact enumeration on CNN/DM differences (a table)."""
    import gzip

    import numpy as np

    from rouge_core import RougeScorer, RougeSettings, student_t
    from rouge_core.significance import exact_sign_flip_p

    folder = (
        Path(os.environ.get("ROUGE_SHARED_DATA") or HERE.parent / "shared" / "data") / "cnndm_test_outputs"
    )
    scorer = RougeScorer(RougeSettings.from_flags("-n 2 -m"))
    systems = ["see2017_baseline_50k", "see2017_pointer_gen", "see2017_pointer_gen_cov", "simcls_2021"]
    units = {}
    for system in systems:
        with gzip.open(folder / f"{system}.jsonl.gz", "rt", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh]
        units[system] = {
            r["doc_id"]: round(
                scorer.score(candidate=r["candidate"], references=r["references"])["ROUGE-1"].f_measure * 1e5
            )
            for r in rows
        }
    ids = sorted(units[systems[0]])
    differences = [
        np.array([units[a][d] - units[b][d] for d in ids])
        for i, a in enumerate(systems)
        for b in systems[i + 1 :]
    ]
    rng = np.random.default_rng(seed)
    lines = [
        (
            "| n | max abs(p_t - p_exact) | p_t / p_exact for p_exact in [0.001, 0.1]: 5% - 50% - 95% "
            "(min - max) | decisions at 0.05 that differ |"
        ),
        "|---:|---:|---|---:|",
    ]
    for n in sizes:
        d = []
        for k in range(subsets):
            sample = differences[k % len(differences)][rng.choice(len(ids), n, replace=False)]
            d.append(np.round(sample - rng.uniform(0, 1) * sample.mean()).astype(np.int64))
        d = np.array(d)
        exact = exact_sign_flip_p(d)
        total, square = d.sum(axis=1), (d * d).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = total * np.sqrt(n - 1) / np.sqrt(n * square - total * total)
        approximate = student_t.two_sided_p(np.nan_to_num(t, nan=0.0), n - 1)
        middle = (exact >= 1e-3) & (exact <= 0.1)
        ratio = approximate[middle] / exact[middle]
        q = np.quantile(ratio, [0.05, 0.5, 0.95])
        lines.append(
            f"| {n} | {np.abs(approximate - exact).max():.3f} | {q[0]:.2f} - {q[1]:.2f} - {q[2]:.2f} "
            f"({ratio.min():.3f} - {ratio.max():.1f}) | {int(((approximate < 0.05) != (exact < 0.05)).sum())} of {subsets} |"
        )
    return "\n".join(lines) + "\n"


def beam_child(systems: int, documents: int, seed: int) -> dict:
    """PairedSignificance on synthetic scored documents, in this process."""
    import tempfile

    import apache_beam as beam
    import numpy as np
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.beam.documents import ScoredDocument, batches_of
    from pipeline.beam.significance import PairedSignificance, write_significance_tables
    from rouge_core.aggregate import stats_bytes
    from rouge_core.scoring import MetricStats

    floor = rss_mb()
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    tags = ["ROUGE-1", "ROUGE-2", "ROUGE-L"]
    rng = np.random.default_rng(seed)
    offsets = rng.uniform(0.25, 0.45, systems)
    scored = []
    for i in range(documents):
        difficulty = rng.normal(0, 0.1)
        for k in range(systems):
            scores = {}
            for tag in tags:
                r, p = np.round(np.clip(offsets[k] + difficulty + rng.normal(0, 0.08, 2), 0, 1), 5)
                f = round(2 * r * p / (r + p), 5) if r + p else 0.0
                scores[tag] = MetricStats(10, 10, 5, float(r), float(p), f)
            scored.append(
                ScoredDocument("default", f"system-{k:04d}", f"doc-{i:07d}", stats_bytes(scores, tags))
            )
    with tempfile.TemporaryDirectory() as folder:
        options = PipelineOptions(["--runner=FnApiRunner", "--direct_running_mode=in_memory"])
        with beam.Pipeline(options=options) as p:
            transform = PairedSignificance({"default": tags})
            (
                p
                | beam.Create([b for i in range(0, len(scored), 256 * systems) for b in batches_of(scored[i:i + 256 * systems])])
                | transform
                | beam.combiners.ToList()
                | beam.Map(write_significance_tables, folder, {"default": tags}, transform.describe())
            )
        table_mb = sum(f.stat().st_size for f in Path(folder).iterdir()) / 2**20
    return {
        "systems": systems,
        "documents": documents,
        "columns": 9,
        "missing": 0.0,
        "pair_tests": systems * (systems - 1) // 2 * 9,
        "significant_after_holm": None,
        "accumulator_mb": None,
        "table_mb": round(table_mb, 1),
        "floor_rss_mb": round(floor, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "cpu_s_sums": None,
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
    ] + (["--beam"] if args.beam else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    env.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: the figure of one worker
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cell(value) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) else str(value)


def markdown(results: list[dict], command: str, load: tuple) -> str:
    lines = [
        "# All-pairs significance: memory and CPU (rouge_core.significance.PairSums)",
        "",
        f"`{command}`",
        "",
        (
            f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores shared with "
            f"other work (load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the start), "
            f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '1')}."
        ),
        "",
        (
            "| systems x documents | columns | missing | pair tests | accumulators MB | floor RSS MB "
            "| peak RSS MB | CPU s (sums) | CPU s (total) | wall s | significant after Holm |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        cells = [
            f"{r['systems']:,} x {r['documents']:,}",
            *(
                _cell(r[k])
                for k in (
                    "columns",
                    "missing",
                    "pair_tests",
                    "accumulator_mb",
                    "floor_rss_mb",
                    "peak_rss_mb",
                    "cpu_s_sums",
                    "cpu_s_total",
                    "wall_s",
                    "significant_after_holm",
                )
            ),
        ]
        lines.append("| " + " | ".join(cells) + " |")
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
    parser.add_argument("--beam", action="store_true", help="run the Beam transform (3 metrics)")
    parser.add_argument("--t-error", action="store_true", help="t approximation vs exact test on CNN/DM")
    parser.add_argument(
        "--child", nargs=2, type=int, metavar=("SYSTEMS", "DOCUMENTS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child and args.beam:
        print(json.dumps(beam_child(*args.child, args.seed)))
        return
    if args.child:
        print(json.dumps(child(*args.child, args.columns, args.missing, args.seed)))
        return
    command = "python benchmarks/bench_significance.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    if args.t_error:
        table = f"# Student's t against the exact sign-flip test\n\n`{command}`\n\n" + t_error(args.seed)
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "significance-t-error.md").write_text(table)
        print(table)
        return
    load = os.getloadavg()
    results = []
    for spec in args.grid:
        results.append(run_point(spec, args))
        print(json.dumps(results[-1]), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = (
        "significance"
        + ("-beam" if args.beam else "")
        + (f"-missing-{args.missing:g}" if args.missing else "")
    )
    record = {"command": command, "load_average": load, "results": results}
    (out / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    (out / f"{name}.md").write_text(markdown(results, command, load))
    print(markdown(results, command, load))


if __name__ == "__main__":
    main()
