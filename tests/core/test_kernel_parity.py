"""The compiled kernel against the pure-Python reference: identical statistics.

Every run draws a fresh seed (or takes ROUGE_PARITY_SEED) and prints it.  From
it come PAIRS (>= 3000) messy candidate/references pairs (the differential
test's generator: stemming, stopwords, digits, hyphens, non-ASCII, empty and
whitespace-only sentences, CRLF, both text forms, 1-5 references; plus long
sentences over 64 tokens, long texts, and inputs that are not texts at all) and
FLAG_SETS (>= 40) random ROUGE-1.5.5 flag combinations with random
multi-reference modes (jackknife too) and random work limits.  Each flag set
scores a share of the pairs through both paths; every MetricStats must be equal
value for value and type for type (an int where Perl keeps an integer), and every
refused pair must give the same error and reason.

Replay: ROUGE_PARITY_SEED=<seed> pytest tests/core/test_kernel_parity.py
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from rouge_core import RougeInputError, RougeScorer, RougeSettings
from rouge_core.aggregate import stats_bytes
from tests.conftest import require_kernel
from tests.test_differential import CONTENT, Generator, flag_string

SEED = int(os.environ.get("ROUGE_PARITY_SEED") or random.SystemRandom().randrange(2**32))
PAIRS = max(3000, int(os.environ.get("ROUGE_PARITY_PAIRS") or 3000))
FLAG_SETS = max(40, int(os.environ.get("ROUGE_PARITY_FLAG_SETS") or 40))
SHARE = 120  # random pairs per flag set, on top of its round-robin share

print(f"\nkernel parity test: ROUGE_PARITY_SEED={SEED}")

NOT_TEXTS = [
    (None, ["a cat"]),
    ("a cat", "a cat"),
    ("a cat", []),
    ("a cat", None),
    (["a", 3], ["a cat"]),
    ("a cat", [None]),
    ("a cat", [["cat", b"mat"]]),
    (42, ["a"]),
    ("a cat", ("the cat", ("a", "cat"))),  # a tuple of references and a tuple text: valid
]


def long_text(gen: Generator, rng: random.Random) -> str:
    """Sentences of 60-300 tokens (bit-parallel LCS over several machine words)."""
    pool = rng.sample(CONTENT, rng.randint(2, 30))
    return "\n".join(gen.sentence(pool, rng.randint(60, 300)) for _ in range(rng.randint(1, 3)))


def make_pairs(seed: int) -> list[tuple]:
    gen = Generator(seed)
    rng = gen.rng
    pairs: list[tuple] = []
    index = 0
    while len(pairs) < PAIRS:
        doc = gen.document(index, f"d{index}", ["A", "B", "C"])
        index += 1
        pairs += [(cand, doc["references"]) for cand in doc["candidates"].values()]
        if rng.random() < 0.03:  # long, repetitive texts
            pairs.append((long_text(gen, rng), [long_text(gen, rng) for _ in range(rng.randint(1, 3))]))
    # Over 1024 distinct shared tokens: skip-bigrams counted in a hash table, not a matrix.
    words = [f"w{i}" for i in range(1500)]
    rng.shuffle(words)
    pairs.append((" ".join(words), [" ".join(sorted(words)), " ".join(words[:700])]))
    return pairs + NOT_TEXTS


def make_flag_sets(seed: int) -> list[dict]:
    gen = Generator(seed + 1)
    rng = gen.rng
    sets = []
    for _ in range(FLAG_SETS):
        opts = [o for o in gen.flags() if o[0] != "d"]
        settings = RougeSettings.from_flags(flag_string(opts, rng))
        if rng.random() < 0.3:
            settings = settings.replace(multi_reference="jackknife")
        limits = {
            "max_skip_bigrams": rng.choice([5_000_000, 5_000_000, 2_000, 300]),
            "max_lcs_cells": rng.choice([20_000_000, 20_000_000, 3_000, 400]),
        }
        sets.append({"settings": settings, "limits": limits})
    return sets


PAIR_LIST = make_pairs(SEED)
FLAG_LIST = make_flag_sets(SEED)


def signature(result) -> object:
    """What must be equal: values and types of every statistic, or the error."""
    if isinstance(result, RougeInputError):
        return ("error", str(result), result.reason)
    return [(tag, tuple((type(x).__name__, x) for x in stats)) for tag, stats in result.items()]


@pytest.mark.parametrize("index", range(FLAG_SETS))
def test_kernel_equals_python(index):
    require_kernel("c")
    spec = FLAG_LIST[index]
    rng = random.Random(f"{SEED}-{index}")
    chosen = sorted(
        set(range(index, len(PAIR_LIST), FLAG_SETS)) | set(rng.sample(range(len(PAIR_LIST)), SHARE))
    )
    chosen += range(len(PAIR_LIST) - len(NOT_TEXTS), len(PAIR_LIST))
    pairs = [PAIR_LIST[i] for i in chosen]
    where = (
        f"seed={SEED} flag set {index}: {spec['settings'].rouge155_flags() if spec['settings'].multi_reference != 'jackknife' else spec['settings']} "
        f"{spec['limits']}; replay: ROUGE_PARITY_SEED={SEED} pytest {__file__} -k 'test_kernel_equals_python and [{index}]'"
    )
    python = RougeScorer(spec["settings"], kernel="python", **spec["limits"])
    compiled = RougeScorer(spec["settings"], kernel="c", **spec["limits"])
    expected = python.score_batch(pairs)
    got = compiled.score_batch(pairs)
    for pair, e, g in zip(pairs, expected, got):
        if signature(e) != signature(g):
            pytest.fail(
                f"{where}\ncandidate={pair[0]!r}\nreferences={pair[1]!r}\n"
                f"python: {signature(e)}\nkernel: {signature(g)}",
                pytrace=False,
            )
    # The kernel itself scored the pairs (it hands a pair back to Python only for
    # non-texts, work limits and numbers beyond 2**53): otherwise this test would
    # compare Python with itself.
    direct = compiled._compiled.score_batch(pairs)
    in_c = sum(r is not None for r in direct)
    scored = sum(not isinstance(e, RougeInputError) for e in expected)
    assert in_c >= 0.9 * scored, f"{where}: only {in_c} of {scored} scored pairs went through the kernel"
    # What the pipeline keeps of a pair (score_batch_values: the kernel packs the
    # statistics itself): the bytes of the dict path's statistics, bit for bit, and
    # the Python path's values.
    packed = compiled.score_batch_values(pairs)
    for pair, e, g, d in zip(pairs, expected, packed, got):
        if isinstance(e, RougeInputError):
            assert isinstance(g, RougeInputError) and (str(g), g.reason) == (str(e), e.reason), where
            continue
        assert g == stats_bytes(d, compiled.tags), f"{where}\ncandidate={pair[0]!r}"
        assert np.frombuffer(g).tolist() == np.frombuffer(stats_bytes(e, python.tags)).tolist(), where
    packed_in_c = compiled._compiled.score_batch(pairs, packed=True)
    assert [r is None for r in packed_in_c] == [r is None for r in direct], where
    # score() on single pairs takes the same path as score_batch.
    for pair, e in list(zip(pairs, expected))[:20]:
        try:
            single = compiled.score(candidate=pair[0], references=pair[1])
        except RougeInputError as err:
            single = err
        assert signature(single) == signature(e), where


def test_the_kernel_reuses_its_memo_across_batches():
    require_kernel("c")
    settings = RougeSettings.from_flags("-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m")
    compiled = RougeScorer(settings, kernel="c")
    pairs = PAIR_LIST[:300]
    first = [signature(r) for r in compiled.score_batch(pairs)]
    again = [signature(r) for r in compiled.score_batch(list(reversed(pairs)))]
    assert first == list(reversed(again))
    assert first == [signature(r) for r in RougeScorer(settings, kernel="python").score_batch(pairs)]
