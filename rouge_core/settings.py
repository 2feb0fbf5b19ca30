"""RougeSettings: every choice that changes a ROUGE number, frozen and validated.

Built from a ROUGE-1.5.5 flag string, so the command line a paper reports can be
pasted as it is (`RougeSettings.from_flags("-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m")`).
Values that ROUGE prints as typed (`-w`, `-2`, `-c`) are kept as typed strings so
that the metric tags and the report come out byte-identical.
"""

from __future__ import annotations

import dataclasses
import getopt
import re
import shlex
from dataclasses import dataclass
from typing import Any, Optional

from rouge_core import sentence_split
from rouge_core.errors import RougeConfigError
from rouge_core.names import MetricName
from rouge_core.presets import get_preset
from rouge_core.signature import Signature

MULTI_REFERENCE_MODES = ("average", "best", "jackknife")
# Upper bounds, so that no setting can ask for unbounded time or memory: the
# bootstrap behind the printed averages costs resamples x documents.
MAX_RESAMPLES = 100_000
MAX_NGRAM = 100
_FLAG_OF_MODE = {"average": "A", "best": "B"}

# ROUGE-1.5.5's own getopts string (l.455): a letter followed by ':' takes a value.
# Python's getopt reads it with the syntax of Perl's Getopt::Std: bundled letters
# (`-am`), a value attached or in the next argument (`-n2`, `-n 2`).
_GETOPTS = "ahHb:c:de:f:l:mMn:p:st:r:2:3:w:uUvxz:"
_TAKES_VALUE = frozenset(letter for letter, following in zip(_GETOPTS, _GETOPTS[1:]) if following == ":")
_NOT_SUPPORTED = {
    "3": "Basic Element scoring (-3) needs BE-parsed input and is not supported",
    "z": "-z reads a file list; give the texts as JSONL instead",
    "M": "-M (stem models only) is undocumented in ROUGE-1.5.5 and not supported",
    "h": "-h prints ROUGE's usage; see `rouge-pipeline --help`",
    "H": "-H prints ROUGE's usage; see `rouge-pipeline --help`",
    "v": "-v prints ROUGE's debugging trace and is not supported",
}
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class RougeSettings:
    """The ROUGE-1.5.5 options, one field per flag.

    Attributes:
        max_ngram: `-n`: ROUGE-1 .. ROUGE-max_ngram (0: no ROUGE-N).
        stemming: `-m`: the script's Porter stemmer plus WordNet 2.0 exceptions.
        remove_stopwords: `-s`: drop the SMART stopwords.
        word_limit: `-l`: keep the first N words of every text (None: no limit).
        byte_limit: `-b`: keep the first N bytes of every text (None: no limit).
        rouge_l: ROUGE-L is computed unless `-x`.
        wlcs_weight: `-w`: ROUGE-W weight as typed, e.g. "1.2" (None: no ROUGE-W).
        skip_distance: `-2`: ROUGE-S maximum gap as typed; negative means no limit.
        skip_unigrams: `-u`: ROUGE-SU instead of ROUGE-S.
        skip_both: `-U`: ROUGE-S and ROUGE-SU.
        multi_reference: "average" (`-f A`), "best" (`-f B`) or "jackknife"
            (Lin 2004 section 2.1; not a ROUGE-1.5.5 flag); None: the preset's
            default ("best" for rouge_score, else "average").
        alpha: `-p`: F = R*P / ((1-alpha)*P + alpha*R), as typed.
        confidence: `-c`: confidence level in percent, as typed.
        resamples: `-r`: bootstrap resamples for the printed averages.
        counting: `-t`: 0 averages per-document scores, 1 sums counts over the
            corpus, 2 prints the summed counts.
        per_document: `-d`: print per-document lines in the report.
        preset: "rouge155" (ROUGE-1.5.5 exactly), "rouge_score" (rouge-score
            0.1.2 exactly) or "unicode" (any script); see `rouge_core.presets`.
        rouge_types: the rouge_score preset's metrics, e.g. ("rouge1", "rougeLsum");
            its ROUGE-1.5.5 fields above are derived from them.
        language: the unicode preset's Snowball stemmer and stopword language.
        tokenizer: the unicode preset's optional word segmenter, a callable
            from a normalised sentence to its tokens.
        sentence_split: how texts become sentences, which summary-level
            ROUGE-L/W and rougeLsum depend on: "newline" (as given, one per
            line), "sep:STR" (also at every STR) or "sentencex" (a sentence
            segmenter); see `rouge_core.sentence_split`.
    """

    max_ngram: int = 0
    stemming: bool = False
    remove_stopwords: bool = False
    word_limit: Optional[int] = None
    byte_limit: Optional[int] = None
    rouge_l: bool = True
    wlcs_weight: Optional[str] = None
    skip_distance: Optional[str] = None
    skip_unigrams: bool = False
    skip_both: bool = False
    multi_reference: Optional[str] = None
    alpha: str = "0.5"
    confidence: str = "95"
    resamples: int = 1000
    counting: int = 0
    per_document: bool = False
    preset: str = "rouge155"
    rouge_types: Optional[tuple[str, ...]] = None
    language: Optional[str] = None
    tokenizer: Optional[Any] = None
    sentence_split: str = "newline"

    def __post_init__(self) -> None:
        def fail(what: str, value: object, allowed: str) -> None:
            raise RougeConfigError(f"{what} must be {allowed}; got {value!r}")

        preset = get_preset(self.preset)
        for name, value in preset.resolve(self).items():
            object.__setattr__(self, name, value)
        if self.multi_reference is None:
            object.__setattr__(self, "multi_reference", preset.default_multi_reference)

        if not isinstance(self.max_ngram, int) or not 0 <= self.max_ngram <= MAX_NGRAM:
            fail("max_ngram (-n)", self.max_ngram, f"a whole number from 0 to {MAX_NGRAM}")
        for name, flag in (("word_limit", "-l"), ("byte_limit", "-b")):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value <= 0):
                fail(f"{name} ({flag})", value, "a whole number > 0, or None for no limit")
        if self.word_limit is not None and self.byte_limit is not None:
            raise RougeConfigError(
                "word_limit (-l) and byte_limit (-b) cannot both be set: "
                "ROUGE-1.5.5 limits a text in words or in bytes, not both"
            )
        if self.wlcs_weight is not None:
            if not _NUMBER.fullmatch(str(self.wlcs_weight)) or float(self.wlcs_weight) <= 0:
                fail("wlcs_weight (-w)", self.wlcs_weight, "a number > 0, e.g. '1.2'")
        if self.skip_distance is not None and not _INTEGER.fullmatch(str(self.skip_distance)):
            fail("skip_distance (-2)", self.skip_distance, "a whole number (negative: no gap limit)")
        if self.multi_reference not in MULTI_REFERENCE_MODES:
            fail("multi_reference (-f)", self.multi_reference, f"one of {MULTI_REFERENCE_MODES}")
        if not _NUMBER.fullmatch(str(self.alpha)) or not 0 <= float(self.alpha) <= 1:
            fail("alpha (-p)", self.alpha, "a number between 0 and 1")
        if not _NUMBER.fullmatch(str(self.confidence)) or not 0 <= float(self.confidence) <= 100:
            fail("confidence (-c)", self.confidence, "a number between 0 and 100")
        sentence_split.check(self.sentence_split)
        if self.counting not in (0, 1, 2):
            fail("counting (-t)", self.counting, "0, 1 or 2")
        if not isinstance(self.resamples, int) or not 0 <= self.resamples <= MAX_RESAMPLES:
            fail("resamples (-r)", self.resamples, f"a whole number from 1 to {MAX_RESAMPLES:,}")
        check_flag_ranges(self)
        if self.resamples == 0 and self.counting != 2:
            # ROUGE-1.5.5 dies with "Illegal division by zero" (l.906) here.
            raise RougeConfigError(
                "resamples (-r) must be at least 1: the printed averages are bootstrap "
                "means (ROUGE-1.5.5 itself dies on -r 0); use -t 2 for raw counts "
                "without a bootstrap"
            )

    # ------------------------------------------------------------------ flags
    @classmethod
    def from_flags(cls, flags: str | list[str]) -> "RougeSettings":
        """Build settings from ROUGE-1.5.5 command-line flags.

        `-a` and `-e DIR` are accepted and ignored (every system is always scored;
        the data files ship with this package).  Options ROUGE-1.5.5 has but this
        package does not (`-3`, `-z`, `-M`, `-v`) are refused with a reason.

        Example:
            >>> s = RougeSettings.from_flags("-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m")
            >>> s.metric_tags()
            ['ROUGE-1', 'ROUGE-2', 'ROUGE-3', 'ROUGE-4', 'ROUGE-L', 'ROUGE-W-1.2', 'ROUGE-S*', 'ROUGE-SU*']
        """
        args = shlex.split(flags) if isinstance(flags, str) else list(flags)
        try:
            pairs, rest = getopt.getopt(args, _GETOPTS)
        except getopt.GetoptError as error:  # a known option can only lack its value
            if error.opt in _TAKES_VALUE:
                raise RougeConfigError(f"option -{error.opt} needs a value") from None
            option = f"-{error.opt}" if len(error.opt) == 1 else f"--{error.opt}"  # the script has no long options
            raise RougeConfigError(f"unknown ROUGE-1.5.5 option {option} in {flags!r}") from None
        if rest:
            raise RougeConfigError(
                f"unexpected argument {rest[0]!r} in the ROUGE-1.5.5 flags: give only options "
                "(the input comes from the JSONL file, not a ROUGE XML config)"
            )
        opts: dict[str, object] = {}
        for option, value in pairs:
            letter = option[1:]
            if letter in _NOT_SUPPORTED:
                raise RougeConfigError(_NOT_SUPPORTED[letter])
            opts[letter] = value if letter in _TAKES_VALUE else True

        def integer(letter: str, what: str) -> int:
            text = str(opts[letter])
            if not _INTEGER.fullmatch(text):
                raise RougeConfigError(f"-{letter} ({what}) must be a whole number; got {text!r}")
            return whole_number_in_range(letter, text)

        mode = str(opts.get("f", "A"))
        if mode not in ("A", "B"):
            raise RougeConfigError(f"-f must be A (model average) or B (best model); got {mode!r}")
        return cls(
            max_ngram=integer("n", "max n-gram") if "n" in opts else 0,
            stemming="m" in opts,
            remove_stopwords="s" in opts,
            word_limit=integer("l", "word limit") if "l" in opts else None,
            byte_limit=integer("b", "byte limit") if "b" in opts else None,
            rouge_l="x" not in opts,
            wlcs_weight=str(opts["w"]) if "w" in opts else None,
            skip_distance=str(opts["2"]) if "2" in opts else None,
            skip_unigrams="u" in opts,
            skip_both="U" in opts,
            multi_reference="best" if mode == "B" else "average",
            alpha=str(opts.get("p", "0.5")),
            confidence=str(opts.get("c", "95")),
            resamples=integer("r", "resamples") if "r" in opts else 1000,
            counting=integer("t", "counting unit") if "t" in opts else 0,
            per_document="d" in opts,
        )

    @classmethod
    def from_preset(cls, name: str, flags: str | list[str] | None = None, **options: Any) -> "RougeSettings":
        """Settings of a preset: ROUGE-1.5.5 flags (rouge155, unicode) and options.

        `stem` is accepted as another name of `stemming`; options that are None
        are left out (so a command line's unset options keep the flags' values).

        Example:
            >>> RougeSettings.from_preset("rouge_score", stem=True).metric_tags()
            ['rouge1', 'rouge2', 'rougeL', 'rougeLsum']
            >>> RougeSettings.from_preset("unicode", "-n 2 -m", language="russian").metric_tags()
            ['ROUGE-1', 'ROUGE-2', 'ROUGE-L']
        """
        if "stem" in options:
            options["stemming"] = options.pop("stem")
        options = {key: value for key, value in options.items() if value is not None}
        if flags is None:
            return cls(preset=name, **options)
        if name == "rouge_score":
            raise RougeConfigError("the rouge_score preset takes rouge_types, not ROUGE-1.5.5 flags")
        return dataclasses.replace(cls.from_flags(flags), preset=name, **options)

    def rouge155_flags(self) -> str:
        """The equivalent ROUGE-1.5.5 flags (add `-e DATA_DIR -a` and the config file).

        Raises:
            RougeConfigError: for the jackknife multi-reference mode, which
                ROUGE-1.5.5 removed in version 1.4 and has no flag for.

        Example:
            >>> RougeSettings.from_flags("-n 2 -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0").rouge155_flags()
            '-c 95 -r 1000 -n 2 -m -2 4 -u -f A -p 0.5 -t 0'
        """
        if self.preset != "rouge155":
            raise RougeConfigError(f"the {self.preset} preset has no ROUGE-1.5.5 command line")
        if self.multi_reference not in _FLAG_OF_MODE:
            raise RougeConfigError(
                "the jackknife multi-reference mode has no ROUGE-1.5.5 flag "
                "(the script dropped jackknifing in version 1.4)"
            )
        flags = ["-c", self.confidence, "-r", str(self.resamples)]
        if self.max_ngram:
            flags += ["-n", str(self.max_ngram)]
        flags += ["-m"] if self.stemming else []
        flags += ["-s"] if self.remove_stopwords else []
        flags += ["-l", str(self.word_limit)] if self.word_limit is not None else []
        flags += ["-b", str(self.byte_limit)] if self.byte_limit is not None else []
        flags += ["-x"] if not self.rouge_l else []
        flags += ["-w", self.wlcs_weight] if self.wlcs_weight is not None else []
        if self.skip_distance is not None:
            flags += ["-2", self.skip_distance]
            flags += ["-u"] if self.skip_unigrams else []
            flags += ["-U"] if self.skip_both else []
        flags += ["-f", _FLAG_OF_MODE[self.multi_reference], "-p", self.alpha]
        flags += ["-t", str(self.counting)]
        flags += ["-d"] if self.per_document else []
        return " ".join(flags)

    def replace(self, **changes: object) -> "RougeSettings":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    # ---------------------------------------------------------------- metrics
    def metric_tags(self) -> list[str]:
        """The metric blocks in ROUGE-1.5.5's print order (l.532-646).

        With `-2`, `-u` wins over `-U`; `-U` prints ROUGE-S and then ROUGE-SU.
        The rouge_score preset's metrics are its `rouge_types`, in the one metric order (`names.ordered`).
        """
        if self.rouge_types is not None:
            return list(self.rouge_types)
        metrics = [MetricName("n", n=n) for n in range(1, self.max_ngram + 1)]
        if self.rouge_l:
            metrics.append(MetricName("L", summary_level=True))
        if self.wlcs_weight is not None:
            metrics.append(MetricName("W", weight=self.wlcs_weight, summary_level=True))
        if self.skip_distance is not None:
            gap = "*" if int(self.skip_distance) < 0 else self.skip_distance
            if self.skip_unigrams:
                metrics.append(MetricName("SU", gap=gap))
            elif self.skip_both:
                metrics += [MetricName("S", gap=gap), MetricName("SU", gap=gap)]
            else:
                metrics.append(MetricName("S", gap=gap))
        return [metric.tag() for metric in metrics]

    @property
    def alpha_value(self) -> float:
        return float(self.alpha)

    @property
    def weight_value(self) -> float:
        return float(self.wlcs_weight) if self.wlcs_weight is not None else 1.0

    @property
    def gap_limit(self) -> Optional[int]:
        """Maximum skip-bigram gap, or None for no limit (`-2` negative)."""
        if self.skip_distance is None or int(self.skip_distance) < 0:
            return None
        return int(self.skip_distance)

    # -------------------------------------------------------------- signature
    def signature(
        self,
        version: str | None = None,
        *,
        eval_ids: str | None = None,
        nrefs: int | str | None = None,
        resampling: tuple[int, int, int] | None = None,
    ) -> str:
        """A short, stable description of everything that changes the numbers: the
        long form of `rouge_core.signature.Signature`, with the run's evaluation ids,
        references per document and bootstrap when given (settings alone do not know
        them) and not their defaults.

        Example:
            >>> RougeSettings.from_flags("-n 2 -m -2 4 -u -c 95 -r 1000").signature(version="0.1.0")
            'rouge155|n:2|L:yes|W:no|S:4+U|stem:porter155+wn2.0|stop:no|limit:none|sent:newline|mref:average|alpha:0.5|t:0|ci:95%@1000|v:0.1.0'
        """
        return Signature.from_settings(
            self, eval_ids=eval_ids, nrefs=nrefs, resampling=resampling, version=version
        ).format()


