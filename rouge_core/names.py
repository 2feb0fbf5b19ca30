"""Metric names: one grammar for every way a ROUGE metric is written.

Two naming styles are in use, and they do not name quite the same metrics:

=====================  ==========================  ==========================================
metric                 ROUGE-1.5.5 (`rouge155`,    rouge-score (`rouge_score` preset)
                       `unicode` presets)
=====================  ==========================  ==========================================
n-gram overlap         `ROUGE-2`                   `rouge2`
LCS, summary level     `ROUGE-L`                   `rougeLsum`
LCS, whole text        (none)                      `rougeL`
weighted LCS           `ROUGE-W-1.2` (summary)     `rougeW-1.2` (whole text)
skip-bigrams           `ROUGE-S4`, `ROUGE-S*`      `rougeS4`, `rougeS*`
skip-bigrams+unigrams  `ROUGE-SU4`, `ROUGE-SU*`    `rougeSU4`, `rougeSU*`
=====================  ==========================  ==========================================

`parse` reads either style: ROUGE-1.5.5's dash style in any case (`rouge-su4`,
`Rouge-L`), rouge-score's names exactly as rouge-score spells them (`rougeLsum`,
not `rougeLSum` or `ROUGELSUM`: rouge-score refuses those, and so does every
parser here, with the name it meant).  rouge-score's `rougeL` (the LCS of the
whole texts) is never taken for ROUGE-1.5.5's `ROUGE-L` (the union LCS over
sentences, rouge-score's `rougeLsum`): `find` refuses it and says which name to use.

Every reader of a metric name goes through this module: the settings and presets,
the compiled kernels (`kernel_spec`: parsed tuples, never tags), the command
line's `--rouge-types`, `--sort` and meta-eval's `--metrics` (`find`), the text
checks, the compat layer (`rouge_score_type`: rouge-score's own rules and
errors), and every table's order (`sort_key`) and legend (`legend`).

Example:
    >>> name = parse("rouge-su4")
    >>> name.family, name.max_gap, name.tag("rouge155"), name.tag("rouge_score")
    ('SU', 4, 'ROUGE-SU4', 'rougeSU4')
    >>> find("rougeLsum", ["ROUGE-1", "ROUGE-L"])
    'ROUGE-L'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from rouge_core.errors import RougeConfigError

FAMILIES = ("n", "L", "W", "S", "SU")  # n-gram, LCS, weighted LCS, skip-bigram, skip-bigram + unigram

# The dash style: ROUGE-1.5.5's tags (l.532-646).  Case-insensitive.
_DASH = re.compile(r"rouge-(?:(?P<n>\d+)|(?P<l>l)|w-(?P<w>[^\s|]+)|(?P<s>su|s)(?P<gap>\*|\d+))", re.IGNORECASE)
# The run-together style: rouge-score's names (rouge1 .. rouge9, as rouge-score
# reads them), spelled exactly as rouge-score spells them.
_JOINED = re.compile(r"rouge(?:(?P<n>[1-9])|(?P<lsum>Lsum)|(?P<l>L)|W-(?P<w>[^\s|]+)|(?P<s>SU|S)(?P<gap>\*|\d+))")
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_STYLES = ("rouge155", "rouge_score")
# rouge-score 0.1.2's own test of an n-gram type (`re.match`: "rouge1\n" passes).
_ROUGE_SCORE_N = re.compile(r"rouge[0-9]$")
VALID_NAMES = (
    "ROUGE-1.5.5's ROUGE-1, ROUGE-2, ..., ROUGE-L, ROUGE-W-1.2, ROUGE-S4, ROUGE-SU4, ROUGE-S*, ROUGE-SU* "
    "(any case) or rouge-score's rouge1 .. rouge9, rougeL, rougeLsum, rougeW-1.2, rougeS4, rougeSU4, "
    "rougeS*, rougeSU* (as rouge-score spells them)"
)
class MetricName(NamedTuple):
    """One metric, as a name says it.

    Attributes:
        family: "n" (n-gram), "L" (LCS), "W" (weighted LCS), "S" (skip-bigram)
            or "SU" (skip-bigram plus unigram).
        n: the n of an n-gram metric (0 otherwise).
        weight: ROUGE-W's weight as typed, e.g. "1.2" (None otherwise).
        gap: the skip-bigram distance as typed, "4" or "*" for none (None
            otherwise).
        summary_level: for L and W, True for the union over sentences
            (ROUGE-1.5.5's ROUGE-L and ROUGE-W, rouge-score's rougeLsum), False for
            the whole text as one sequence (rouge-score's rougeL, rougeW-w);
            None for the other families, which read no sentences.
        style: "rouge155" (`ROUGE-2`) or "rouge_score" (`rouge2`): how it was
            written.
    """

    family: str
    n: int = 0
    weight: str | None = None
    gap: str | None = None
    summary_level: bool | None = None
    style: str = "rouge155"

    @classmethod
    def parse(cls, name: str) -> MetricName:
        """`names.parse`, as a constructor: `MetricName.parse("ROUGE-SU4")`."""
        return parse(name)

    @property
    def max_gap(self) -> int | None:
        """The skip-bigram gap as a number; None for `*` (no limit)."""
        return None if self.gap in (None, "*") else int(self.gap)

    @property
    def key(self) -> tuple:
        """What makes two names the same metric (the style and the typing of
        the weight and gap do not)."""
        weight = float(self.weight) if self.weight is not None else None
        gap = None if self.gap is None else -1 if self.gap == "*" else int(self.gap)
        return (self.family, self.n, weight, gap, self.summary_level)

    def tag(self, style: str | None = None) -> str:
        """The name in a style: "rouge155" (`ROUGE-SU4`), "rouge_score"
        (`rougeSU4`), or by default the style it was written in.  The unicode
        preset uses the rouge155 style.

        Raises:
            RougeConfigError: the metric has no name in that style (rouge-score's
                whole-text `rougeL` in ROUGE-1.5.5's style).
        """
        style = self.style if style is None else "rouge155" if style == "unicode" else style
        if style not in _STYLES:
            raise RougeConfigError(f"unknown metric name style {style!r}; choose one of {_STYLES}")
        dash = style == "rouge155"
        if dash and self.summary_level is False:
            whole = "rougeL" if self.family == "L" else f"rougeW-{self.weight}"
            raise RougeConfigError(
                f"{whole} (rouge-score's LCS of the whole text) has no ROUGE-1.5.5 name: ROUGE-1.5.5's "
                f"ROUGE-{self.family}{'' if self.family == 'L' else '-' + self.weight} is the union over "
                "sentences (rouge-score's rougeLsum for L)"
            )
        if self.family == "n":
            return f"ROUGE-{self.n}" if dash else f"rouge{self.n}"
        if self.family == "L":
            return "ROUGE-L" if dash else "rougeLsum" if self.summary_level else "rougeL"
        if self.family == "W":
            if not dash and self.summary_level:
                raise RougeConfigError(
                    f"ROUGE-W-{self.weight} (the weighted LCS over sentences) has no rouge-score name: "
                    f"rougeW-{self.weight} is the weighted LCS of the whole text"
                )
            return f"ROUGE-W-{self.weight}" if dash else f"rougeW-{self.weight}"
        return f"ROUGE-{self.family}{self.gap}" if dash else f"rouge{self.family}{self.gap}"

    def legend(self) -> str:
        """One line saying what the metric measures, for a table's legend, named in
        its own style (n-gram metrics share one line: `ROUGE-N`, `rougeN`).

        Example:
            >>> parse("ROUGE-2").legend(), parse("rougeSU4").legend()
            ('ROUGE-N: overlap of n-grams', 'rougeSU4: skip-bigrams (word pairs in order, with at most 4 words between them) plus unigrams')
        """
        dash = self.style == "rouge155"
        if self.family == "n":
            return ("ROUGE-N" if dash else "rougeN") + ": overlap of n-grams"
        name = self.tag()
        if self.family == "L":
            if dash:
                return f"{name}: longest common subsequence (summary level: union over sentences)"
            return f"{name}: " + ("union LCS over sentences" if self.summary_level else "LCS of the whole text")
        if self.family == "W":
            where = "summary level: union over sentences" if self.summary_level else "of the whole text"
            return f"{name}: weighted LCS with weight {self.weight}, favouring consecutive matches ({where})"
        apart = "at any distance" if self.gap == "*" else f"with at most {self.gap} words between them"
        return f"{name}: skip-bigrams (word pairs in order, {apart})" + (" plus unigrams" if self.family == "SU" else "")

    def kernel_spec(self) -> tuple[int, int]:
        """(family, n) as the compiled kernels take a metric: the family's index in
        FAMILIES (0 n-gram, 1 LCS, 2 weighted LCS, 3 skip-bigram, 4 skip-bigram plus
        unigram) and the n of an n-gram metric (0 otherwise); the weight and the gap
        are the settings', one per scorer.

        Example:
            >>> parse("ROUGE-3").kernel_spec(), parse("ROUGE-SU*").kernel_spec()
            ((0, 3), (4, 0))
        """
        return FAMILIES.index(self.family), self.n


def parse(name: str) -> MetricName:
    """Read a metric name in either style.

    Example:
        >>> parse("ROUGE-W-1.2")
        MetricName(family='W', n=0, weight='1.2', gap=None, summary_level=True, style='rouge155')
        >>> parse("rougeL").summary_level, parse("rougeLsum").summary_level, parse("ROUGE-L").summary_level
        (False, True, True)

    Raises:
        RougeConfigError: not a metric name, or an ambiguous one (`ROUGEL`).
    """
    if not isinstance(name, str):
        raise RougeConfigError(f"a metric name must be a string; got {type(name).__name__}")
    match = _DASH.fullmatch(name)
    style = "rouge155"
    if match is None:
        match, style = _JOINED.fullmatch(name), "rouge_score"
    if match is None:
        raise RougeConfigError(_unknown(name))
    return _from_groups(match.groupdict(), style, name)


def _from_groups(groups: dict, style: str, name: str) -> MetricName:
    if groups["n"] is not None:
        if int(groups["n"]) < 1:
            raise RougeConfigError(f"the n of {name!r} must be at least 1")
        return MetricName("n", n=int(groups["n"]), style=style)
    if groups.get("lsum"):
        return MetricName("L", summary_level=True, style=style)
    if groups["l"]:
        return MetricName("L", summary_level=style == "rouge155", style=style)
    if groups["w"] is not None:
        weight = groups["w"]
        if not _NUMBER.fullmatch(weight) or float(weight) <= 0:
            raise RougeConfigError(f"the weight of {name!r} must be a number > 0, e.g. 1.2")
        return MetricName("W", weight=weight, summary_level=style == "rouge155", style=style)
    return MetricName(groups["s"].upper(), gap=groups["gap"], style=style)


def _unknown(name: str) -> str:
    """Why `name` is not a metric name: ambiguous, misspelled (with the name meant), or unknown."""
    if re.fullmatch(r"rouge(l|w-.*)", name, re.IGNORECASE):
        letter = name[5].upper()
        return (
            f"ambiguous metric name {name!r}: write rouge{letter}{name[6:]} for rouge-score's "
            f"{'LCS' if letter == 'L' else 'weighted LCS'} of the whole text, or ROUGE-{letter}"
            f"{name[6:]} for ROUGE-1.5.5's union over sentences"
            + (" (rouge-score's rougeLsum)" if letter == "L" else "")
        )
    anycase = re.fullmatch(_JOINED.pattern, name, re.IGNORECASE)
    if anycase:
        groups = {key: value.upper() if key == "s" and value else value for key, value in anycase.groupdict().items()}
        try:
            meant = _from_groups(groups, "rouge_score", name)
        except RougeConfigError as error:
            return str(error)
        dash = f" (or ROUGE-1.5.5's {meant.tag('rouge155')})" if meant.family in ("n", "S", "SU") else ""
        return (
            f"unknown metric name {name!r}: did you mean {meant.tag('rouge_score')}{dash}? (rouge-score's names "
            f"are case-sensitive; the names are {VALID_NAMES})"
        )
    return f"unknown metric name {name!r}: use {VALID_NAMES}"


def find(name: str, tags: Sequence[str]) -> str:
    """The tag among `tags` (a scorer's metric tags) that `name` means.

    `ROUGE-L` and `rougeLsum` find each other (the same metric); rouge-score's
    whole-text `rougeL` finds only `rougeL`.

    Example:
        >>> find("rouge-2", ["ROUGE-1", "ROUGE-2"]), find("ROUGE-L", ["rouge1", "rougeL", "rougeLsum"])
        ('ROUGE-2', 'rougeLsum')
        >>> find("rougeL", ["ROUGE-1", "ROUGE-L"])
        Traceback (most recent call last):
        ...
        rouge_core.errors.RougeConfigError: rougeL is rouge-score's LCS of the whole text, which these scores do not have (ROUGE-1, ROUGE-L); ROUGE-1.5.5's ROUGE-L is the union LCS over sentences, rouge-score's rougeLsum: ask for ROUGE-L or rougeLsum to get it

    Raises:
        RougeConfigError: `name` is not one of the metrics of `tags`.
    """
    wanted = parse(name).key
    for tag in tags:
        if parse(tag).key == wanted:
            return tag
    have = ", ".join(tags)
    if wanted[0] in ("L", "W") and wanted[4] is False:
        raise RougeConfigError(
            f"{name} is rouge-score's {'LCS' if wanted[0] == 'L' else 'weighted LCS'} of the whole text, which "
            f"these scores do not have ({have}); ROUGE-1.5.5's ROUGE-{wanted[0]} is the union "
            f"{'LCS' if wanted[0] == 'L' else 'weighted LCS'} over sentences"
            + (", rouge-score's rougeLsum: ask for ROUGE-L or rougeLsum to get it" if wanted[0] == "L" else "")
        )
    raise RougeConfigError(f"no metric {name} among these scores ({have})")


def rouge_score_type(name: str) -> MetricName:
    """A rouge type as rouge-score 0.1.2's `RougeScorer` reads it, with its errors
    (the compat layer's parser): `rougeL`, `rougeLsum`, or `rouge` and one digit
    (its `re.match("rouge[0-9]$")`), 0 refused.

    Example:
        >>> rouge_score_type("rouge2").n, rouge_score_type("rougeLsum").summary_level
        (2, True)
        >>> rouge_score_type("rougeW-1.2")
        Traceback (most recent call last):
        ...
        rouge_core.errors.RougeConfigError: Invalid rouge type: rougeW-1.2

    Raises:
        RougeConfigError (a ValueError, as rouge-score raises): "Invalid rouge type: ...",
            or "rougen requires positive n: rouge0"; TypeError for a type that is not a string.
    """
    if name == "rougeL" or name == "rougeLsum":
        return MetricName("L", summary_level=name == "rougeLsum", style="rouge_score")
    if _ROUGE_SCORE_N.match(name):
        n = int(name[5:])
        if n <= 0:
            raise RougeConfigError(f"rougen requires positive n: {name}")
        return MetricName("n", n=n, style="rouge_score")
    raise RougeConfigError(f"Invalid rouge type: {name}")


def is_rouge_score_lcs(value) -> bool:
    """rouge-score 0.1.2's test of its two LCS types, by equality (`value == "rougeL"
    or value == "rougeLsum"`): bytes, or anything else, compare as Python compares
    them.  The compat layer reads types in rouge-score's own order with it."""
    return value == "rougeL" or value == "rougeLsum"


def is_rouge_score_lsum_only(types) -> bool:
    """rouge-score 0.1.2's `score` skips tokenizing the texts when its one type equals
    "rougeLsum" (which tokenizes per sentence)."""
    return len(types) == 1 and types[0] == "rougeLsum"


def is_metric_name(name: str) -> bool:
    """Whether `name` is a metric name of either style (`parse` would read it).

    Example:
        >>> is_metric_name("ROUGE-SU4"), is_metric_name("BERTScore")
        (True, False)
    """
    try:
        parse(name)
    except RougeConfigError:
        return False
    return True


def sort_key(name: str) -> tuple:
    """Lin (2004) Table 1's order: ROUGE-1..N, L, W, S*, S4, S9, SU*, SU4, SU9;
    names of no ROUGE metric after them, by name.

    Example:
        >>> sorted(["ROUGE-SU4", "ROUGE-L", "BLEU", "ROUGE-S*", "ROUGE-2"], key=sort_key)
        ['ROUGE-2', 'ROUGE-L', 'ROUGE-S*', 'ROUGE-SU4', 'BLEU']
    """
    try:
        metric = parse(name)
    except RougeConfigError:
        return (1, 0, 0, name)
    if metric.family == "n":
        return (0, 0, metric.n, name)
    if metric.family in ("L", "W"):
        return (0, 1 if metric.family == "L" else 2, 0 if metric.weight is None else float(metric.weight), name)
    return (0, 3 if metric.family == "S" else 4, -1 if metric.gap == "*" else int(metric.gap), name)


def legend(names: Sequence[str]) -> list[str]:
    """The legend lines of `names` (`MetricName.legend`), each once, in the order first seen.

    Example:
        >>> legend(["ROUGE-1", "ROUGE-2", "ROUGE-SU4"])
        ['ROUGE-N: overlap of n-grams', 'ROUGE-SU4: skip-bigrams (word pairs in order, with at most 4 words between them) plus unigrams']
    """
    lines: list[str] = []
    for name in names:
        line = parse(name).legend()
        if line not in lines:
            lines.append(line)
    return lines


def ordered(names: Sequence[str]) -> list[str]:
    """`names` in the one order every table, chart and listing shows metrics in (`sort_key`).

    Example:
        >>> ordered(["rougeSU4", "rougeW-1.2", "rouge2", "rougeLsum", "rougeL"])
        ['rouge2', 'rougeL', 'rougeLsum', 'rougeW-1.2', 'rougeSU4']
    """
    return sorted(names, key=sort_key)
