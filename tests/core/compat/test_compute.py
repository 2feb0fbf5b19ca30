"""`compute` against Hugging Face evaluate's rouge metric, run on rouge-score.

`evaluate` cannot load its metrics here (they come from the hub), so the reference
is rouge-score used exactly as evaluate's metric uses it: `evaluate_rouge` below is
`Rouge._compute` of huggingface/evaluate metrics/rouge/rouge.py (commit
a7dd338386a4fae9a1767e05eb9ef9479513d9e8), with its `Tokenizer` wrapper, unchanged
but for the self argument; `evaluate_compute` adds what evaluate's
`EvaluationModule.compute` (src/evaluate/module.py, same commit) does around it:
`with temp_seed(self.seed)`, numpy's global state seeded with the module's seed (the
`seed` of `evaluate.load`, else one drawn from numpy's state when the metric is
loaded) and restored afterwards.  (Checked once by hand against evaluate 0.4.6 itself,
loading that rouge.py from a local path: the same per-pair lists on 2,000 CNN/DM pairs
and 400 multi-reference pairs, and `compute(seed=s)` equal to
`evaluate.load(..., seed=s).compute(...)` for s = 0 and 5.)
"""

import os

import numpy as np
import pytest
from rouge_score import rouge_scorer, scoring

from rouge_core.compat import compute
from tests.core.compat.conftest import cnndm_pairs
from tests.core.test_rouge_score_preset import messy_pairs


class Tokenizer:
    """Helper class to wrap a callable into a class with a `tokenize` method as used by rouge-score."""

    def __init__(self, tokenizer_func):
        self.tokenizer_func = tokenizer_func

    def tokenize(self, text):
        return self.tokenizer_func(text)


def evaluate_rouge(predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False,
                   tokenizer=None):
    if rouge_types is None:
        rouge_types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]

    multi_ref = isinstance(references[0], list)

    if tokenizer is not None:
        tokenizer = Tokenizer(tokenizer)

    scorer = rouge_scorer.RougeScorer(rouge_types=rouge_types, use_stemmer=use_stemmer, tokenizer=tokenizer)
    if use_aggregator:
        aggregator = scoring.BootstrapAggregator()
    else:
        scores = []

    for ref, pred in zip(references, predictions):
        if multi_ref:
            score = scorer.score_multi(ref, pred)
        else:
            score = scorer.score(ref, pred)
        if use_aggregator:
            aggregator.add_scores(score)
        else:
            scores.append(score)

    if use_aggregator:
        result = aggregator.aggregate()
        for key in result:
            result[key] = result[key].mid.fmeasure

    else:
        result = {}
        for key in scores[0]:
            result[key] = list(score[key].fmeasure for score in scores)

    return result


