"""The signature: the long form callers have always read, the short form, parsing
back, and the differences that say why two numbers are not comparable."""

import pytest

from rouge_core import RougeConfigError, RougeSettings, Signature
from rouge_core.signature import ABBREVIATIONS, nrefs_of

FLAGS = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
LONG = (
    "rouge155|n:4|L:yes|W:1.2|S:*+S+U|stem:porter155+wn2.0|stop:no|limit:none|sent:newline"
    "|mref:average|alpha:0.5|t:0|ci:95%@1000|v:9"
)


def test_without_the_runs_facts_the_long_form_is_the_settings_signature():
    settings = RougeSettings.from_flags(FLAGS)
    assert Signature.from_settings(settings, version="9").format() == LONG
    assert settings.signature(version="9") == LONG


def test_a_runs_fields_come_before_the_version_and_only_when_not_their_default():
    settings = RougeSettings.from_flags(FLAGS)
    signature = Signature.from_settings(settings, eval_ids="index", nrefs=4, resampling=(200, 7, 10), version="9")
    assert str(signature) == LONG.replace("|v:9", "|eval_ids:index|nrefs:4|bootstrap:200@7+jk10|v:9")
    assert signature.format(short=True) == (
        "rouge155|n:4|L:yes|W:1.2|S:*+S+U|m:porter155+wn2.0|s:no|l:none|sp:newline|f:average|p:0.5|t:0|c:95%@1000"
        "|e:index|#:4|bs:200@7+jk10|v:9"
    )
    # The defaults (doc_ids, one reference, the default bootstrap) leave the settings' signature as it was.
    assert str(Signature.from_settings(settings, eval_ids="doc_id", nrefs=1, resampling=(1000, 0, 20), version="9")) == LONG
    assert "|nrefs:1-4|" in str(Signature.from_settings(settings, nrefs="1-4"))


@pytest.mark.parametrize(
    "settings",
    [
        RougeSettings.from_flags(FLAGS),
        RougeSettings.from_preset("rouge_score", rouge_types=["rouge1", "rougeLsum"], stem=True),
        RougeSettings.from_preset("unicode", "-n 2 -m -s", language="english"),
        RougeSettings.from_preset("unicode", "-n 1", tokenizer=str.split),  # a value that holds ':'
    ],
)
@pytest.mark.parametrize("short", [False, True])
def test_both_forms_parse_back(settings, short):
    signature = Signature.from_settings(settings, eval_ids="index", nrefs="1-3")
    again = Signature.parse(signature.format(short=short))
    assert again == signature and again.differences(signature) == {}


def test_every_field_a_preset_writes_has_one_abbreviation():
    assert len(set(ABBREVIATIONS.values())) == len(ABBREVIATIONS)
    for settings in [
        RougeSettings.from_flags(FLAGS),
        RougeSettings.from_preset("rouge_score"),
        RougeSettings.from_preset("unicode", "-n 1", language="german"),
    ]:
        keys = [key for key, _ in Signature.from_settings(settings, eval_ids="doc_id", nrefs=1).fields]
        assert set(keys) <= set(ABBREVIATIONS)


def test_differences_name_each_field_that_changes_the_numbers():
    a = Signature.from_settings(RougeSettings.from_flags("-n 2 -m"), eval_ids="doc_id", nrefs=1, version="1")
    b = Signature.from_settings(RougeSettings.from_flags("-n 2"), eval_ids="index", nrefs=4, version="1")
    assert a.differences(b) == {
        "stem": ("porter155+wn2.0", "no"),
        "eval_ids": ("doc_id", "index"),
        "nrefs": ("1", "4"),
    }
    c = Signature.from_settings(RougeSettings.from_flags("-n 2 -m"), version="1")
    assert a.differences(c) == {} and c.differences(b)["nrefs"] == ("1", "4")


def test_nrefs_is_a_number_or_a_range():
    assert nrefs_of([1, 1]) == 1 and nrefs_of([4, 3, 4]) == "3-4"
    with pytest.raises(RougeConfigError, match="no documents"):
        nrefs_of([])
    for bad in (0, "0", "4-1", "4-4", "var", "1-", True):
        with pytest.raises(RougeConfigError, match="nrefs must be"):
            Signature.from_settings(RougeSettings(), nrefs=bad)
    with pytest.raises(RougeConfigError, match="eval_ids must be one of"):
        Signature.from_settings(RougeSettings(), eval_ids="position")
    with pytest.raises(RougeConfigError, match="resampling must be"):
        Signature.from_settings(RougeSettings(), resampling=(1000, -1, 20))


