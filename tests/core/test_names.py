"""One metric-name grammar: both naming styles, their case rules, and the one
alias that must never happen silently (rouge-score's rougeL is not ROUGE-L)."""

import pytest

from rouge_core import RougeConfigError, RougeSettings, names


@pytest.mark.parametrize(
    "name, family, n, weight, gap, summary_level",
    [
        ("ROUGE-2", "n", 2, None, None, None),
        ("rouge-2", "n", 2, None, None, None),
        ("ROUGE-12", "n", 12, None, None, None),
        ("rouge2", "n", 2, None, None, None),
        ("ROUGE-L", "L", 0, None, None, True),
        ("rouge-l", "L", 0, None, None, True),
        ("rougeLsum", "L", 0, None, None, True),
        ("rougeL", "L", 0, None, None, False),
        ("ROUGE-W-1.2", "W", 0, "1.2", None, True),
        ("rouge-w-1.2", "W", 0, "1.2", None, True),
        ("rougeW-1.2", "W", 0, "1.2", None, False),
        ("ROUGE-S4", "S", 0, None, "4", None),
        ("ROUGE-S*", "S", 0, None, "*", None),
        ("ROUGE-SU4", "SU", 0, None, "4", None),
        ("rouge-su*", "SU", 0, None, "*", None),
        ("rougeSU4", "SU", 0, None, "4", None),
    ],
)
def test_both_styles_parse_to_the_same_parts(name, family, n, weight, gap, summary_level):
    metric = names.parse(name)
    assert (metric.family, metric.n, metric.weight, metric.gap, metric.summary_level) == (
        family, n, weight, gap, summary_level,
    )


@pytest.mark.parametrize(
    "name, meant",
    [("rougeLSum", "rougeLsum"), ("ROUGELSUM", "rougeLsum"), ("ROUGE2", "rouge2 (or ROUGE-1.5.5's ROUGE-2)"),
     ("rougesu4", "rougeSU4 (or ROUGE-1.5.5's ROUGE-SU4)"), ("Rouges*", "rougeS* (or ROUGE-1.5.5's ROUGE-S*)")],
)
def test_rouge_scores_names_are_case_sensitive_as_in_rouge_score(name, meant):
    # rouge-score 0.1.2 refuses these ("Invalid rouge type"); so does every parser here,
    # naming the spelling it takes.
    from rouge_score import rouge_scorer

    with pytest.raises(ValueError, match="Invalid rouge type"):
        rouge_scorer.RougeScorer([name]).score("a b", "a b")
    with pytest.raises(RougeConfigError) as error:
        names.parse(name)
    assert str(error.value) == (
        f"unknown metric name {name!r}: did you mean {meant}? (rouge-score's names are case-sensitive; "
        f"the names are {names.VALID_NAMES})"
    )
    assert "rougeLsum" in names.VALID_NAMES and "ROUGE-SU4" in names.VALID_NAMES
    with pytest.raises(RougeConfigError, match="did you mean"):
        RougeSettings.from_preset("rouge_score", rouge_types=[name])


@pytest.mark.parametrize("name", ["rougel", "ROUGEL", "RougeL", "ROUGEW-1.2", "rougew-1.2"])
def test_a_name_that_could_mean_either_lcs_is_refused(name):
    with pytest.raises(RougeConfigError, match="ambiguous metric name .*rougeLsum|ambiguous metric name .*union"):
        names.parse(name)


@pytest.mark.parametrize("name", ["ROUGE-0", "rouge0", "rouge10", "ROUGE-S", "ROUGE-W-0", "ROUGE-W-x", "BLEU", "", "ROUGE-2 "])
def test_what_is_not_a_metric_name(name):
    with pytest.raises(RougeConfigError):
        names.parse(name)
    assert not names.is_metric_name(name)


def test_tags_in_each_style():
    # The tags ROUGE-1.5.5 prints (l.532-646) and the names rouge-score 0.1.2 takes.
    assert [names.parse(t).tag("rouge155") for t in ["rouge1", "rougeLsum", "rougeSU4", "ROUGE-W-1.2"]] == [
        "ROUGE-1", "ROUGE-L", "ROUGE-SU4", "ROUGE-W-1.2",
    ]
    assert [names.parse(t).tag("rouge_score") for t in ["ROUGE-1", "ROUGE-L", "ROUGE-S*", "rougeL"]] == [
        "rouge1", "rougeLsum", "rougeS*", "rougeL",
    ]
    assert names.parse("ROUGE-SU4").tag("unicode") == "ROUGE-SU4"
    with pytest.raises(RougeConfigError, match="rougeL .*has no ROUGE-1.5.5 name.*rougeLsum"):
        names.parse("rougeL").tag("rouge155")
    with pytest.raises(RougeConfigError, match="no rouge-score name"):
        names.parse("ROUGE-W-1.2").tag("rouge_score")