# ---------------------------------------------------------------- flag ranges
# Every value the flag parser accepts is either scored or refused here, when the
# settings are made, with its range stated: no value may reach the scorer and fail
# every row there (an overflow) or crash it (a C long).  One row per valued flag:
# (field, flag, lowest, highest, why the bound).
FLAG_LIMITS = (
    ("max_ngram", "-n", 0, MAX_NGRAM, "n-grams longer than 100 words are not a measure of anything"),
    ("word_limit", "-l", 1, (1 << 63) - 1, "a 64-bit count"),
    ("byte_limit", "-b", 1, (1 << 63) - 1, "a 64-bit count"),
    # ROUGE-1.5.5 computes f(f(x)) = x**(w*w) of a reference's length (l.2450):
    # with w <= 6 it stays finite for texts of up to 10**8.5 words, more than
    # input.max_text_bytes (256 MiB at most) can hold; and x**(1/w), finite for w >= 0.01.  (Lin 2004 3.2 means w > 1; the script
    # accepts w < 1, where a ROUGE-W recall can exceed 1, and so does this package.)
    ("wlcs_weight", "-w", 0.01, 6, "ROUGE-W raises lengths to the powers w*w and 1/w"),
    # Any gap at least a text's length means "no limit"; the kernel holds the gap
    # in a C long.  Negative values mean no limit and are not bounded.
    ("skip_distance", "-2", None, 1_000_000_000, "a gap beyond any text's length"),
    ("resamples", "-r", 0, MAX_RESAMPLES, "the bootstrap costs resamples x documents"),
    ("confidence", "-c", 0, 100, "a percentage"),
    ("alpha", "-p", 0, 1, "a weight between recall and precision"),
)
_LIMIT_OF_FLAG = {flag[1:]: (low, high) for _, flag, low, high, _ in FLAG_LIMITS}
_MAX_DIGITS = 25  # more digits than any bound above: refused before int() is tried


