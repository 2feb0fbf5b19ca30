"""A night at the cost of what changed: `run --reuse` beside a full run on the same
inputs, every table compared byte for byte (issue 34).

    python benchmarks/make_scale_corpus.py --out /tmp/reuse/corpus --systems 12 --documents 100000 --shards 1 --jobs 1
    PYTHONPATH=. python benchmarks/bench_reuse.py --corpus /tmp/reuse/corpus --scratch /tmp/reuse --repeat 3

Last night: systems 0-9 of the corpus (10 x 100,000 = 1,000,000 pairs), one file
each, scored by a full run (the previous result folder).  Tonight, in another
folder (the unchanged files hard-linked: the same bytes under other paths), each
scenario's inputs:

    changed 1, added 1    system 9's candidates replaced (system 11's, renamed),
                          system 10 added (1,100,000 pairs): the issue's case
    nothing changed       the same ten files
    100 references        100 documents' references corrected in every file (joined
                          form: every file changes; rows of other documents reused)

Each scenario runs a full run and a `--reuse` run, alternately, --repeat times (this
machine's speed drifts: each ratio is of a pair run one after the other), measured
by benchmarks/bench_pipeline.py's `measure` (CPU of the whole process tree, peak
memory).  Every reusing run's tables are compared with the full run's (every file
but run.json, report.html and the marker, which hold the run's id and times).
Writes OUT/reuse.json and OUT/reuse.md with every command.
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

from benchmarks.bench_pipeline import HERE, measure

FLAGS = "-c 95 -r 1000 -n 2 -m"
# a run's own: its id and times (run.json, report.html), its marker, and the manifest
# (_SUCCESS), which lists run.json's and report.html's digests: compared apart, less those
NOT_TABLES = {"run.json", "report.html", "_ROUGE_PIPELINE", "_SUCCESS"}


def corpus_file(corpus: Path, k: int) -> Path:
    (found,) = corpus.glob(f"sys{k:02d}-*.jsonl.gz")
    return found


def link(source: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    if not target.exists():
        os.link(source, target)


def rewrite(source: Path, target: Path, change) -> None:
    """`source`'s rows, each through `change(row)`, into `target` (gzip)."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(source, "rt", encoding="utf-8") as rows, gzip.open(target.with_suffix(".tmp"), "wt", encoding="utf-8",
                                                                        compresslevel=1) as out:
        for line in rows:
            out.write(json.dumps(change(json.loads(line)), ensure_ascii=False) + "\n")
    target.with_suffix(".tmp").rename(target)


SCENARIOS = ("changed 1, added 1", "nothing changed", "100 references")


def scenarios(corpus: Path, scratch: Path, wanted) -> dict[str, Path]:
    """{name: tonight's input folder} of the `wanted` scenarios, made once in `scratch`."""
    last = scratch / "in-last-night"
    for k in range(10):
        link(corpus_file(corpus, k), last)
    out = {}
    folder = scratch / "in-changed-1-added-1"
    for k in range(9):
        link(corpus_file(corpus, k), folder)
    link(corpus_file(corpus, 10), folder)
    rewrite(corpus_file(corpus, 11), folder / corpus_file(corpus, 9).name, lambda r: dict(r, system="sys09"))
    out["changed 1, added 1"] = folder
    folder = scratch / "in-nothing-changed"
    for k in range(10):
        link(corpus_file(corpus, k), folder)
    out["nothing changed"] = folder
    if "100 references" not in wanted:
        return out
    folder = scratch / "in-100-references"
    corrected = {f"doc-{i:07d}" for i in range(0, 100_000, 1000)}  # 100 documents

    def correct(row):
        if row["doc_id"] in corrected:
            row["references"] = [text + " corrected ." for text in row["references"]]
        return row

    for k in range(10):
        rewrite(corpus_file(corpus, k), folder / corpus_file(corpus, k).name, correct)
    out["100 references"] = folder
    return out


def run(python: str, inputs: Path, output: Path, log, reuse: Path | None = None) -> dict:
    shutil.rmtree(output, ignore_errors=True)
    cmd = [python, "-m", "pipeline", "run", "--config", str(HERE / "configs" / "pyrouge.toml"),
           "--input", str(inputs / "*.jsonl.gz"), "--output", str(output), "--rouge-args", FLAGS, "--quiet"]
    if reuse is not None:
        cmd += ["--reuse", str(reuse)]
    m = measure(cmd, dict(os.environ, PYTHONPATH=str(HERE)), str(HERE), log)
    if m["exit"]:
        sys.exit(f"{' '.join(cmd)} failed (exit {m['exit']}): see the log")
    record = json.loads((output / "run.json").read_text())
    return {"cpu_s": m["cpu_s"], "wall_s": m["wall_s"], "peak_mib": m["peak_rss_sum_mib"],
            "scored": record["counts"]["scored"], "reuse": record.get("reuse"), "command": " ".join(cmd)}


