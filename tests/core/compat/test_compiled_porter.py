"""The kernel's C port of NLTK's Porter stemmer equals NLTK's `PorterStemmer().stem`.

Checked on every distinct `[a-z0-9]+` token of the CNN/DM outputs and references in
../shared/data (about 70,000 words) and on 100,000 generated strings over letters
that exercise the consonant/vowel rules (runs of `y`, doubled letters, digits).
The kernel uses the port only after `kernel.compiled_porter` has found it equal to
the installed NLTK on its probe words; otherwise it calls NLTK.
"""

import gzip
import random
import re

import pytest
from nltk.stem import porter

from rouge_core import kernel
from tests.conftest import require_kernel
from tests.core.compat.conftest import CNNDM

pytestmark = pytest.mark.skipif(not kernel.rouge_score_kernel_available(), reason="needs the compiled kernel")


@pytest.fixture(scope="module")
def nltk_stem():
    require_kernel("c")
    return porter.PorterStemmer().stem


def test_every_cnndm_word(nltk_stem):
    words = set()
    for path in sorted(CNNDM.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            words.update(re.findall(r"[a-z0-9]+", fh.read().lower()))
    assert len(words) > 50_000
    differing = [w for w in words if kernel._kernel.nltk_porter_stem(w) != nltk_stem(w)]
    assert differing == []


def test_generated_strings(nltk_stem):
    rng = random.Random(5)
    alphabet = "aeiouyyybcdlmnrstzl0"
    words = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(100_000)}
    differing = [w for w in words if kernel._kernel.nltk_porter_stem(w) != nltk_stem(w)]
    assert differing == []


def test_the_kernel_uses_the_port_only_for_nltks_default_stemmer(nltk_stem):
    assert kernel.compiled_porter(nltk_stem) == "nltk-porter"
    original = porter.PorterStemmer(porter.PorterStemmer.ORIGINAL_ALGORITHM).stem
    assert kernel.compiled_porter(original) is original  # another mode: NLTK is called


def test_examples_of_the_porter_paper_as_nltk_stems_them():
    # Porter (1980)'s examples (NLTK quotes them in its step docstrings), as NLTK_EXTENSIONS stems them.
    cases = {"caresses": "caress", "ponies": "poni", "ties": "tie", "cats": "cat", "feed": "feed",
             "agreed": "agre", "plastered": "plaster", "motoring": "motor", "sing": "sing",
             "conflated": "conflat", "hopping": "hop", "falling": "fall", "filing": "file", "happy": "happi",
             "sky": "sky", "relational": "relat", "conditional": "condit", "generously": "gener",
             "dying": "die", "innings": "inning", "controlling": "control"}
    for word, stem in cases.items():
        assert kernel._kernel.nltk_porter_stem(word) == stem, word


def test_the_kernel_calls_a_python_stemmer_when_given_one(nltk_stem):
    # A stemmer that is not NLTK's bound method is called from C (once per distinct
    # token, cached): the same scores as the compiled port on messy text.
    from rouge_core.compat import scoring
    from rouge_core.presets.rouge_score import parse_rouge_type
    from tests.core.test_rouge_score_preset import messy_pairs

    types = [parse_rouge_type(t) for t in ("rouge1", "rouge2", "rougeL", "rougeLsum")]
    calls = []

    def stem(word):
        calls.append(word)
        return nltk_stem(word)

    through_python = kernel.CompiledRougeScore(types, stem=stem, result_type=scoring.Score, layout=0)
    compiled = kernel.CompiledRougeScore(types, stem=nltk_stem, result_type=scoring.Score, layout=0)
    assert (through_python.stemmer, compiled.stemmer) == (stem, "nltk-porter")
    pairs = list(messy_pairs(41, 400))
    assert through_python.score_batch(pairs) == compiled.score_batch(pairs)
    assert calls and len(calls) == len(set(calls))  # each distinct token stemmed once
