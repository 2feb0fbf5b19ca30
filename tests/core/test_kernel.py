"""The compiled kernel's switches and its stemmer.

Its statistics are compared with the pure-Python reference in
test_kernel_parity.py and, through the golden and differential tests, with
ROUGE-1.5.5 itself.
"""

from __future__ import annotations

import logging
import os
import pickle
import random

import pytest

from rouge_core import RougeConfigError, RougeScorer, RougeSettings, kernel_info
from rouge_core import kernel as kernel_module
from rouge_core.stem import porter_stem
from tests.conftest import require_kernel
from tests.core.test_stem import GOLDEN_TOKENS, golden_rows

SEED = int(os.environ.get("ROUGE_STEM_SEED") or random.SystemRandom().randrange(2**32))

SUFFIXES = [
    "ational",
    "tional",
    "enci",
    "anci",
    "izer",
    "bli",
    "alli",
    "entli",
    "eli",
    "ousli",
    "ization",
    "ation",
    "ator",
    "alism",
    "iveness",
    "fulness",
    "ousness",
    "aliti",
    "iviti",
    "biliti",
    "logi",
    "icate",
    "ative",
    "alize",
    "iciti",
    "ical",
    "ful",
    "ness",
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "ment",
    "ent",
    "sion",
    "tion",
    "e",
    "ll",
    "s",
    "ss",
    "ies",
    "sses",
    "eed",
    "ed",
    "ing",
    "at",
    "bl",
    "iz",
    "y",
    "",
]


def compiled_stemmer():
    require_kernel("c")
    return RougeScorer(RougeSettings.from_flags("-m"), kernel="c")._compiled._kernel


def test_the_compiled_stemmer_stems_every_golden_token_as_the_script():
    stemmer = compiled_stemmer()
    rows = golden_rows()
    assert len(rows) == GOLDEN_TOKENS
    wrong = [(t, morph, got) for t, morph, _ in rows if (got := stemmer.morph_stem(t)) != morph]
    assert not wrong, f"{len(wrong)} tokens differ from ROUGE-1.5.5's -m; first: {wrong[:10]}"
    wrong = [(t, stem, got) for t, _, stem in rows if (got := stemmer.porter_stem(t)) != stem]
    assert not wrong, f"{len(wrong)} tokens differ from ROUGE-1.5.5's stem(); first: {wrong[:10]}"


def test_the_compiled_stemmer_equals_porter_stem_on_random_tokens():
    """Random consonant/vowel/y/digit stems with one or two Porter suffixes (seeded, printed)."""
    print(f"ROUGE_STEM_SEED={SEED}")
    stemmer = compiled_stemmer()
    rng = random.Random(SEED)
    letters = "aeiouyybcdfglmnprstvwxz0123456789"
    for _ in range(50_000):
        word = "".join(rng.choice(letters) for _ in range(rng.randint(0, 7))) + rng.choice(SUFFIXES)
        word += rng.choice(SUFFIXES) if rng.random() < 0.3 else ""
        word = "y" + word if rng.random() < 0.1 else word
        assert stemmer.porter_stem(word) == porter_stem(word), f"ROUGE_STEM_SEED={SEED} word {word!r}"


def test_the_environment_variable_forces_pure_python(monkeypatch):
    settings = RougeSettings.from_flags("-n 2 -m")
    monkeypatch.setenv("ROUGE_CORE_KERNEL", "python")
    assert kernel_info()["kernel"] == "python"
    scorer = RougeScorer(settings)
    assert scorer.kernel == "python" and scorer._compiled is None
    monkeypatch.setenv("ROUGE_CORE_KERNEL", "nonsense")
    with pytest.raises(RougeConfigError, match="ROUGE_CORE_KERNEL"):
        RougeScorer(settings)


def test_without_the_compiled_module_scoring_falls_back_to_python_and_says_so(monkeypatch, caplog):
    monkeypatch.delenv("ROUGE_CORE_KERNEL", raising=False)
    monkeypatch.setattr(kernel_module, "_kernel", None)
    monkeypatch.setattr(kernel_module, "_IMPORT_ERROR", "ImportError: no _kernel")
    monkeypatch.setattr(kernel_module, "_logged", False)
    info = kernel_info()
    assert (info["kernel"], info["available"]) == ("python", False) and "no _kernel" in info["reason"]
    with caplog.at_level(logging.INFO, logger="rouge_core"):
        scorer = RougeScorer(RougeSettings.from_flags("-n 1"))
        RougeScorer(RougeSettings.from_flags("-n 1"))
    assert scorer.kernel == "python"
    assert [r.levelname for r in caplog.records] == ["WARNING"]  # logged once
    # Hand-worked: "a cat" vs "the cat": 1 of 2 unigrams.
    assert scorer.score_batch([("a cat", ["the cat"])])[0]["ROUGE-1"].recall == 0.5
    with pytest.raises(RougeConfigError, match="not available"):
        RougeScorer(RougeSettings.from_flags("-n 1"), kernel="c")


