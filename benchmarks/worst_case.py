"""Time and peak memory of rouge_core on adversarial texts, each in a fresh process.

    python benchmarks/worst_case.py

Each case either finishes or is refused by a work limit of RougeScorer (reason
too_costly); the table says which.
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


def main() -> None:
    print(f"{'case':34} {'flags':42} {'seconds':>8} {'peak MiB':>9}  outcome")
    for name, text, flags, against in CASES:
        code = CHILD.format(repo=str(REPO), text=text, reference=REFERENCE, flags=flags, against=against)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{name:34} {flags:42} {r['seconds']:8.2f} {r['peak_mib']:9.0f}  {r['outcome']}")


if __name__ == "__main__":
    main()