def test_settings_tags_are_the_grammars_tags():
    tags = RougeSettings.from_flags("-n 4 -w 1.2 -2 -1 -U").metric_tags()
    assert [names.parse(t).tag() for t in tags] == tags


def test_find_never_takes_rougeL_for_ROUGE_L():
    rouge155 = ["ROUGE-1", "ROUGE-2", "ROUGE-L"]
    rouge_score = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    assert names.find("rouge-2", rouge155) == "ROUGE-2"
    assert names.find("rougeLsum", rouge155) == "ROUGE-L"
    assert names.find("ROUGE-L", rouge_score) == "rougeLsum"
    assert names.find("rougeL", rouge_score) == "rougeL"
    with pytest.raises(RougeConfigError, match="rougeL is rouge-score's LCS of the whole text.*ROUGE-L or rougeLsum"):
        names.find("rougeL", rouge155)
    with pytest.raises(RougeConfigError, match="no metric ROUGE-3 among these scores"):
        names.find("ROUGE-3", rouge155)
    # The weight is compared as a number, not as typed.
    assert names.find("ROUGE-W-1.20", ["ROUGE-W-1.2"]) == "ROUGE-W-1.2"


def test_the_rouge_score_preset_reads_names_of_either_style():
    settings = RougeSettings(preset="rouge_score", rouge_types=("ROUGE-1", "ROUGE-L", "rougeL"))
    assert settings.metric_tags() == ["rouge1", "rougeL", "rougeLsum"]  # in the one order, whatever given
    assert settings.signature() == RougeSettings(preset="rouge_score", rouge_types=("rougeL", "rougeLsum", "rouge1")).signature()
    with pytest.raises(RougeConfigError, match="no rouge-score name"):
        RougeSettings(preset="rouge_score", rouge_types=("ROUGE-W-1.2",))


def test_lin_table_order_and_legends():
    given = ["BLEU", "ROUGE-SU4", "ROUGE-S4", "ROUGE-S*", "ROUGE-W-1.2", "ROUGE-L", "ROUGE-10", "ROUGE-2"]
    assert sorted(given, key=names.sort_key) == [
        "ROUGE-2", "ROUGE-10", "ROUGE-L", "ROUGE-W-1.2", "ROUGE-S*", "ROUGE-S4", "ROUGE-SU4", "BLEU",
    ]
    assert names.legend(["rouge1", "rouge2", "rougeL", "rougeLsum"]) == [
        "rougeN: overlap of n-grams",
        "rougeL: LCS of the whole text",
        "rougeLsum: union LCS over sentences",
    ]
    assert names.legend(RougeSettings.from_flags("-n 2 -w 1.2 -2 4 -U").metric_tags()) == [
        "ROUGE-N: overlap of n-grams",
        "ROUGE-L: longest common subsequence (summary level: union over sentences)",
        "ROUGE-W-1.2: weighted LCS with weight 1.2, favouring consecutive matches (summary level: union over "
        "sentences)",
        "ROUGE-S4: skip-bigrams (word pairs in order, with at most 4 words between them)",
        "ROUGE-SU4: skip-bigrams (word pairs in order, with at most 4 words between them) plus unigrams",
    ]
    assert names.legend(["rougeW-1.2", "rougeS*", "rougeSU*"]) == [
        "rougeW-1.2: weighted LCS with weight 1.2, favouring consecutive matches (of the whole text)",
        "rougeS*: skip-bigrams (word pairs in order, at any distance)",
        "rougeSU*: skip-bigrams (word pairs in order, at any distance) plus unigrams",
    ]
    # The weight orders as a number; the two LCS of rouge-score by name.
    assert names.ordered(["ROUGE-W-10", "ROUGE-W-2", "rougeLsum", "rougeL"]) == [
        "rougeL", "rougeLsum", "ROUGE-W-2", "ROUGE-W-10",
    ]


def test_the_compat_reader_is_rouge_scores():
    assert names.rouge_score_type("rouge9") == names.parse("rouge9")
    assert names.rouge_score_type("rougeL").summary_level is False
    for name, message in (("rouge0", "rougen requires positive n: rouge0"), ("rougeW-1.2", "Invalid rouge type"),
                          ("ROUGE-2", "Invalid rouge type"), ("rougeLSum", "Invalid rouge type")):
        with pytest.raises(RougeConfigError, match=message):
            names.rouge_score_type(name)


def test_kernel_specs_are_parsed_tuples():
    tags = RougeSettings.from_flags("-n 3 -w 1.2 -2 4 -U").metric_tags()
    assert [names.parse(t).kernel_spec() for t in tags] == [(0, 1), (0, 2), (0, 3), (1, 0), (2, 0), (3, 0), (4, 0)]


def test_metric_name_is_public_with_its_constructor():
    from rouge_core import MetricName

    assert MetricName.parse("rouge-su4") == names.parse("ROUGE-SU4")
    assert MetricName.parse("ROUGE-W-1.2").key == MetricName.parse("ROUGE-W-1.20").key
