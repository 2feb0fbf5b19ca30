import subprocess
import sys

import pytest

from rouge_core import RougeConfigError, RougeSettings

PAPER_FLAGS = [
    "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m",
    "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0",
    "-n 4 -w 1.2 -m -2 4 -u -c 95 -r 1000 -f B -p 0.3 -a -d",
    "-n 2 -m -s -2 -1 -U -l 8 -r 100",
    "-n2 -b75 -t 1 -c 90",
]


@pytest.mark.parametrize("flags", PAPER_FLAGS)
def test_the_equivalent_command_line_round_trips(flags):
    settings = RougeSettings.from_flags(flags)
    assert RougeSettings.from_flags(settings.rouge155_flags()) == settings


def test_tags_follow_the_scripts_print_order():
    assert RougeSettings.from_flags("-n 2 -w 1.2 -2 4 -U").metric_tags() == [
        "ROUGE-1",
        "ROUGE-2",
        "ROUGE-L",
        "ROUGE-W-1.2",
        "ROUGE-S4",
        "ROUGE-SU4",
    ]
    # -u wins over -U; -x drops ROUGE-L; no -n means no ROUGE-N
    assert RougeSettings.from_flags("-x -2 -1 -u -U").metric_tags() == ["ROUGE-SU*"]


def test_signature_names_every_choice():
    signature = RougeSettings.from_flags("-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m").signature(version="9")
    assert signature == (
        "rouge155|n:4|L:yes|W:1.2|S:*+S+U|stem:porter155+wn2.0|stop:no|limit:none|sent:newline"
        "|mref:average|alpha:0.5|t:0|ci:95%@1000|v:9"
    )
    assert "mref:jackknife" in RougeSettings(multi_reference="jackknife").signature()


@pytest.mark.parametrize(
    "flags, message",
    [
        ("-l 10 -b 75", "cannot both be set"),
        ("-r 0", "at least 1"),
        ("-p 1.5", "between 0 and 1"),
        ("-c 101", "between 0 and 100"),
        ("-w 0", "number > 0"),
        ("-f C", "-f must be A"),
        ("-t 3", "0, 1 or 2"),
        ("-n two", "whole number"),
        ("-3 HM", "Basic Element"),
        ("-q", "unknown ROUGE-1.5.5 option -q"),
        ("-n", "needs a value"),
        ("settings.xml", "unexpected argument"),
    ],
)
def test_bad_flags_are_refused_with_a_reason(flags, message):
    with pytest.raises(RougeConfigError, match=message):
        RougeSettings.from_flags(flags)


def test_minus_r_zero_is_fine_without_a_bootstrap():
    assert RougeSettings.from_flags("-t 2 -r 0").resamples == 0


def test_jackknife_has_no_rouge155_command_line():
    with pytest.raises(RougeConfigError, match="no ROUGE-1.5.5 flag"):
        RougeSettings(multi_reference="jackknife").rouge155_flags()


def test_rouge_core_imports_neither_beam_nor_pyarrow():
    code = (
        "import sys, rouge_core, rouge_core.scoring, rouge_core.report;"
        "rouge_core.RougeScorer(rouge_core.RougeSettings.from_flags('-n 2 -m -w 1.2 -2 4 -u'))"
        ".score(candidate='a b', references=['a c']);"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('apache_beam', 'pyarrow'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_flags_follow_perls_getopt_std_syntax():
    # Bundled letters, a value attached or in the next argument, `--` ends the options.
    assert RougeSettings.from_flags("-amn2 -b75 --") == RougeSettings.from_flags("-a -m -n 2 -b 75")
    assert RougeSettings.from_flags(["-2", "-1", "-U"]).metric_tags() == ["ROUGE-L", "ROUGE-S*", "ROUGE-SU*"]
    with pytest.raises(RougeConfigError, match="option -n needs a value"):
        RougeSettings.from_flags("-mn")
    with pytest.raises(RougeConfigError, match="unknown ROUGE-1.5.5 option --stem"):
        RougeSettings.from_flags("--stem")
    with pytest.raises(RougeConfigError, match="unexpected argument 'x'"):
        RougeSettings.from_flags("-n 2 -- x")
