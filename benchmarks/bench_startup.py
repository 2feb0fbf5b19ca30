"""Start-up cost of the light commands: wall and CPU seconds of whole processes.

    python benchmarks/bench_startup.py [--runs 5] [--out docs/startup.md]

Times, as fresh processes, `rouge-pipeline --help`, a one-pair `rouge-pipeline
score` (JSONL and line-aligned text) and `import rouge_core`, each `--runs`
times after one warm-up run, and prints the median, minimum and maximum of the
wall time and of the CPU time (user + system of the process and its children,
from the operating system's accounting of the finished process).  Medians are
what to quote: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands(folder: Path) -> dict[str, list[str]]:
    pair = {"system": "s", "doc_id": "d1", "candidate": "The cat sat on the mat.", "references": ["A cat was on the mat."]}
    (folder / "one.jsonl").write_text(json.dumps(pair) + "\n")
    (folder / "cand.txt").write_text(pair["candidate"] + "\n")
    (folder / "ref.txt").write_text(pair["references"][0] + "\n")
    cli = [sys.executable, "-m", "pipeline"]
    return {
        "rouge-pipeline --help": cli + ["--help"],
        "rouge-pipeline score one.jsonl (one pair)": cli + ["score", str(folder / "one.jsonl"), "--format", "csv"],
        "rouge-pipeline score --candidates --references (one pair)": cli
        + ["score", "--candidates", str(folder / "cand.txt"), "--references", str(folder / "ref.txt")],
        "python -c 'import rouge_core'": [sys.executable, "-c", "import rouge_core"],
    }


def _once(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", help="also write the table (Markdown) to this file")
    args = parser.parse_args()
    lines = [
        f"Start-up, {args.runs} runs after one warm-up, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}; "
        f"command: `python benchmarks/bench_startup.py --runs {args.runs}`",
        "",
        "| command | wall s median (min-max) | CPU s median |",
        "|---|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as folder:
        for name, argv in _commands(Path(folder)).items():
            _once(argv)
            runs = [_once(argv) for _ in range(args.runs)]
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            lines.append(
                f"| `{name}` | {statistics.median(walls):.3f} ({min(walls):.3f}-{max(walls):.3f}) "
                f"| {statistics.median(cpus):.3f} |"
            )
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
