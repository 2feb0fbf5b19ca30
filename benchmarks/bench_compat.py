"""rouge_core.compat against rouge-score 0.1.2 and its ports on PyPI: speed and exactness, one run.

    bash benchmarks/setup_compat_peers.sh          # rouge-score, rouge-score-rs, rapidrouge, rouge-rust
    python benchmarks/bench_compat.py --out benchmarks/results

Every implementation scores the same CNN/DailyMail pairs (by default all 45,960 of
the four systems' test outputs in ../shared/data, one reference each) the way its
users call it:

* rouge-score 0.1.2 (Google's, pure Python) and rapidrouge 0.2.0 (pure Python,
  bit-parallel LCS): `RougeScorer(types, use_stemmer).score(target, prediction)`
  per pair;
* rouge-score-rs 0.2.1 (Rust, rouge-score's API): its `score_batch(targets,
  predictions)`, one thread (RAYON_NUM_THREADS=1);
* rouge-rust 0.1.12 (Rust, `fast_rouge`): `fast_rouge.score_batch(references,
  predictions)`; it has no stemmer and no rougeLsum, so it runs in the unstemmed
  rouge1/rouge2/rougeL setting only;
* rouge_core.compat, the drop-in: `score` per pair, and `score_batch`, on the
  compiled kernel; and `score` per pair on the pure-Python reference
  (ROUGE_CORE_KERNEL=python).

Settings: rouge1/rouge2/rougeLsum with stemming (the common HF `evaluate` call),
and rouge1/rouge2/rougeL without.

Speed is pairs per CPU second (the CPU time of the scoring call, every thread of
the worker process: the machine may be shared, so CPU time, not wall time), as the
marginal cost between two sizes (the first --small pairs and all --pairs, each in
fresh processes; for a compiled implementation the least CPU of --runs processes per
size, a pure-Python one runs once per size), so that fixed costs cancel out.  Each
process starts cold: the drop-in's stem cache and rouge-score's are empty.  Exactness is measured against
rouge-score's own values on every pair: per type, the number of precision, recall
and F values that are not the same float, and the largest absolute difference.
Writes OUT/compat.json and OUT/compat.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETTINGS = {
    "stemmed rouge1/rouge2/rougeLsum": (["rouge1", "rouge2", "rougeLsum"], True),
    "unstemmed rouge1/rouge2/rougeL": (["rouge1", "rouge2", "rougeL"], False),
}
# (name, interpreter: "project" or "peers", compiled: timed --runs times per size, else once)
IMPLEMENTATIONS = [
    ("rouge_core.compat [C] score", "project", True),
    ("rouge_core.compat [C] score_batch", "project", True),
    ("rouge_core.compat [Python] score", "project", False),
    ("rouge-score-rs 0.2.1 score_batch", "peers", True),
    ("rouge-rust 0.1.12 score_batch", "peers", True),
    ("rapidrouge 0.2.0 score", "peers", False),
    ("rouge-score 0.1.2 score", "peers", False),
]
REFERENCE = "rouge-score 0.1.2 score"


# ------------------------------------------------------------------ worker (a fresh process)
def worker(spec: dict) -> dict:
    impl, types, stemming = spec["impl"], spec["types"], spec["stemming"]
    with open(spec["corpus"], encoding="utf-8") as fh:
        pairs = [json.loads(line) for _, line in zip(range(spec["pairs"]), fh)]
    targets = [p["reference"] for p in pairs]
    predictions = [p["candidate"] for p in pairs]
    if impl.startswith("rouge_core.compat"):
        sys.path.insert(0, str(REPO))
        from rouge_core import kernel_info
        from rouge_core.compat import rouge_scorer

        scorer = rouge_scorer.RougeScorer(types, use_stemmer=stemming)
        if impl.endswith("score_batch"):
            run = lambda: scorer.score_batch(targets, predictions)
        else:
            run = lambda: [scorer.score(t, p) for t, p in zip(targets, predictions)]
        path = kernel_info()["kernel"]
        if ("[C]" in impl) != (path == "c"):
            raise RuntimeError(f"{impl} ran on the {path} path")
    elif impl.startswith("rouge-rust"):
        import fast_rouge

        if stemming or "rougeLsum" in types:
            return {"skipped": "no stemmer and no rougeLsum"}
        run = lambda: fast_rouge.score_batch(targets, predictions)
    else:
        if impl.startswith("rouge-score-rs"):
            from rouge_score_rs import rouge_scorer
        elif impl.startswith("rapidrouge"):
            from rapidrouge import rouge_scorer
        else:
            from rouge_score import rouge_scorer
        scorer = rouge_scorer.RougeScorer(types, use_stemmer=stemming)
        if impl.endswith("score_batch"):
            run = lambda: scorer.score_batch(targets, predictions)
        else:
            run = lambda: [scorer.score(t, p) for t, p in zip(targets, predictions)]
    cpu, started = time.process_time(), time.perf_counter()  # every thread of the process
    results = run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - started
    if spec.get("values"):
        values = {t: [[r[t].precision, r[t].recall, r[t].fmeasure] for r in results] for t in types}
        with open(spec["values"], "w") as fh:
            json.dump(values, fh)  # floats as repr: they read back as the same float
    return {"pairs": len(pairs), "cpu_s": cpu, "wall_s": wall}


def run_worker(python: str, spec: dict) -> dict:
    """The worker in a fresh process: the CPU seconds of its scoring call (all its
    threads), and of the whole process (imports and reading included)."""
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env["ROUGE_CORE_KERNEL"] = "python" if "[Python]" in spec["impl"] else "c"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [python, __file__, "--worker", json.dumps(spec)], capture_output=True, text=True, env=env, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {done.returncode}"}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["process_cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out


def best_of(python: str, spec: dict, runs: int) -> dict:
    """The run with the least scoring CPU of `runs` fresh processes (the machine is shared)."""
    results = [run_worker(python, spec) for _ in range(runs)]
    good = [r for r in results if "cpu_s" in r]
    return min(good, key=lambda r: r["cpu_s"]) if good else results[0]


# ------------------------------------------------------------------ exactness
def compare(values_path: Path, reference_path: Path) -> dict:
    got, expected = json.loads(values_path.read_text()), json.loads(reference_path.read_text())
    out = {}
    for t, rows in expected.items():
        differing, largest = 0, 0.0
        for g, e in zip(got[t], rows):
            for a, b in zip(g, e):
                if a != b:
                    differing += 1
                    largest = max(largest, abs(a - b))
        out[t] = {"differing": differing, "of": 3 * len(rows), "max_abs_diff": largest}
    return out


# ------------------------------------------------------------------ corpus
def write_corpus(data: Path, source: str, out: Path) -> tuple[Path, int]:
    """The pairs of `source` (a file, or "all": every file of cnndm_test_outputs in name
    order, as tests/core/compat reads them) as JSON lines of candidate and reference."""
    folder = data / "cnndm_test_outputs"
    files = sorted(folder.glob("*.jsonl.gz")) if source == "all" else [folder / source]
    path = out / "compat_pairs.jsonl"
    count = 0
    with open(path, "w", encoding="utf-8") as dst:
        for file in files:
            with gzip.open(file, "rt", encoding="utf-8") as fh:
                for line in fh:
                    row = json.loads(line)
                    dst.write(json.dumps({"candidate": row["candidate"], "reference": row["references"][0]}) + "\n")
                    count += 1
    return path, count


def versions(python: str) -> dict:
    code = (
        "import json, importlib.metadata as m\n"
        "out = {}\n"
        "for name in ('rouge-score', 'rouge-score-rs', 'rapidrouge', 'rouge-rust', 'nltk', 'numpy'):\n"
        "    try: out[name] = m.version(name)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def markdown(report: dict) -> str:
    lines = [
        f"Corpus: {report['corpus']} ({report['pairs']:,} pairs, one reference each). "
        f"Pairs per CPU second = marginal cost between {report['small']:,} and {report['pairs']:,} pairs, "
        "each in fresh processes, the least CPU of several runs (CPU time of the scoring call, all threads; caches start cold). Exactness against rouge-score 0.1.2 "
        "on every pair: precision, recall and F values that differ (of all), and the largest difference.",
        "",
    ]
    for setting, rows in report["results"].items():
        fastest_port = max(
            (r["pairs_per_cpu_s"] for name, r in rows.items() if not name.startswith("rouge_core") and "pairs_per_cpu_s" in r),
            default=None,
        )
        ours = rows.get("rouge_core.compat [C] score", {}).get("pairs_per_cpu_s")
        lines += [f"### {setting}", ""]
        lines += ["| implementation | pairs / CPU s | rouge_core.compat [C] score is | exactness vs rouge-score (differing values, max abs diff) |"]
        lines += ["| --- | ---: | ---: | --- |"]
        for name, r in rows.items():
            if "pairs_per_cpu_s" not in r:
                lines.append(f"| {name} | — | — | {r.get('skipped') or r.get('error')} |")
                continue
            ratio = f"{ours / r['pairs_per_cpu_s']:.1f}x" if ours and not name.startswith("rouge_core.compat [C] score") else ""
            exact = "; ".join(
                f"{t}: {e['differing']:,}/{e['of']:,}" + (f" (max {e['max_abs_diff']:.3g})" if e["differing"] else "")
                for t, e in r.get("exactness", {}).items()
            ) if name != REFERENCE else "(the reference)"
            lines.append(f"| {name} | {r['pairs_per_cpu_s']:,.0f} | {ratio} | {exact} |")
        if fastest_port and ours:
            lines += ["", f"rouge_core.compat [C] score: {ours / fastest_port:.2f}x the fastest port."]
        lines.append("")
    lines += [f"Command: `{report['command']}`", "", f"Machine: {report['machine']}; versions: {report['versions']}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    ap.add_argument("--data", default=os.environ.get("ROUGE_SHARED_DATA") or str(REPO.parent / "shared" / "data"))
    ap.add_argument(
        "--source", default="all", help="a CNN/DM file under cnndm_test_outputs, or all (the four systems' outputs)"
    )
    ap.add_argument("--pairs", type=int, default=0, help="pairs to score (default: the whole file)")
    ap.add_argument("--small", type=int, default=0, help="the smaller size of the marginal cost (default: pairs / 4)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter with rouge_core's dependencies")
    ap.add_argument("--peers-python", default=str(REPO / "benchmarks" / ".venv-peers" / "bin" / "python"))
    ap.add_argument(
        "--runs", type=int, default=5, help="fresh processes per size for compiled implementations; the least CPU counts"
    )
    ap.add_argument("--only", help="comma-separated setting names to run (default: all)")
    ap.add_argument("--impls", help="comma-separated implementation name prefixes to run (default: all)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus, available = write_corpus(Path(args.data), args.source, out)
    pairs = min(args.pairs or available, available)
    small = args.small or pairs // 4
    report = {
        "corpus": "CNN/DM test outputs of four systems (see2017 baseline, pointer-gen, pointer-gen + coverage; "
        "SimCLS 2021)" if args.source == "all" else f"CNN/DM test outputs, {args.source}",
        "pairs": pairs,
        "small": small,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "versions": versions(args.peers_python),
        "results": {},
    }
    settings = SETTINGS if not args.only else {k: v for k, v in SETTINGS.items() if k in args.only.split(",")}
    with tempfile.TemporaryDirectory() as tmp:
        for setting, (types, stemming) in settings.items():
            rows = {}
            values = {}
            for impl, interpreter, compiled in IMPLEMENTATIONS:
                runs = args.runs if compiled else 1  # a pure-Python run is long: its noise is small
                if args.impls and not any(impl.startswith(x) for x in args.impls.split(",")):
                    continue
                python = args.python if interpreter == "project" else args.peers_python
                spec = dict(impl=impl, types=types, stemming=stemming, corpus=str(corpus))
                values[impl] = Path(tmp) / f"{len(rows)}.json"
                large = run_worker(python, dict(spec, pairs=pairs, values=str(values[impl])))
                if "cpu_s" in large and runs > 1:
                    again = best_of(python, dict(spec, pairs=pairs), runs - 1)
                    large = min([large, again], key=lambda r: r.get("cpu_s", float("inf")))
                if "cpu_s" not in large:
                    rows[impl] = large
                    print(setting, impl, large, flush=True)
                    continue
                little = best_of(python, dict(spec, pairs=small), runs)
                rate = (pairs - small) / max(large["cpu_s"] - little["cpu_s"], 1e-9)
                rows[impl] = {
                    "pairs_per_cpu_s": rate,
                    "cpu_s": large["cpu_s"],
                    "cpu_s_small": little["cpu_s"],
                    "process_cpu_s": large["process_cpu_s"],
                    "wall_s_scoring": large["wall_s"],
                }
                print(setting, impl, f"{rate:,.0f} pairs/CPU-s", flush=True)
            for impl, row in rows.items():
                if "pairs_per_cpu_s" in row and impl != REFERENCE and REFERENCE in rows:
                    row["exactness"] = compare(values[impl], values[REFERENCE])
            report["results"][setting] = rows
    (out / "compat.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "compat.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
