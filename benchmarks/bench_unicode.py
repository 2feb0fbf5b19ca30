"""The unicode preset on its two paths: pure Python, and read in Python with the metrics in the kernel.

    python benchmarks/bench_unicode.py --out benchmarks/results

Scores the CNN/DailyMail pairs of ../shared/data (the four systems' test outputs, one
reference each; by default the first 11,490) with the unicode preset (English) under
`-n 2 -m` and under pyrouge's default set, each path in a fresh process: pairs per CPU
second of one `score_batch` call after a warm-up of 500 other pairs (the stemmer's cache
and the imports are warm, as in a long run).  Checks that both paths give the same
statistics on every pair.  Writes OUT/unicode.json and OUT/unicode.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLAG_SETS = ["-n 2 -m", "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"]
WARM_UP = 500


def worker(spec: dict) -> dict:
    sys.path.insert(0, str(REPO))
    from rouge_core import RougeScorer, RougeSettings

    pairs = [(c, [r]) for r, c in json.loads(Path(spec["pairs"]).read_text())]
    settings = RougeSettings.from_preset("unicode", spec["flags"], language="english")
    scorer = RougeScorer(settings, kernel=spec["path"])
    assert scorer.kernel == spec["path"], scorer.kernel
    scorer.score_batch(pairs[-WARM_UP:])
    scored = pairs[:-WARM_UP]
    cpu = time.process_time()
    results = scorer.score_batch(scored)
    cpu = time.process_time() - cpu
    values = [[tuple(stats) for stats in r.values()] for r in results]
    return {"pairs": len(scored), "cpu_s": cpu, "values": values}


def cnndm_pairs(data: Path, count: int) -> list[tuple[str, str]]:
    pairs = []
    for path in sorted((data / "cnndm_test_outputs").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                pairs.append((row["references"][0], row["candidate"]))
                if len(pairs) == count:
                    return pairs
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    default_data = os.environ.get("ROUGE_SHARED_DATA") or str(REPO.parent / "shared" / "data")
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--pairs", type=int, default=11_490, help="pairs scored (plus the warm-up)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs_file = out / "unicode_pairs.jsonl"  # one JSON list; ignored by git as *.jsonl
    pairs_file.write_text(json.dumps(cnndm_pairs(Path(args.data), args.pairs + WARM_UP)))
    rows = []
    for flags in FLAG_SETS:
        done = {}
        for path in ("python", "c"):
            spec = {"pairs": str(pairs_file), "flags": flags, "path": path}
            proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)],
                                  capture_output=True, text=True, check=True)
            done[path] = json.loads(proc.stdout.strip().splitlines()[-1])
        same = done["python"]["values"] == done["c"]["values"]
        rates = {p: done[p]["pairs"] / done[p]["cpu_s"] for p in done}
        rows.append({"flags": flags, "pairs": done["c"]["pairs"], "python": rates["python"], "c": rates["c"],
                     "speedup": rates["c"] / rates["python"], "same_statistics": same})
        print(rows[-1], flush=True)
    report = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "rows": rows,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"}
    (out / "unicode.json").write_text(json.dumps(report, indent=2) + "\n")
    header = ("| unicode preset, English, CNN/DM | pairs | pure Python, pairs / CPU s "
              "| kernel, pairs / CPU s | kernel is | same statistics |")
    lines = [header, "|---|---:|---:|---:|---:|---|"]
    lines += [f"| `{r['flags']}` | {r['pairs']:,} | {r['python']:,.0f} | {r['c']:,.0f} | {r['speedup']:.1f}x "
              f"| {'yes, every pair' if r['same_statistics'] else 'NO'} |" for r in rows]
    lines += ["", f"Command: `{report['command']}`; machine: {report['machine']}"]
    (out / "unicode.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