def _describe(flag: str, low, high, why: str) -> str:
    if low is None:
        return f"{flag} must be a negative number (no limit) or from 0 to {high:,} ({why})"
    return f"{flag} must be from {low:,} to {high:,} ({why})"


def whole_number_in_range(letter: str, text: str) -> int:
    """The integer value of flag -`letter` typed as `text`, refused past its range
    (before a 5,000-digit number reaches int())."""
    limits = _LIMIT_OF_FLAG.get(letter)
    if limits is not None and len(text.lstrip("+-")) > _MAX_DIGITS and not (limits[0] is None and text.startswith("-")):
        row = next(r for r in FLAG_LIMITS if r[1] == f"-{letter}")
        raise RougeConfigError(f"{_describe(row[1], row[2], row[3], row[4])}; got {text[:40]!r}...")
    return int(text)


def check_flag_ranges(settings: "RougeSettings") -> None:
    """Refuse a setting outside FLAG_LIMITS, naming the flag and its range."""
    for field, flag, low, high, why in FLAG_LIMITS:
        value = getattr(settings, field)
        if value is None:
            continue
        text = str(value)
        if len(text.lstrip("+-").split(".")[0].split("e")[0].split("E")[0]) > _MAX_DIGITS + 5:
            if not (low is None and text.startswith("-")):
                raise RougeConfigError(f"{_describe(flag, low, high, why)}; got {text[:40]!r}...")
            continue
        number = float(value) if isinstance(value, str) else value
        if low is None and number < 0:
            continue
        if not ((0 if low is None else low) <= number <= high):
            raise RougeConfigError(f"{_describe(flag, low, high, why)}; got {text!r}")


def leading_flags(args: list[str]) -> int:
    """How many of `args`, from the first, are ROUGE-1.5.5 flags and their values as
    the script reads them (`-c 95 -2 -1 -U -am`); 0 when the first is not one.  For
    a command line that names the script's flags where one option holds them all.

    Example:
        >>> leading_flags(["-c", "95", "-2", "-1", "-m", "c.txt"])
        5
    """
    if not args or not args[0].startswith("-") or args[0].startswith("--"):
        return 0
    try:
        _, rest = getopt.getopt(args, _GETOPTS)
    except getopt.GetoptError:
        return 0
    return len(args) - len(rest)