def differing_tables(a: Path, b: Path) -> list[str]:
    """Files of either folder (but NOT_TABLES) whose bytes differ, and "_SUCCESS" when
    the manifests list other files, sizes or digests (but of run.json and report.html)."""
    names = {str(p.relative_to(folder)) for folder in (a, b) for p in folder.rglob("*") if p.is_file()}
    out = sorted(n for n in names - NOT_TABLES if not (a / n).exists() or not (b / n).exists()
                 or (a / n).read_bytes() != (b / n).read_bytes())

    def listed(folder: Path) -> dict:
        return {k: v for k, v in json.loads((folder / "_SUCCESS").read_text())["files"].items() if k not in NOT_TABLES}

    return out + ([] if listed(a) == listed(b) else ["_SUCCESS"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="make_scale_corpus.py's folder: 12 systems, one file each")
    ap.add_argument("--scratch", required=True, help="inputs and result folders (made once, reused)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default=str(HERE / "benchmarks" / "results"))
    args = ap.parse_args()
    if ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    scratch, out = Path(args.scratch), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tonight = scenarios(Path(args.corpus), scratch, args.scenarios)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    made = {"date": time.strftime("%Y-%m-%d"), "commit": commit, "cpus": os.cpu_count(), "repeat": args.repeat}
    with open(scratch / "bench_reuse.log", "a") as log:
        previous = scratch / "last-night"
        last = run(args.python, scratch / "in-last-night", previous, log)
        print(f"last night: {last['scored']:,} pairs, {last['cpu_s']:.1f} CPU-s", flush=True)
        results = []
        for name, inputs in tonight.items():
            if name not in args.scenarios:
                continue
            for k in range(1, args.repeat + 1):
                full = run(args.python, inputs, scratch / "full", log)
                reused = run(args.python, inputs, scratch / "reused", log, previous)
                different = differing_tables(scratch / "full", scratch / "reused")
                row = {
                    "scenario": name, "run": k, "pairs": full["scored"],
                    "full_cpu_s": round(full["cpu_s"], 1), "reuse_cpu_s": round(reused["cpu_s"], 1),
                    "ratio": round(reused["cpu_s"] / full["cpu_s"], 3),
                    "full_peak_mib": round(full["peak_mib"]), "reuse_peak_mib": round(reused["peak_mib"]),
                    "rows_carried": reused["reuse"].get("rows_carried"), "rows_reused": reused["reuse"].get("rows_reused"),
                    "rows_scored": reused["reuse"].get("rows_scored"),
                    "tables_identical": not different, "differing": different,
                    "full_command": full["command"], "reuse_command": reused["command"],
                }
                results.append(row)
                print({k: v for k, v in row.items() if not k.endswith("command")}, flush=True)
                (out / "reuse.json").write_text(json.dumps({**made, "last_night": last, "runs": results}, indent=1))
    shown = [{k: v for k, v in r.items() if not k.endswith("command") and k != "differing"} for r in results]
    medians = [
        {"scenario": name, "median ratio": statistics.median(r["ratio"] for r in results if r["scenario"] == name),
         "every table identical": all(r["tables_identical"] for r in results if r["scenario"] == name)}
        for name in dict.fromkeys(r["scenario"] for r in results)
    ]
    commands = "\n".join([last["command"]] + sorted({r[c] for r in results for c in ("full_command", "reuse_command")}))
    text = (tabulate(medians, headers="keys", tablefmt="github") + "\n\n"
            + tabulate(shown, headers="keys", tablefmt="github", intfmt=",") + "\n")
    (out / "reuse.md").write_text(f"{made['date']}, commit {made['commit']}, {made['cpus']} CPUs (shared), "
                                  f"{args.repeat} full/reuse pair(s) per scenario.\n\n{text}\nLast night: {last['scored']:,} pairs, {last['cpu_s']:.1f} CPU-s.\n\n"
                                  f"Commands:\n\n```\n{commands}\n```\n")
    print(text)


if __name__ == "__main__":
    main()