def test_score_batch_keeps_going_past_a_bad_pair(kernel):
    scorer = RougeScorer(RougeSettings.from_flags("-n 1 -2 -1 -u"), kernel=kernel, max_skip_bigrams=10)
    out = scorer.score_batch(
        [
            ("a cat", ["the cat"]),
            ("a cat", []),
            ("a b c d e f", ["a b c d e f"]),  # 15 skip-bigrams > 10
            ("the cat", ["a cat", "the dog"]),
        ]
    )
    assert out[0]["ROUGE-1"].recall == 0.5  # 1 of "the cat"
    assert out[1].reason == "wrong_type" and "at least one reference" in str(out[1])
    assert out[2].reason == "too_costly" and "15 skip-bigrams" in str(out[2])
    # -f A: hits 1 + 1 over reference totals 2 + 2; candidate total 2 per reference.
    s = out[3]["ROUGE-1"]
    assert (s.hits, s.reference_total, s.candidate_total, s.recall) == (2, 4, 4, 0.5)
    # ROUGE-SU*: "the cat" vs "a cat": unigrams but the last ("the" / "a") and the
    # pair (the, cat) / (a, cat): nothing shared; vs "the dog": "the" is shared.
    assert out[3]["ROUGE-SU*"].hits == 1


def test_a_scorer_pickles_and_scores_the_same_after(kernel):
    scorer = RougeScorer(
        RougeSettings.from_flags("-n 2 -w 1.2 -2 4 -u -m"), kernel=kernel, max_lcs_cells=1000
    )
    pair = ("the cats were running home\nfast", ["a cat runs home", "cats ran fast home"])
    before = scorer.score_batch([pair])[0]
    copy = pickle.loads(pickle.dumps(scorer))
    assert (copy.kernel, copy.max_lcs_cells) == (kernel, 1000)
    assert copy.score_batch([pair])[0] == before
    # Hand-checked: stemmed, "cat" and "home" and "run" are shared with the first
    # reference (4 tokens), "cat", "home", "fast" with the second (4 tokens): -f A R = 6/8.
    assert before["ROUGE-1"].recall == 0.75


def test_scorers_in_threads_give_the_sequential_results():
    """The kernel releases the GIL while it counts; one scorer per thread, and one
    scorer shared by threads, give what one thread gives."""
    import concurrent.futures

    require_kernel("c")
    settings = RougeSettings.from_flags("-n 2 -w 1.2 -2 4 -U -m")
    rng = random.Random(5)
    words = ["cats", "running", "the", "mat", "sat", "dogs", "went", "home", "quickly", "x1"]
    pairs = [
        (
            "\n".join(" ".join(rng.choices(words, k=rng.randint(3, 30))) for _ in range(3)),
            [" ".join(rng.choices(words, k=rng.randint(3, 40))) for _ in range(rng.randint(1, 3))],
        )
        for _ in range(400)
    ]
    expected = RougeScorer(settings, kernel="python").score_batch(pairs)
    shared = RougeScorer(settings, kernel="c")
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        own = list(
            pool.map(
                lambda chunk: RougeScorer(settings, kernel="c").score_batch(chunk),
                [pairs[i::4] for i in range(4)],
            )
        )
        common = list(pool.map(shared.score_batch, [pairs[i::4] for i in range(4)]))
    for results in (own, common):
        merged = [None] * len(pairs)
        for i, chunk in enumerate(results):
            merged[i::4] = chunk
        assert merged == expected


@pytest.mark.parametrize("weight", ["6", "6.0", "2", "0.5"])
def test_rouge_w_with_counts_beyond_2_to_the_53_is_the_same_on_both_paths(weight):
    """f(k) = k**6 passes 2**53 at k = 456 (6 is the largest -w, FLAG_LIMITS): the
    kernel hands such pairs to Python (Perl's integers become doubles there);
    smaller weights stay in the kernel."""
    require_kernel("c")
    sentence = " ".join(f"w{i % 70}" for i in range(500))
    pairs = [(sentence, [sentence, "w1 w2 w3"]), ("w1 w2 w3 w4", ["w1 w3 w4", sentence])]
    for mode in ("average", "best", "jackknife"):
        settings = RougeSettings.from_flags(f"-n 1 -w {weight}").replace(multi_reference=mode)
        expected = RougeScorer(settings, kernel="python").score_batch(pairs)
        got = RougeScorer(settings, kernel="c").score_batch(pairs)
        assert [[(t, [type(x) for x in s], s) for t, s in r.items()] for r in got] == [
            [(t, [type(x) for x in s], s) for t, s in r.items()] for r in expected
        ]
    # f(500) = 500**6 is an exact integer above 2**53 in Perl (and here).
    if weight == "6":
        assert expected[0]["ROUGE-W-6"].candidate_total == 500**6 > 2**53


@pytest.mark.parametrize(
    "spec, message",
    [
        (lambda metric: (7, 0), r"\(family, n\) = \(7, 0\)"),  # no such family
        (lambda metric: (0, metric.n + 1) if metric.family == "n" else (3, 0), "n-grams 1..max_ngram"),  # ROUGE-2 first
        (lambda metric: (1, 0), r"each once"),  # every metric read as ROUGE-L: the second is refused
    ],
)
def test_the_kernel_takes_parsed_metrics_and_refuses_a_spec_it_cannot_score(monkeypatch, spec, message):
    """The kernel is told each metric as (family, n) by rouge_core.names; a spec that is
    not the next metric of the settings is refused, never read as an n-gram."""
    require_kernel("c")
    from rouge_core.names import MetricName

    monkeypatch.setattr(MetricName, "kernel_spec", spec)
    with pytest.raises(ValueError, match=message):
        kernel_module.CompiledScorer(RougeScorer(RougeSettings.from_flags("-n 2 -2 4 -u"), kernel="python"))