def evaluate_compute(seed, **kwargs):
    """`evaluate.load("rouge", seed=seed).compute(**kwargs)`: `_compute` under datasets'
    `temp_seed(seed)`."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        return evaluate_rouge(**kwargs)
    finally:
        np.random.set_state(state)


@pytest.fixture(autouse=True)
def _both_paths(scoring_path):
    return scoring_path


def same_values(got, expected):
    assert list(got) == list(expected)
    for key in expected:
        assert got[key] == expected[key], key
        assert [type(v) for v in np.atleast_1d(got[key])] == [type(v) for v in np.atleast_1d(expected[key])]


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_without_aggregator_equals_evaluate(use_stemmer):
    pairs = cnndm_pairs(150)
    predictions, references = [p for _, p in pairs], [t for t, _ in pairs]
    same_values(compute(predictions=predictions, references=references, use_aggregator=False,
                        use_stemmer=use_stemmer),
                evaluate_rouge(predictions, references, use_aggregator=False, use_stemmer=use_stemmer))


def test_several_references_per_prediction_equal_evaluate():
    pairs = list(messy_pairs(31, 400))
    predictions, references = [c for c, _ in pairs], [refs for _, refs in pairs]
    for types in (None, ["rouge1", "rouge3", "rougeLsum"]):
        same_values(compute(predictions=predictions, references=references, rouge_types=types,
                            use_aggregator=False, use_stemmer=True),
                    evaluate_rouge(predictions, references, rouge_types=types, use_aggregator=False,
                                   use_stemmer=True))


def test_a_tokenizer_callable_equals_evaluate():
    pairs = list(messy_pairs(32, 200))
    predictions, references = [c for c, _ in pairs], [refs[0] for _, refs in pairs]
    same_values(compute(predictions=predictions, references=references, use_aggregator=False, tokenizer=str.split),
                evaluate_rouge(predictions, references, use_aggregator=False, tokenizer=str.split))


def test_aggregated_value_is_seeded_and_equals_evaluate_under_that_seed():
    pairs = cnndm_pairs(120)
    predictions, references = [p for _, p in pairs], [t for t, _ in pairs]
    got = compute(predictions=predictions, references=references, use_stemmer=True)
    # The documented value: evaluate's rouge loaded with seed=0.
    same_values(got, evaluate_compute(0, predictions=predictions, references=references, use_stemmer=True))
    assert compute(predictions=predictions, references=references, use_stemmer=True) == got  # on every call
    other = compute(predictions=predictions, references=references, use_stemmer=True, seed=5)
    same_values(other, evaluate_compute(5, predictions=predictions, references=references, use_stemmer=True))
    assert other != got


def test_evaluate_docstring_example():
    result = compute(predictions=["hello there", "general kenobi"], references=["hello there", "general kenobi"])
    assert result == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "rougeLsum": 1.0}


def test_mismatched_lengths_are_an_error():
    with pytest.raises(ValueError, match="same length; got 2 predictions and 1 references"):
        compute(predictions=["a", "b"], references=["a"])


# ---------------------------------------------------------------- beyond evaluate: ROUGE-1.5.5 flags
def test_flags_give_the_official_scripts_averages_and_per_pair_scores():
    import re

    from tests.oracle import find_rouge155_home, run_rouge155

    home = find_rouge155_home()
    if home is None:  # as tests/test_differential.py: CI must have it
        message = "the official ROUGE-1.5.5 script is not installed (no .oracle, no ROUGE155_HOME): run scripts/install_oracle.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    flags = "-c 95 -r 1000 -n 2 -m"
    pairs = cnndm_pairs(40)
    predictions = [p for _, p in pairs] + [c for c, _ in messy_pairs(51, 20)]
    references = [[t] for t, _ in pairs] + [refs for _, refs in messy_pairs(51, 20)]
    cases = [dict(system="A", doc_id=str(i), candidate=p, references=r)
             for i, (p, r) in enumerate(zip(predictions, references))]
    code, out, err = run_rouge155(cases, flags + " -d", home)
    assert code == 0, err
    averages = {m[0]: float(m[1]) for m in re.findall(r"^A (ROUGE-\w+) Average_F: ([0-9.]+)", out, re.M)}
    per_pair = {}
    for tag, doc, f in re.findall(r"^A (ROUGE-\w+) Eval (\d+)\.A R:[0-9.]+ P:[0-9.]+ F:([0-9.]+)", out, re.M):
        per_pair.setdefault(tag, {})[int(doc)] = float(f)
    assert sorted(averages) == ["ROUGE-1", "ROUGE-2", "ROUGE-L"]
    assert compute(predictions=predictions, references=references, flags=flags) == averages
    got = compute(predictions=predictions, references=references, flags=flags, use_aggregator=False)
    assert got == {tag: [docs[i] for i in range(len(cases))] for tag, docs in per_pair.items()}


def test_flags_refuse_the_rouge_score_options():
    with pytest.raises(ValueError, match="use_stemmer applies to the rouge_score preset"):
        compute(predictions=["a"], references=["a"], flags="-n 2", use_stemmer=True)
    with pytest.raises(ValueError, match="rouge_types applies to the rouge_score preset"):
        compute(predictions=["a"], references=["a"], flags="-n 2", rouge_types=["rouge1"])