# Every RougeSettings field, with a value other than the default that changes a number
# (per_document, -d, prints per-document lines and changes none: it is not in the signature).
CHANGED = {
    "max_ngram": ("rouge155", {"max_ngram": 3}),
    "stemming": ("rouge155", {"stemming": True}),
    "remove_stopwords": ("rouge155", {"remove_stopwords": True}),
    "word_limit": ("rouge155", {"word_limit": 100}),
    "byte_limit": ("rouge155", {"byte_limit": 665}),
    "rouge_l": ("rouge155", {"rouge_l": False}),
    "wlcs_weight": ("rouge155", {"wlcs_weight": "1.2"}),
    "skip_distance": ("rouge155", {"skip_distance": "4"}),
    "skip_unigrams": ("rouge155", {"skip_distance": "4", "skip_unigrams": True}),
    "skip_both": ("rouge155", {"skip_distance": "4", "skip_both": True}),
    "multi_reference": ("rouge155", {"multi_reference": "jackknife"}),
    "alpha": ("rouge155", {"alpha": "0.8"}),
    "confidence": ("rouge155", {"confidence": "90"}),
    "resamples": ("rouge155", {"resamples": 500}),
    "counting": ("rouge155", {"counting": 1}),
    "preset": ("rouge155", {"preset": "unicode"}),
    "rouge_types": ("rouge_score", {"rouge_types": ("rouge1",)}),
    "language": ("unicode", {"language": "russian"}),
    "tokenizer": ("unicode", {"tokenizer": str.split}),
    "sentence_split": ("rouge155", {"sentence_split": "sentencex"}),
}


def test_every_setting_that_changes_a_number_changes_the_signature():
    import dataclasses

    fields = {f.name for f in dataclasses.fields(RougeSettings)}
    assert fields - {"per_document"} == set(CHANGED)  # a new setting must say how it shows in the signature
    for name, (preset, change) in CHANGED.items():
        given = {"preset": preset, **({"max_ngram": 2} if preset != "rouge_score" else {})}
        base, changed = RougeSettings(**given), RougeSettings(**{**given, **change})
        assert Signature.parse(changed.signature()).differences(Signature.parse(base.signature())), name
    base = RougeSettings(max_ngram=2)
    assert base.signature() == base.replace(per_document=True).signature()
    # and what a run adds: each of its fields, as given
    for facts in ({"eval_ids": "index"}, {"nrefs": 4}, {"nrefs": "1-4"}, {"resampling": (1000, 1, 20)},
                  {"resampling": (999, 0, 20)}, {"resampling": (1000, 0, 10)}):
        assert base.signature(**facts) != base.signature(), facts
        again = Signature.parse(base.signature(**facts))
        assert again == Signature.parse(Signature.parse(base.signature(**facts)).format(short=True))


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "a signature is a line"),
        ("n:2|v:1", "starts with the preset's name"),
        ("rouge155|n2", "not key:value"),
        ("rouge155|colour:red", "unknown signature field 'colour:red'"),
    ],
)
def test_parse_says_what_is_wrong(text, message):
    with pytest.raises(RougeConfigError, match=message):
        Signature.parse(text)


def test_the_settings_signature_takes_the_runs_facts_too():
    settings = RougeSettings.from_flags(FLAGS)
    assert settings.signature(version="9", eval_ids="index", nrefs=2) == LONG.replace(
        "|v:9", "|eval_ids:index|nrefs:2|v:9"
    )


def test_a_later_versions_field_is_kept_when_not_strict():
    text = "rouge155|n:2|f:average|colour:red|v:0.2.0"
    with pytest.raises(RougeConfigError, match="unknown signature field 'colour:red'"):
        Signature.parse(text)
    later = Signature.parse(text, strict=False)
    assert later.as_dict() == {"n": "2", "mref": "average", "colour": "red", "v": "0.2.0"}
    assert later.format() == "rouge155|n:2|mref:average|colour:red|v:0.2.0"
    assert later.format(short=True) == text
    assert Signature.parse("rouge155|n:2|mref:average|v:0.2.0").differences(later) == {"colour": (None, "red")}
