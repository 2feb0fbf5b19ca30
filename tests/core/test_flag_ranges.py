"""Every ROUGE-1.5.5 flag value the parser accepts is scored, or refused when the
settings are made with its range stated (issue 22): no value reaches the scorer
only to fail every row (`-w 100` overflowed a double) or crash it (`-2` past a C long)."""

import math

import pytest

from rouge_core import RougeConfigError, RougeScorer, RougeSettings
from rouge_core.settings import FLAG_LIMITS

CANDIDATE = "the cat sat on the mat today\nit was warm"
REFERENCES = ["the cat was on the mat\nit was a warm day", "a cat sat there"]
BASE = "-n 2 -r 20"


def flags_with(flag: str, value) -> str:
    extra = " -2 4" if flag in ("-w",) else ""
    if flag == "-b":
        extra = ""
    return f"{BASE}{extra} {flag} {value}"


def score_all_kernels(flags: str):
    settings = RougeSettings.from_flags(flags)
    results = []
    for kernel in ("python", "c"):
        scorer = RougeScorer(settings, kernel=kernel)
        results.append(scorer.score(candidate=CANDIDATE, references=REFERENCES))
    for scores in results:
        for stats in scores.values():
            # finite numbers (a ROUGE-W recall exceeds 1 for w < 1, in ROUGE-1.5.5 as here)
            assert all(math.isfinite(v) and v >= 0 for v in stats), (flags, stats)
    assert results[0] == results[1], flags
    return results[0]


@pytest.mark.parametrize("field, flag, low, high, why", FLAG_LIMITS, ids=[row[1] for row in FLAG_LIMITS])
def test_both_ends_of_every_range_are_scored(field, flag, low, high, why):
    for value in ([low] if low is not None else [-1, "-99999999999999999999"]) + [high]:
        if flag == "-r" and value == 0:
            value = 1  # -r 0 is refused outside -t 2 (ROUGE-1.5.5 divides by zero): a rule, not a range
        score_all_kernels(flags_with(flag, value))


@pytest.mark.parametrize(
    "flags, stated",
    [
        ("-w 100", "-w must be from 0.01 to 6"),
        ("-w 1e300", "-w must be from 0.01 to 6"),
        ("-w 0.001", "-w must be from 0.01 to 6"),
        ("-2 99999999999999999999", "-2 must be a negative number (no limit) or from 0 to 1,000,000,000"),
        ("-2 1000000001", "from 0 to 1,000,000,000"),
        ("-l 99999999999999999999", "-l must be from 1 to 9,223,372,036,854,775,807"),
        ("-b 9223372036854775808", "-b must be from 1 to 9,223,372,036,854,775,807"),
        ("-n 1" + "0" * 5000, "-n must be from 0 to 100"),
        ("-r 100001", "from 1 to 100,000"),
        ("-c 1e999", "between 0 and 100"),
    ],
)
def test_values_past_a_range_are_refused_at_parse_time_with_the_range(flags, stated):
    with pytest.raises(RougeConfigError) as err:
        RougeSettings.from_flags(f"{BASE} {flags}")
    assert stated in str(err.value)


def test_a_gap_beyond_every_text_is_scored_as_no_limit():
    """-2 G with G at least a text's length counts every skip-bigram, as -2 -1 does
    (the work limit no longer multiplies tokens by G)."""
    wide = score_all_kernels(f"{BASE} -x -2 1000000000")
    unlimited = score_all_kernels(f"{BASE} -x -2 -1")
    assert [(s.hits, s.reference_total) for s in wide.values()] == [
        (s.hits, s.reference_total) for s in unlimited.values()
    ]
