"""Time and peak memory on adversarial inputs, each in a fresh process.

    python benchmarks/worst_case.py            # both tables
    python benchmarks/worst_case.py --pipeline # only the whole-pipeline cases

The first table: rouge_core on adversarial texts; each case either finishes or
is refused by a work limit of RougeScorer (reason too_costly).  The second: the
whole `rouge-pipeline run` (in-process runner) on hostile files, with the peak
resident memory of the run's process and the size of what it wrote; the
targets are in the README ("Limits").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REFERENCE = "the cat sat on the mat near the door\nthen it went to sleep"
PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
# (case, candidate as a Python expression, flags, scored against REFERENCE or itself)
CASES = [
    ("one token x 100,000", "'the ' * 100_000", PYROUGE, "reference"),
    ("one token x 100,000", "'the ' * 100_000", "-n 4 -w 1.2 -m", "reference"),
    (
        "100,000 one-word sentences",
        "'\\n'.join(['cat', 'mat', 'sleep', 'door'] * 25_000)",
        PYROUGE,
        "reference",
    ),
    (
        "100,000 one-word sentences",
        "'\\n'.join(['cat', 'mat', 'sleep', 'door'] * 25_000)",
        "-n 4 -w 1.2 -m",
        "reference",
    ),
    ("200,000 distinct words vs itself", "' '.join(f'w{i}' for i in range(200_000))", "-n 4 -m", "itself"),
    ("200,000 distinct words vs itself", "' '.join(f'w{i}' for i in range(200_000))", "-n 4 -x -m", "itself"),
    ("3,000 tokens vs itself", "' '.join(f'w{i % 500}' for i in range(3000))", "-x -w 1.2", "itself"),
]

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from rouge_core import RougeInputError, RougeScorer, RougeSettings
candidate = {text}
reference = {reference!r} if {against!r} == "reference" else candidate
started = time.perf_counter()
try:
    scores = RougeScorer(RougeSettings.from_flags({flags!r})).score(candidate=candidate, references=[reference])
    tag = next(iter(scores))
    outcome = "scored: " + tag + " F " + format(scores[tag].f_measure)
except RougeInputError as err:
    outcome = "refused (" + err.reason + "): " + str(err)[:70]
seconds = time.perf_counter() - started
print(json.dumps({{"seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "outcome": outcome}}))
"""


# Hostile files for the whole pipeline: (case, writer of the input, target peak MiB).
PIPELINE_CASES = [
    ("3,000 copies of one row (.jsonl.gz)", "copies", 500),
    ("2,000,000 unparseable lines", "garbage", 1024),
    ("Parquet: one cell of 600 MiB", "big_cell", 1024),
]


def write_input(kind: str, folder: Path) -> Path:
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    good = json.dumps({"system": "s", "doc_id": "d", "candidate": "a b c", "references": ["a b d"]})
    if kind == "copies":
        path = folder / "copies.jsonl.gz"
        path.write_bytes(gzip.compress(((good + "\n") * 3000).encode()))
        (folder / "good.jsonl").write_text(good.replace('"d"', '"d2"') + "\n")
    elif kind == "garbage":
        path = folder / "garbage.jsonl"
        with open(path, "wb") as fh:
            for _ in range(200):
                fh.write(b"{not json\n" * 10_000)
            fh.write((good + "\n").encode())
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = folder / "big_cell.parquet"
        table = pa.table(
            {"system": ["s"], "doc_id": ["d"], "candidate": ["x " * (300 << 20)], "references": [["a b d"]]}
        )
        pq.write_table(table, path, compression="zstd")
        second = folder / "good.jsonl"
        second.write_text(good.replace('"d"', '"d2"') + "\n")
    return path


def pipeline_case(kind: str, workdir: Path) -> dict:
    """Write the input in one process, run the pipeline in another, and return the
    pipeline process's own peak RSS (os.wait4), untouched by the writer's memory."""
    import os
    import time

    subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(REPO)!r}); from pathlib import Path; "
         f"from benchmarks.worst_case import write_input; write_input({kind!r}, Path({str(workdir / kind)!r}))"],
        check=True,
    )
    out = workdir / f"out-{kind}"
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "run", "--input", str(workdir / kind / "*"), "--output", str(out),
         "--rouge-args", "-n 2 -m -r 100", "--runner", "FnApiRunner"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO,
    )
    stderr = process.stderr.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    record = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    errors_bytes = sum(p.stat().st_size for p in (out / "errors").glob("*")) if out.exists() else 0
    return {
        "seconds": seconds,
        "peak_mib": usage.ru_maxrss / 1024,
        "exit": os.waitstatus_to_exitcode(status),
        "counts": record.get("counts", {}).get("errors_by_reason", stderr[-300:]),
        "errors_bytes": errors_bytes,
    }


def pipeline_table() -> None:
    import tempfile

    print(f"\n{'pipeline case':38} {'seconds':>8} {'peak MiB':>9} {'target':>7} {'errors out':>11}  errors by reason")
    for name, kind, target in PIPELINE_CASES:
        with tempfile.TemporaryDirectory() as tmp:
            # Each case in its own process, so that RUSAGE_CHILDREN is that run's peak.
            code = f"import json,sys; sys.path.insert(0, {str(REPO)!r}); from benchmarks.worst_case import pipeline_case; " \
                f"from pathlib import Path; print(json.dumps(pipeline_case({kind!r}, Path({tmp!r}))))"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
            r = json.loads(done.stdout.strip().splitlines()[-1])
        mark = "ok" if r["peak_mib"] < target else "OVER"
        print(
            f"{name:38} {r['seconds']:8.1f} {r['peak_mib']:9.0f} {target:6d}{mark[0] if mark == 'ok' else '!'} "
            f"{r['errors_bytes']:11,d}  exit {r['exit']}: {r['counts']}"
        )


def main() -> None:
    if "--pipeline" in sys.argv:
        pipeline_table()
        return
    core_table()
    pipeline_table()


def core_table() -> None:
    print(f"{'case':34} {'flags':42} {'seconds':>8} {'peak MiB':>9}  outcome")
    for name, text, flags, against in CASES:
        code = CHILD.format(repo=str(REPO), text=text, reference=REFERENCE, flags=flags, against=against)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{name:34} {flags:42} {r['seconds']:8.2f} {r['peak_mib']:9.0f}  {r['outcome']}")


if __name__ == "__main__":
    main()
