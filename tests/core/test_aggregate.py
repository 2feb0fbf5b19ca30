"""corpus_score and the accumulator behind it: the pipeline's system table and the
official script's printed averages, from one call."""

import gzip
import json
import re
from fractions import Fraction

import numpy as np
import pytest

from rouge_core import RougeConfigError, RougeInputError, RougeSettings, Signature, corpus_score
from rouge_core.aggregate import SystemSums, stats_bytes
from tests.conftest import GOLDEN, SHARED_DATA, read_jsonl, require_shared
from tests.oracle import find_rouge155_home, run_rouge155

CASES = read_jsonl(GOLDEN / "cases.jsonl")  # 8 systems x 25 documents, 4 references each
AVERAGE = re.compile(r"^(\S+) (\S+) Average_([RPF]): (\S+) \(\d+%-conf\.int\. (\S+) - (\S+)\)$")


def by_system(cases):
    systems = {}
    for case in cases:
        systems.setdefault(case["system"], []).append(case)
    return systems


def cnndm_rows() -> list[dict]:
    data = []
    for path in sorted(require_shared(SHARED_DATA / "cnndm_test_outputs").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            data += [json.loads(line) for line in fh]
    assert len(data) == 45_960
    return data


def printed_averages(report: str) -> dict:
    """{(system, metric, R/P/F): (average, low, high)} from a ROUGE-1.5.5 report."""
    return {m.group(1, 2, 3): m.group(4, 5, 6) for m in map(AVERAGE.match, report.splitlines()) if m}


def ours(cases, flags, **options) -> dict:
    out = {}
    for system, docs in by_system(cases).items():
        result = corpus_score(
            [d["candidate"] for d in docs],
            [d["references"] for d in docs],
            settings=flags,
            doc_ids=[d["doc_id"] for d in docs],
            system=system,
            **options,
        )
        for tag, score in result.items():
            for letter, interval in zip("RPF", score.rouge155):
                out[system, tag, letter] = tuple(interval)
    return out


@pytest.mark.parametrize(
    "expected, flags",
    [
        ("sample-output/ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m.out", "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"),
        ("oracle-output/ROUGE-test-n2-m-2-4-U-c90-r500-t1-a-d.out", "-n 2 -m -2 4 -U -c 90 -r 500 -t 1 -a -d"),
    ],
)
def test_the_printed_averages_are_the_official_scripts(expected, flags):
    official = printed_averages((GOLDEN / expected).read_text(encoding="utf-8"))
    assert len(official) == 8 * len(RougeSettings.from_flags(flags).metric_tags()) * 3
    assert ours(CASES, flags) == official


@pytest.mark.oracle
def test_index_eval_ids_against_the_live_script():
    # pyrouge numbers documents 1..N in sorted order; the script then sees those ids.
    home = find_rouge155_home()
    if home is None:
        pytest.skip("the official ROUGE-1.5.5 script is not installed: run scripts/install_oracle.sh")
    cases = [c for c in CASES if c["system"] in ("11", "21")]
    numbered = {doc: str(i) for i, doc in enumerate(sorted({c["doc_id"] for c in cases}), 1)}
    code, report, error = run_rouge155([dict(c, doc_id=numbered[c["doc_id"]]) for c in cases], "-n 2 -m -r 200", home)
    assert code == 0, error
    assert ours(cases, "-n 2 -m -r 200", eval_ids="index") == printed_averages(report)


def assert_equals_the_pipelines_table(cases, flags, folder):
    pq = pytest.importorskip("pyarrow.parquet")
    from tests.pipeline.runs import run_pipeline, write_jsonl

    run_pipeline(folder / "out", [write_jsonl(folder / "in.jsonl", cases)], flags=flags)
    table = pq.read_table(folder / "out" / "system_scores.parquet").to_pylist()
    systems = by_system(cases)
    assert {r["system"] for r in table} == set(systems)
    counts = {len(c["references"]) for c in cases}
    nrefs = f"{min(counts)}-{max(counts)}" if len(counts) > 1 else str(counts.pop())
    for system, docs in systems.items():
        result = corpus_score(
            [d["candidate"] for d in docs], [d["references"] for d in docs],
            settings=flags, doc_ids=[d["doc_id"] for d in docs], system=system,
        )
        pipeline_rows = [
            {k: v for k, v in r.items() if k != "profile"} for r in table if r["system"] == system
        ]
        rows = result.rows(system)
        # One signature: the settings' and the run's references per document (doc_ids, the default bootstrap).
        (theirs,), (mine,) = {r.pop("signature") for r in pipeline_rows}, {r.pop("signature") for r in rows}
        assert mine == theirs
        assert Signature.parse(mine).as_dict().get("nrefs", "1") == nrefs
        for row, pipeline_row in zip(rows, pipeline_rows, strict=True):
            assert {k: v for k, v in row.items() if v != pipeline_row[k]} == {}, (system, row["metric"])


def test_corpus_score_equals_the_pipelines_system_table(tmp_path):
    cases = [c for c in CASES if c["system"] in ("11", "12")]
    assert_equals_the_pipelines_table(cases, "-n 2 -m -2 4 -u -r 200", tmp_path)


def mean(*units: int) -> float:
    return float(Fraction(sum(units), len(units) * 100_000))


def test_the_accumulator_gives_the_same_numbers_in_any_blocks_and_merges():
    settings = RougeSettings.from_flags("-n 2")
    scores = corpus_score(["a b c", "a c", "b"], [["a b"], ["a b c"], ["c b"]], settings=settings)
    tags = settings.metric_tags()
    # Each document's MetricStats by hand: ROUGE-1, ROUGE-2, ROUGE-L of "a b c" vs "a b" etc.
    values = {d: stats_bytes(s, tags) for d, s in zip("123", [
        {"ROUGE-1": (2, 3, 2, 1.0, 0.66667, 0.8), "ROUGE-2": (1, 2, 1, 1.0, 0.5, 0.66667), "ROUGE-L": (2, 3, 2, 1.0, 0.66667, 0.8)},
        {"ROUGE-1": (3, 2, 2, 0.66667, 1.0, 0.8), "ROUGE-2": (2, 1, 0, 0.0, 0.0, 0.0), "ROUGE-L": (3, 2, 2, 0.66667, 1.0, 0.8)},
        {"ROUGE-1": (2, 1, 1, 0.5, 1.0, 0.66667), "ROUGE-2": (1, 0, 0, 0.0, 0.0, 0.0), "ROUGE-L": (2, 1, 1, 0.5, 1.0, 0.66667)},
    ])}
    one, two = SystemSums(1000, 20), SystemSums(1000, 20)
    one.add("1", values["1"], seed=0)
    for doc in "23":
        two.add(doc, values[doc], seed=0)
    merged = one.flush(0).merge(two.flush(0), seed=0)
    for m, tag in enumerate(tags):
        stats = merged.metric(m)
        # Hand-computed means over the three documents, in exact 1e-5 units.
        assert stats.means == {
            "ROUGE-1": (mean(100000, 66667, 50000), mean(66667, 100000, 100000), mean(80000, 80000, 66667)),
            "ROUGE-2": (mean(100000, 0, 0), mean(50000, 0, 0), mean(66667, 0, 0)),
            "ROUGE-L": (mean(100000, 66667, 50000), mean(66667, 100000, 100000), mean(80000, 80000, 66667)),
        }[tag]
        assert (scores[tag].recall, scores[tag].precision, scores[tag].f_measure) == stats.means
        assert scores[tag].micro == stats.micro(0.5)
        assert list(scores[tag].jackknife_se) == list(stats.jackknife_se)


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(RougeConfigError, match="2 candidates but 1 reference lists"):
        corpus_score(["a", "b"], [["a"]], settings="-n 1")
    with pytest.raises(RougeConfigError, match="not one text"):
        corpus_score("a b", ["a b"], settings="-n 1")
    with pytest.raises(RougeConfigError, match="doc_ids must be distinct"):
        corpus_score(["a", "b"], ["a", "b"], settings="-n 1", doc_ids=["x", "x"])
    with pytest.raises(RougeInputError, match="document '2' \\(position 1\\)"):
        corpus_score(["a", "b"], [["a"], []], settings="-n 1")


@pytest.mark.slow
def test_on_cnndm_the_printed_averages_are_the_official_scripts():
    # The official script's report on the four CNN/DM systems (tests/golden/cnndm), 4 x 11,490 pairs.
    flags = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
    data = cnndm_rows()
    official = (GOLDEN.parent / "cnndm" / "rouge155-c95-2-1-U-r1000-n4-w1.2-a-m.txt").read_text(encoding="utf-8")
    assert ours(data, flags) == printed_averages(official)


@pytest.mark.slow
def test_on_cnndm_corpus_score_equals_the_pipelines_system_table(tmp_path):
    # The three See et al. systems share their references; SimCLS was released with its
    # own tokenization of them, which one pipeline run refuses as conflicting references.
    cases = [c for c in cnndm_rows() if c["system"].startswith("see2017_")]
    assert len(cases) == 3 * 11_490
    assert_equals_the_pipelines_table(cases, "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m", tmp_path)


def test_under_the_rouge_score_preset_the_means_are_rouge_scores_within_the_units():
    # Means are over scores in exact 1e-5 units (README, "Presets"): within 5e-6 of the
    # mean of the rouge-score package's own F, and no ROUGE-1.5.5 averages.
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    docs = by_system(CASES)["11"]
    candidates = ["\n".join(d["candidate"]) for d in docs]
    references = [["\n".join(r) for r in d["references"]] for d in docs]
    settings = RougeSettings.from_preset("rouge_score", stem=True)
    result = corpus_score(candidates, references, settings=settings)
    peer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    for tag in ["rouge1", "rouge2", "rougeL", "rougeLsum"]:
        f = [peer.score_multi(refs, cand)[tag].fmeasure for cand, refs in zip(candidates, references)]
        assert abs(result[tag].f_measure - sum(f) / len(f)) <= 5e-6
        assert result[tag].rouge155 is None and result[tag].documents == 25


def test_stats_bytes_are_numpys_float64_array_bytes():
    """The packed values equal numpy's float64 array of the MetricStats, byte for byte:
    whole counts, ROUGE-W's weighted float counts, counts beyond 2**53 (rounded the
    same way) and five-decimal scores."""
    import numpy as np

    from rouge_core import MetricStats

    scores = {
        "ROUGE-1": MetricStats(12, 9, 7, 0.58333, 0.77778, 0.66667),
        "ROUGE-W-1.2": MetricStats(19.93, 13.97, 6.2149, 0.31184, 0.44488, 0.36666),
        "ROUGE-2": MetricStats(2**60 + 1, 0, 0, 0.0, 0.0, 0.0),
    }
    tags = ["ROUGE-W-1.2", "ROUGE-1", "ROUGE-2"]
    assert stats_bytes(scores, tags) == np.array([scores[t] for t in tags], dtype=np.float64).tobytes()
    assert stats_bytes(scores, iter(tags)) == stats_bytes(scores, tags)
    assert stats_bytes({}, []) == b""


def test_exact_units_is_the_exact_sum_of_any_doubles():
    """SystemSums' pooled counts: the block sum by binary exponent equals the exact
    rational sum (Python's Fraction), for doubles of every kind: whole, fractional,
    huge, subnormal, negative, zero, many exponents at once."""
    import numpy as np

    from rouge_core.aggregate import exact_units

    rng = np.random.default_rng(4)
    kinds = [
        rng.random(512) * 50,
        rng.integers(0, 1 << 40, 512).astype(np.float64) * 3.5,
        np.ldexp(rng.random(512), rng.integers(-1074, 1000, 512)),
        -rng.random(512) * 7,
        np.array([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3]),
        np.array([], dtype=np.float64),
    ]
    for values in kinds:
        exact = sum((Fraction(x) for x in values.tolist()), Fraction(0))
        assert Fraction(exact_units(values), 1 << 1074) == exact
    with pytest.raises((OverflowError, ValueError)):
        exact_units(np.array([1.0, np.inf]))


def test_bucket_sums_are_each_buckets_rows_added():
    from rouge_core.aggregate import bucket_sums

    rng = np.random.default_rng(11)
    for k, count in [(0, 3), (1, 20), (7, 1), (512, 20), (300, 1000)]:
        rows = rng.integers(-(10**12), 10**12, (k, 25))
        buckets = rng.integers(0, count, k)
        want = [[0] * 25 for _ in range(count)]  # by hand, in Python integers
        for row, b in zip(rows.tolist(), buckets.tolist()):
            want[b] = [x + y for x, y in zip(want[b], row)]
        got = bucket_sums(rows, buckets, count)
        assert got.dtype == np.int64 and got.tolist() == want


def test_documents_added_in_any_chunks_give_the_sums_of_all_of_them():
    import random

    from rouge_core.aggregate import BLOCK, SystemSums, stack, units

    rng = random.Random(8)
    docs = []
    for i in range(2 * BLOCK + 77):
        counts = [[rng.randint(1, 40), rng.randint(1, 40), rng.randint(0, 20)] for _ in range(3)]
        docs.append((f"d{i}", np.array([c + [rng.random(), rng.random(), rng.random()] for c in counts]).tobytes()))
    one_by_one, chunked = SystemSums(200, 7), SystemSums(200, 7)
    for doc_id, values in docs:
        one_by_one.add(doc_id, values, seed=3)
    rest = list(docs)
    while rest:
        k = rng.randint(0, 300)
        chunked.extend(rest[:k], seed=3)
        rest = rest[k:]
    assert len(chunked.pending) == len(docs) % BLOCK  # whole blocks entered, the rest pending
    for sums in (one_by_one, chunked):
        sums.flush(3)
    # Every document counted once: the totals are the plain sum of every document's units.
    assert chunked.n == len(docs) and chunked.totals.tolist() == units(stack([v for _, v in docs])).reshape(len(docs), -1).sum(axis=0).tolist()
    for name in ("totals", "counts_small", "bootstrap", "jackknife"):
        assert getattr(chunked, name).tolist() == getattr(one_by_one, name).tolist()
    assert chunked.counts_exact == one_by_one.counts_exact
