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


def test_eval_ids_and_nrefs_come_before_the_version():
    signature = Signature.from_settings(RougeSettings.from_flags(FLAGS), eval_ids="index", nrefs=4, version="9")
    assert str(signature) == LONG.replace("|v:9", "|eval_ids:index|nrefs:4|v:9")
    assert signature.format(short=True) == (
        "rouge155|n:4|L:yes|W:1.2|S:*+S+U|m:porter155+wn2.0|s:no|l:none|sp:newline|f:average|p:0.5|t:0|c:95%@1000"
        "|e:index|#:4|v:9"
    )


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
    signature = Signature.from_settings(settings, eval_ids="doc_id", nrefs="var")
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
    assert a.differences(c) == {"eval_ids": ("doc_id", None), "nrefs": ("1", None)}


def test_nrefs_is_a_number_or_var():
    assert nrefs_of([1, 1]) == 1 and nrefs_of([4, 3, 4]) == "var"
    with pytest.raises(RougeConfigError, match="no documents"):
        nrefs_of([])
    with pytest.raises(RougeConfigError, match="nrefs must be"):
        Signature.from_settings(RougeSettings(), nrefs=0)
    with pytest.raises(RougeConfigError, match="eval_ids must be one of"):
        Signature.from_settings(RougeSettings(), eval_ids="position")


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
    assert settings.signature(version="9", eval_ids="index", nrefs=1) == LONG.replace(
        "|v:9", "|eval_ids:index|nrefs:1|v:9"
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
