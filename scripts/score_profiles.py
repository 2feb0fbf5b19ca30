"""Score a joined JSONL file under several named settings profiles (no Beam).

    python scripts/score_profiles.py INPUT.jsonl[.gz] OUTPUT.jsonl.gz \\
        --profile "case=-n 4 -2 4 -U" --profile "stem=-n 4 -2 4 -U -m" ... [--first-reference]

Writes one line per (profile, system, doc_id, metric) with the per-summary
recall, precision and F, the long table `rouge-pipeline meta-eval
--metric-scores` reads.  A profile may be given several times with different
flags (e.g. once per skip distance): its metrics are merged, and a metric
scored twice must agree.  Lin (2004)'s CASE / STEM / STOP table:

    python scripts/score_profiles.py ../shared/data/summeval/candidates.jsonl.gz scores.jsonl.gz \\
      --first-reference \\
      --profile "case=-n 9 -w 1.2 -2 -1 -U" --profile "case=-2 4 -U -x" \\
      --profile "case=-2 9 -U -x" \\
      --profile "stem=-n 9 -w 1.2 -2 -1 -U -m" --profile "stem=-2 4 -U -x -m" \\
      --profile "stem=-2 9 -U -x -m" \\
      --profile "stop=-n 9 -w 1.2 -2 -1 -U -m -s" --profile "stop=-2 4 -U -x -m -s" \\
      --profile "stop=-2 9 -U -x -m -s"
"""

from __future__ import annotations

import argparse
import gzip
import json

from rouge_core import RougeScorer, RougeSettings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--profile", action="append", required=True, metavar="NAME=FLAGS")
    parser.add_argument("--first-reference", action="store_true", help="score against references[0] only")
    args = parser.parse_args()
    with (gzip.open if args.input.endswith(".gz") else open)(args.input, "rt", encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh if line.strip()]
    scores: dict = {}
    for spec in args.profile:
        name, _, flags = spec.partition("=")
        scorer = RougeScorer(RougeSettings.from_flags(flags))
        for case in cases:
            references = case["references"][:1] if args.first_reference else case["references"]
            result = scorer.score(candidate=case["candidate"], references=references)
            for metric, s in result.items():
                key = (name, case["system"], case["doc_id"], metric)
                value = (s.recall, s.precision, s.f_measure)
                if scores.setdefault(key, value) != value:
                    raise SystemExit(f"{key}: two profiles named {name!r} disagree on {metric}")
    with open(args.output, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        for (profile, system, doc_id, metric), (r, p, f) in sorted(scores.items()):
            row = {
                "profile": profile,
                "system": system,
                "doc_id": doc_id,
                "metric": metric,
                "recall": r,
                "precision": p,
                "f_measure": f,
            }
            out.write((json.dumps(row) + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
