"""The signature: everything that changes a printed number, in one line.

Like sacreBLEU's, it travels with every score so that two numbers can be
compared only when their signatures agree.  `Signature.from_settings` builds it
from a `RougeSettings` (the preset and its reading and metrics, the sentence
rule, the multi-reference mode, alpha, the counting unit, the bootstrap of the
printed averages) plus what a run adds that changes numbers too:

* `eval_ids`: the evaluation ids, "doc_id" (the default) or "index" (1..N in
  sorted doc_id order, as pyrouge numbers its files), which reorders the
  bootstrap of ROUGE-1.5.5's printed averages;
* `nrefs`: references per document, a number or the range "1-4" (`nrefs_of`);
* `bootstrap`: the order-free Poisson bootstrap and jackknife behind the means'
  intervals and standard errors (replicates, seed, jackknife groups).

A field at its default is left out (`DEFAULTS`: one reference, doc_id, the
default bootstrap), so that a signature made before these fields existed reads
the same, and `differences` takes an absent field as its default.

Long form (`format()`), then the short form with one abbreviation table
(`format(short=True)`):

    rouge155|n:2|L:yes|W:no|S:no|stem:porter155+wn2.0|stop:no|limit:none|sent:newline|mref:average|alpha:0.5|t:0|ci:95%@1000|eval_ids:index|nrefs:4|v:0.1.0
    rouge155|n:2|L:yes|W:no|S:no|m:porter155+wn2.0|s:no|l:none|sp:newline|f:average|p:0.5|t:0|c:95%@1000|e:index|#:4|v:0.1.0

The short keys are ROUGE-1.5.5's own flag letters where the field is a flag
(`-m` stem, `-s` stopwords, `-l` limit, `-f` multi-reference, `-p` alpha,
`-c` confidence), `e` for the evaluation ids, sacreBLEU's `#` for `nrefs` and
`bs` for the bootstrap.

Example:
    >>> from rouge_core.settings import RougeSettings
    >>> a = Signature.from_settings(RougeSettings.from_flags("-n 2"), eval_ids="index", nrefs=4, version="0.1.0")
    >>> b = Signature.parse(a.format(short=True).replace("#:4", "#:1-4"))
    >>> b.differences(a)
    {'nrefs': ('1-4', '4')}
    >>> Signature.parse(str(a).replace("|eval_ids:index|nrefs:4", "")).differences(a)
    {'eval_ids': ('doc_id', 'index'), 'nrefs': ('1', '4')}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rouge_core import sentence_split
from rouge_core.errors import RougeConfigError
from rouge_core.presets import get_preset
from rouge_core.version import __version__

# Long key -> short key, for every field any preset writes.
ABBREVIATIONS = {
    "n": "n",
    "L": "L",
    "W": "W",
    "S": "S",
    "types": "r",  # rouge_score's rouge_types
    "lang": "lg",
    "norm": "nm",
    "tok": "k",
    "stem": "m",
    "stop": "s",
    "lsum": "ls",
    "limit": "l",
    "sent": "sp",  # sentence_split
    "mref": "f",
    "alpha": "p",
    "t": "t",
    "ci": "c",
    "eval_ids": "e",
    "nrefs": "#",
    "bootstrap": "bs",
    "v": "v",
}
_LONG = {short: long for long, short in ABBREVIATIONS.items()}
EVAL_ID_MODES = ("doc_id", "index")
# The pipeline's Poisson bootstrap (replicates, seed) and jackknife groups by default.
DEFAULT_RESAMPLING = (1000, 0, 20)
# Fields written only when they differ from their default (and `sent`, which signatures
# made before it existed lack): an absent field means this value.
DEFAULTS = {"sent": "newline", "eval_ids": "doc_id", "nrefs": "1", "bootstrap": "1000@0+jk20"}
# The fields a run adds to its settings' (not a RougeSettings field).
RUN_FIELDS = ("eval_ids", "nrefs", "bootstrap")
_NREFS = re.compile(r"[1-9]\d*(-[1-9]\d*)?")


def nrefs_of(reference_counts: Iterable[int]) -> int | str:
    """The signature's `nrefs` from each document's number of references:
    the number when all agree, else the range "fewest-most".

    Example:
        >>> nrefs_of([4, 4, 4]), nrefs_of([1, 4, 2])
        (4, '1-4')
    """
    counts = set(reference_counts)
    if not counts:
        raise RougeConfigError("nrefs of no documents: score at least one document first")
    return nrefs_range(min(counts), max(counts))


def nrefs_range(fewest: int, most: int) -> int | str:
    """`nrefs` from the fewest and the most references of a document: the number
    when they agree, else "fewest-most".

    Example:
        >>> nrefs_range(1, 1), nrefs_range(2, 4)
        (1, '2-4')
    """
    return fewest if fewest == most else f"{fewest}-{most}"


@dataclass(frozen=True)
class Signature:
    """A preset's name and its ordered `key:value` fields (long keys)."""

    preset: str
    fields: tuple[tuple[str, str], ...]

    @classmethod
    def from_settings(
        cls,
        settings,
        *,
        eval_ids: str | None = None,
        nrefs: int | str | None = None,
        resampling: tuple[int, int, int] | None = None,
        version: str | None = None,
    ) -> Signature:
        """The signature of `settings` (a `RougeSettings`) with what a run adds: its
        evaluation ids ("doc_id" or "index"), its references per document (`nrefs`:
        a number or a range "1-4", see `nrefs_of`) and its `resampling` (Poisson
        bootstrap replicates, seed, jackknife groups).  Each is written only when
        given and not its default (`DEFAULTS`)."""
        if version is None:
            version = __version__
        if eval_ids is not None and eval_ids not in EVAL_ID_MODES:
            raise RougeConfigError(f"eval_ids must be one of {EVAL_ID_MODES}; got {eval_ids!r}")
        whole = isinstance(nrefs, int) and not isinstance(nrefs, bool) and nrefs >= 1
        if nrefs is not None and not (whole or _valid_range(nrefs)):
            raise RougeConfigError(f"nrefs must be a whole number >= 1 or a range like '1-4'; got {nrefs!r}")
        if resampling is not None and not (
            len(resampling) == 3 and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in resampling)
        ):
            raise RougeConfigError(f"resampling must be (replicates, seed, jackknife groups); got {resampling!r}")
        fields = get_preset(settings.preset).signature_fields(settings, _common_fields(settings))
        run = {
            "eval_ids": eval_ids,
            "nrefs": None if nrefs is None else str(nrefs),
            "bootstrap": None if resampling is None else "{}@{}+jk{}".format(*resampling),
        }
        fields += [(key, value) for key, value in run.items() if value is not None and value != DEFAULTS[key]]
        return cls(settings.preset, tuple(fields) + (("v", version),))

    def format(self, short: bool = False) -> str:
        """The one-line form: `preset|key:value|...`, keys abbreviated when `short`."""
        parts = [f"{ABBREVIATIONS.get(key, key) if short else key}:{value}" for key, value in self.fields]
        return "|".join([self.preset, *parts])

    def __str__(self) -> str:
        return self.format()

    @classmethod
    def parse(cls, text: str, strict: bool = True) -> Signature:
        """Read a signature in its long or short form (or a mix).  `strict=False`
        keeps a field this version does not know (one a later version added, read
        back from its run) under its own key, instead of refusing it.

        Example:
            >>> Signature.parse("rouge155|n:2|f:average|v:0.1.0").as_dict()
            {'n': '2', 'mref': 'average', 'v': '0.1.0'}
            >>> Signature.parse("rouge155|n:2|colour:red", strict=False).as_dict()
            {'n': '2', 'colour': 'red'}

        Raises:
            RougeConfigError: not a signature, with the part that is wrong.
        """
        if not isinstance(text, str) or not text.strip():
            raise RougeConfigError(f"a signature is a line `preset|key:value|...`; got {text!r}")
        preset, *parts = text.strip().split("|")
        if ":" in preset:
            raise RougeConfigError(f"a signature starts with the preset's name; got {preset!r} in {text!r}")
        fields = []
        for part in parts:
            key, colon, value = part.partition(":")  # values may hold ':' (a custom tokenizer's name)
            if not colon:
                raise RougeConfigError(f"signature field {part!r} is not key:value, in {text!r}")
            key = key if key in ABBREVIATIONS else _LONG.get(key, None if strict else key)
            if key is None:
                raise RougeConfigError(f"unknown signature field {part!r} in {text!r}")
            fields.append((key, value))
        return cls(preset, tuple(fields))

    def as_dict(self) -> dict[str, str]:
        """The fields by long key (the preset's name is `preset`)."""
        return dict(self.fields)

    def differences(self, other: Signature) -> dict[str, tuple[str | None, str | None]]:
        """The fields that differ, as {long key: (this value, other's value)}; a
        field one side leaves out stands for its default (`DEFAULTS`), or pairs with
        None when it has none.  Empty when the two agree.

        Example:
            >>> Signature.parse("rouge155|n:2|v:1").differences(Signature.parse("rouge_score|n:2|nrefs:4|v:1"))
            {'preset': ('rouge155', 'rouge_score'), 'nrefs': ('1', '4')}
        """
        mine, theirs = self.as_dict(), other.as_dict()
        out: dict[str, tuple[str | None, str | None]] = {}
        if self.preset != other.preset:
            out["preset"] = (self.preset, other.preset)
        for key in [*mine, *(k for k in theirs if k not in mine)]:
            # A field left out at its default (or added to signatures later) stands for its default.
            a, b = mine.get(key, DEFAULTS.get(key)), theirs.get(key, DEFAULTS.get(key))
            if a != b:
                out[key] = (a, b)
        return out


def _valid_range(nrefs) -> bool:
    """A string nrefs: "4" or "fewest-most" with fewest < most."""
    if not isinstance(nrefs, str) or not _NREFS.fullmatch(nrefs):
        return False
    fewest, _, most = nrefs.partition("-")
    return not most or int(fewest) < int(most)


def _common_fields(settings) -> dict[str, str]:
    """The fields every preset draws from (each preset picks and orders them)."""
    skip = "no"
    if settings.skip_distance is not None:
        gap = "*" if settings.gap_limit is None else settings.skip_distance
        skip = gap + ("+U" if settings.skip_unigrams else "+S+U" if settings.skip_both else "")
    limit = "none"
    if settings.word_limit is not None:
        limit = f"{settings.word_limit}w"
    elif settings.byte_limit is not None:
        limit = f"{settings.byte_limit}b"
    return {
        "n": str(settings.max_ngram),
        "L": "yes" if settings.rouge_l else "no",
        "W": settings.wlcs_weight or "no",
        "S": skip,
        "limit": limit,
        "sent": sentence_split.describe(settings.sentence_split),
        "mref": settings.multi_reference,
        "alpha": settings.alpha,
        "t": str(settings.counting),
        "ci": f"{settings.confidence}%@{settings.resamples}",
    }
