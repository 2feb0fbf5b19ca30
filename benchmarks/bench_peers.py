"""rouge_core (compiled kernel and pure Python) against its peers, same pairs, one run.

    benchmarks/setup_peers.sh                          # rouge-score, rouge-score-rs in their own venv
    python benchmarks/bench_peers.py --out benchmarks/results

Peers: the official ROUGE-1.5.5 Perl script (same flags; on a subset, it is slow;
its time includes reading its files and its bootstrap), Google's rouge-score and
rouge-score-rs (a Rust port of rouge-score; one thread: RAYON_NUM_THREADS=1).
The peers compute rouge-score's metrics, with its own stemmer, so for each setting
they do the closest work they can (listed in the table); only ROUGE-1.5.5.pl does
the same work as rouge_core.

Corpora: the first --pairs pairs of CNN/DailyMail test outputs
(../shared/data/cnndm_test_outputs, one reference each) and a generated corpus of
long documents (benchmarks/make_long_corpus.py: about 800 words, 4 references).

Every measurement runs in a fresh process: pairs per CPU second of the scoring
call alone (user + system time of the process, children included for Perl; the
machine may be shared, so CPU time, not wall time), peak resident memory of the
process, and its start-up (import) CPU time.  Writes OUT/bench.json and OUT/bench.md.
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
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
# (name, rouge_core flags, rouge-score types the peers compute for it, Perl runs it)
SETTINGS = [
    (
        "ROUGE-1.5.5 default set (pyrouge)",
        PYROUGE,
        ["rouge1", "rouge2", "rouge3", "rouge4", "rougeLsum"],
        True,
    ),
    ("-n 2 -m (R-1, R-2, L)", "-c 95 -r 1000 -n 2 -m", ["rouge1", "rouge2", "rougeLsum"], True),
    ("ROUGE-1 only", "-n 1 -x -m", ["rouge1"], False),
    ("ROUGE-L only", "-m", ["rougeLsum"], False),
]
IMPLEMENTATIONS = ["rouge_core[c]", "rouge_core[python]", "rouge-score-rs", "rouge-score", "ROUGE-1.5.5.pl"]


# ------------------------------------------------------------------ workers (fresh processes)
def cpu_seconds(children: bool = False) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def as_str(text) -> str:
    return text if isinstance(text, str) else "\n".join(text)


def worker(spec: dict) -> dict:
    started = cpu_seconds()
    impl, flags, types = spec["impl"], spec["flags"], spec["types"]
    with open(spec["corpus"], encoding="utf-8") as fh:
        pairs = [json.loads(line) for _, line in zip(range(spec["pairs"]), fh)]
    if impl.startswith("rouge_core"):
        sys.path.insert(0, str(REPO))
        from rouge_core import RougeScorer, RougeSettings, kernel_info

        scorer = RougeScorer(
            RougeSettings.from_flags(flags), kernel="c" if impl.endswith("[c]") else "python"
        )
        batch = [(p["candidate"], p["references"]) for p in pairs]
        run = lambda: scorer.score_batch(batch)
        extra = {"kernel": kernel_info()["kernel"] if impl.endswith("[c]") else "python"}
    elif impl in ("rouge-score", "rouge-score-rs"):
        if impl == "rouge-score":
            from rouge_score import rouge_scorer
        else:
            from rouge_score_rs import rouge_scorer
        peer = rouge_scorer.RougeScorer(types, use_stemmer=True)
        cands = [as_str(p["candidate"]) for p in pairs]
        refs = [[as_str(r) for r in p["references"]] for p in pairs]
        if impl == "rouge-score-rs" and all(len(r) == 1 for r in refs):
            run = lambda: peer.score_batch([r[0] for r in refs], cands)
        else:
            run = lambda: [peer.score_multi(r, c) for r, c in zip(refs, cands)]
        extra = {}
    else:  # the Perl script
        sys.path.insert(0, str(REPO))
        from tests.oracle import run_rouge155

        cases = [dict(p, system="sys", doc_id=str(i)) for i, p in enumerate(pairs)]

        def run():
            code, _, err = run_rouge155(cases, flags, spec["rouge155_home"])
            if code != 0:
                raise RuntimeError(err[-500:])

        extra = {}
    ready = cpu_seconds()
    wall = time.perf_counter()
    run()
    wall = time.perf_counter() - wall
    used = cpu_seconds() - ready + (cpu_seconds(children=True) if impl == "ROUGE-1.5.5.pl" else 0.0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if impl == "ROUGE-1.5.5.pl":
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return {
        "pairs": len(pairs),
        "cpu_s": used,
        "wall_s": wall,
        "startup_cpu_s": ready - started,
        "peak_rss_mib": peak / 1024,
        **extra,
    }


# ------------------------------------------------------------------ corpora
def cnndm_pairs(data: Path, n: int, out: Path) -> Path:
    source = data / "cnndm_test_outputs" / "see2017_pointer_gen.jsonl.gz"
    path = out / "cnndm_pairs.jsonl"
    with gzip.open(source, "rt", encoding="utf-8") as fh, open(path, "w", encoding="utf-8") as dst:
        for _, line in zip(range(n), fh):
            row = json.loads(line)
            dst.write(json.dumps({"candidate": row["candidate"], "references": row["references"]}) + "\n")
    return path


def long_pairs(n: int, out: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from make_long_corpus import Corpus

    corpus, path = Corpus(2004), out / "long_docs.jsonl"
    with open(path, "w", encoding="utf-8") as dst:
        for i in range(n):
            dst.write(json.dumps(corpus.document(i, 4, 800)) + "\n")
    return path


# ------------------------------------------------------------------ the run
def run_worker(python: str, spec: dict) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("ROUGE_CORE_KERNEL", None)
    done = subprocess.run(
        [python, __file__, "--worker", json.dumps(spec)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        return {
            "error": done.stderr.strip().splitlines()[-1]
            if done.stderr.strip()
            else f"exit {done.returncode}"
        }
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    ap.add_argument(
        "--data", default=os.environ.get("ROUGE_SHARED_DATA") or str(REPO.parent / "shared" / "data")
    )
    ap.add_argument("--pairs", type=int, default=11490, help="CNN/DM pairs (rouge_core[c], rouge-score-rs)")
    ap.add_argument(
        "--long-docs", type=int, default=400, help="long documents (rouge_core[c], rouge-score-rs)"
    )
    ap.add_argument(
        "--slow-pairs", type=int, default=500, help="CNN/DM pairs for rouge_core[python], rouge-score"
    )
    ap.add_argument(
        "--slow-long", type=int, default=10, help="long documents for rouge_core[python], rouge-score"
    )
    ap.add_argument("--perl-pairs", type=int, default=200, help="CNN/DM pairs for ROUGE-1.5.5.pl")
    ap.add_argument("--perl-long", type=int, default=5, help="long documents for ROUGE-1.5.5.pl")
    ap.add_argument("--python", default=sys.executable, help="the interpreter with rouge_core's dependencies")
    ap.add_argument("--peers-python", default=str(REPO / "benchmarks" / ".venv-peers" / "bin" / "python"))
    ap.add_argument("--rouge155-home", default=os.environ.get("ROUGE155_HOME"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpora = {
        "CNN/DM test (See et al. pointer-gen), 1 reference": (
            cnndm_pairs(Path(args.data), args.pairs, out),
            args.pairs,
            args.slow_pairs,
            args.perl_pairs,
        ),
        "generated long documents, ~800 words, 4 references": (
            long_pairs(args.long_docs, out),
            args.long_docs,
            args.slow_long,
            args.perl_long,
        ),
    }
    have_peers = Path(args.peers_python).exists()
    notes = []
    if not have_peers:
        notes.append(
            f"rouge-score and rouge-score-rs skipped: no {args.peers_python} (run benchmarks/setup_peers.sh)"
        )
    if not args.rouge155_home:
        notes.append("ROUGE-1.5.5.pl skipped: give --rouge155-home or set ROUGE155_HOME")
    results = []
    for corpus, (path, fast_n, slow_n, perl_n) in corpora.items():
        for name, flags, types, perl in SETTINGS:
            for impl in IMPLEMENTATIONS:
                if impl.startswith("rouge-score") and not have_peers:
                    continue
                if impl == "ROUGE-1.5.5.pl" and (not perl or not args.rouge155_home):
                    continue
                n = {"rouge_core[c]": fast_n, "rouge-score-rs": fast_n, "ROUGE-1.5.5.pl": perl_n}.get(
                    impl, slow_n
                )
                python = args.peers_python if impl.startswith("rouge-score") else args.python
                spec = {
                    "impl": impl,
                    "flags": flags,
                    "types": types,
                    "corpus": str(path),
                    "pairs": n,
                    "rouge155_home": args.rouge155_home,
                }
                r = run_worker(python, spec)
                r.update(
                    corpus=corpus,
                    setting=name,
                    impl=impl,
                    work=flags if impl.startswith(("rouge_core", "ROUGE")) else "+".join(types) + ", stemmed",
                )
                if "cpu_s" in r:
                    r["pairs_per_cpu_s"] = r["pairs"] / r["cpu_s"] if r["cpu_s"] > 0 else float("inf")
                print(
                    f"{corpus[:24]:24} {name[:34]:34} {impl:20} "
                    + (
                        f"{r['pairs_per_cpu_s']:10.1f} pairs/CPU-s  {r['peak_rss_mib']:7.1f} MiB"
                        if "cpu_s" in r
                        else r["error"]
                    ),
                    flush=True,
                )
                results.append(r)
    for r in results:
        ours = next(
            (
                x
                for x in results
                if x["corpus"] == r["corpus"]
                and x["setting"] == r["setting"]
                and x["impl"] == "rouge_core[c]"
                and "pairs_per_cpu_s" in x
            ),
            None,
        )
        if ours and "pairs_per_cpu_s" in r:
            r["rouge_core_c_is_x_faster"] = ours["pairs_per_cpu_s"] / r["pairs_per_cpu_s"]
    record = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "notes": notes,
        "results": results,
    }
    (out / "bench.json").write_text(json.dumps(record, indent=1) + "\n")
    (out / "bench.md").write_text(markdown(record))
    print(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")


def markdown(record: dict) -> str:
    lines = [
        f"Benchmark, {record['date_utc']} UTC, {record['machine']['platform']}, Python "
        f"{record['machine']['python']}, one core per process (CPU time).",
        "",
    ]
    lines += [f"* {note}" for note in record["notes"]]
    corpus = None
    for r in record["results"]:
        if r["corpus"] != corpus:
            corpus = r["corpus"]
            lines += [
                "",
                f"### {corpus}",
                "",
                "| setting | implementation | work | pairs | pairs/CPU-s | rouge_core[c] is | peak MiB | start-up CPU s |",
                "|---|---|---|---:|---:|---:|---:|---:|",
            ]
        if "error" in r:
            lines.append(f"| {r['setting']} | {r['impl']} | {r['work']} | | failed: {r['error']} | | | |")
            continue
        ratio = r.get("rouge_core_c_is_x_faster")
        lines.append(
            f"| {r['setting']} | {r['impl']} | `{r['work']}` | {r['pairs']} | {r['pairs_per_cpu_s']:,.1f} | "
            f"{'' if ratio is None or r['impl'] == 'rouge_core[c]' else f'{ratio:,.1f}x'} | "
            f"{r['peak_rss_mib']:.0f} | {r['startup_cpu_s']:.2f} |"
        )
    lines += [
        "",
        "ROUGE-1.5.5.pl's time includes writing and reading its files and its bootstrap "
        "(-r 1000); the others time the scoring call alone.  The peers do rouge-score's metrics "
        "(column work), not ROUGE-1.5.5's: no ROUGE-W, S or SU, their own stemmer and tokenizer.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
