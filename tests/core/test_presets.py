"""Presets as settings: rouge155 stays the default and unchanged; each preset's
scorer, metric names and signature."""

import pickle

import pytest

from rouge_core import RougeConfigError, RougeScorer, RougeSettings
from rouge_core.presets import PRESET_NAMES, PRESETS, get_preset
from rouge_core.presets.rouge155 import Rouge155Metrics
from rouge_core.presets.rouge_score import RougeScoreMetrics


def test_rouge155_is_the_default_and_its_signature_is_unchanged():
    flags = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
    s = RougeSettings.from_flags(flags)
    assert s.preset == "rouge155" and s.multi_reference == "average"
    assert RougeSettings.from_preset("rouge155", flags) == s
    assert s.signature(version="0.1.0") == (
        "rouge155|n:4|L:yes|W:1.2|S:*+S+U|stem:porter155+wn2.0|stop:no|limit:none|sent:newline|mref:average|alpha:0.5|"
        "t:0|ci:95%@1000|v:0.1.0"
    )
    assert type(RougeScorer(s)) is RougeScorer


def test_options_left_unset_keep_the_flags():
    # A command line passes --stem / --language as None when they are not given.
    s = RougeSettings.from_preset("unicode", "-n 2 -m", language="english", stem=None, multi_reference=None)
    assert s.stemming and s.multi_reference == "average" and s.language == "english"


def test_each_preset_has_its_scorer_and_metric_names():
    names = {}
    for name in PRESET_NAMES:
        options = {"language": "english"} if name == "unicode" else {}
        flags = None if name == "rouge_score" else "-n 2"
        settings = RougeSettings.from_preset(name, flags, **options)
        scorer = RougeScorer(settings)
        assert type(scorer) is RougeScorer  # one scorer; the preset gives its semantics
        assert type(scorer.metrics) is (RougeScoreMetrics if name == "rouge_score" else Rouge155Metrics)
        names[name] = list(scorer.score(candidate="a b", references=["a b"]))
    assert names == {
        "rouge155": ["ROUGE-1", "ROUGE-2", "ROUGE-L"],
        "rouge_score": ["rouge1", "rouge2", "rougeL", "rougeLsum"],
        "unicode": ["ROUGE-1", "ROUGE-2", "ROUGE-L"],
    }
    assert get_preset("rouge_score").default_multi_reference == "best"


@pytest.mark.parametrize("settings", [
    RougeSettings.from_preset("rouge_score", rouge_types=["rouge1", "rougeLsum"], stem=True),
    RougeSettings.from_preset("unicode", "-n 2 -m", language="russian"),
])
def test_settings_survive_pickling(settings):
    # Beam ships the settings to workers.
    again = pickle.loads(pickle.dumps(settings))
    assert again == settings and again.signature() == settings.signature()


def test_the_readme_example_under_every_preset():
    candidate = "Cats were running in Zürich.\nThe café closed early."
    references = ["The café in Zürich closed.\nA cat runs."]

    def scores(settings):
        got = RougeScorer(settings).score(candidate=candidate, references=references)
        return {name: (s.recall, s.precision, s.f_measure) for name, s in got.items()}

    # rouge155 (-n 2 -m): ü and é are separators (Zürich -> z, rich; café -> caf); WordNet
    # maps were -> be. Candidate cat be run in z rich | the caf close earli (10), reference
    # the caf in z rich close | a cat run (9). ROUGE-1 hits cat run in z rich the caf close = 8:
    # R = 8/9 -> 0.88889, P = 8/10 = 0.8, F = 0.711112 / 0.844445 -> 0.84211.
    # ROUGE-2: 9 and 8 bigrams, shared (in z) (z rich) (the caf) = 3: R = 3/8 = 0.375,
    # P = 3/9 -> 0.33333, F = 0.12499875 / 0.354165 -> 0.35294.
    # ROUGE-L (union LCS per reference sentence): the caf in z rich close (6) + cat run (2) = 8,
    # as ROUGE-1.
    assert scores(RougeSettings.from_flags("-n 2 -m")) == {
        "ROUGE-1": (0.88889, 0.8, 0.84211), "ROUGE-2": (0.375, 0.33333, 0.35294),
        "ROUGE-L": (0.88889, 0.8, 0.84211)}
    # unicode (english): Zürich and café stay whole; Snowball keeps "were".
    # Candidate cat were run in zürich | the café close earli (9), reference the café in
    # zürich close | a cat run (8). ROUGE-1 hits 7: R = 7/8 = 0.875, P = 7/9 -> 0.77778,
    # F = 0.6805575 / 0.82639 -> 0.82353. ROUGE-2: 8 and 7 bigrams, shared (in zürich)
    # (the café): R = 2/7 -> 0.28571, P = 2/8 = 0.25, F = 0.0714275 / 0.267855 -> 0.26666.
    # ROUGE-L: the café in zürich close (5) + cat run (2) = 7, as ROUGE-1.
    assert scores(RougeSettings.from_preset("unicode", "-n 2 -m", language="english")) == {
        "ROUGE-1": (0.875, 0.77778, 0.82353), "ROUGE-2": (0.28571, 0.25, 0.26666),
        "ROUGE-L": (0.875, 0.77778, 0.82353)}
    # rouge_score (stemmed): the rouge-score package's own numbers; rougeL is the LCS of the
    # whole texts, in z rich close = 4: R = 4/9, P = 4/10, F = 2PR/(P+R).
    rouge_score = scores(RougeSettings.from_preset("rouge_score", stem=True))
    assert rouge_score["rougeL"] == (4 / 9, 4 / 10, 2 * (4 / 10) * (4 / 9) / (4 / 10 + 4 / 9))
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    theirs = rouge_scorer.RougeScorer(list(rouge_score), use_stemmer=True).score(references[0], candidate)
    assert rouge_score == {name: (s.recall, s.precision, s.fmeasure) for name, s in theirs.items()}


def test_presets_are_a_registry_of_objects():
    assert list(PRESETS) == list(PRESET_NAMES) == ["rouge155", "rouge_score", "unicode"]
    assert all(get_preset(name) is preset and preset.name == name for name, preset in PRESETS.items())
    assert "__new__" not in vars(RougeScorer)  # the scorer is one class; the preset gives its semantics
    with pytest.raises(RougeConfigError, match="unknown preset 'rouge'; choose one of"):
        get_preset("rouge")
