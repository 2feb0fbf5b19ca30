"""The signature: everything that changes a printed number, in one line.

Like sacreBLEU's, it travels with every score so that two numbers can be
compared only when their signatures agree.  `Signature.from_settings` builds it
from a `RougeSettings` (the preset's reading and metrics, the multi-reference
mode, alpha, the counting unit, the bootstrap) plus two facts of the run that
change the printed averages: the evaluation ids (`eval_ids`: "doc_id", or
"index" as pyrouge numbers its sorted files, which reorders the bootstrap) and
the number of references per document (`nrefs`: a number, or "var" when it
varies).  Those two are left out when not given, so that
`RougeSettings.signature()` stays what it always printed.

Long form (`format()`), then the short form with one abbreviation table
(`format(short=True)`):

    rouge155|n:2|L:yes|W:no|S:no|stem:porter155+wn2.0|stop:no|limit:none|sent:newline|mref:average|alpha:0.5|t:0|ci:95%@1000|eval_ids:doc_id|nrefs:4|v:0.1.0
    rouge155|n:2|L:yes|W:no|S:no|m:porter155+wn2.0|s:no|l:none|sp:newline|f:average|p:0.5|t:0|c:95%@1000|e:doc_id|#:4|v:0.1.0

The short keys are ROUGE-1.5.5's own flag letters where the field is a flag
(`-m` stem, `-s` stopwords, `-l` limit, `-f` multi-reference, `-p` alpha,
`-c` confidence), `e` for the evaluation ids and sacreBLEU's `#` for `nrefs`.

Example:
    >>> from rouge_core.settings import RougeSettings
    >>> a = Signature.from_settings(RougeSettings.from_flags("-n 2"), eval_ids="doc_id", nrefs=4, version="0.1.0")
    >>> b = Signature.parse(a.format(short=True).replace("#:4", "#:1"))
    >>> b.differences(a)
    {'nrefs': ('1', '4')}
"""

from __future__ import annotations

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
    "v": "v",
}
_LONG = {short: long for long, short in ABBREVIATIONS.items()}
# Fields added after signatures were published, with the value an older signature implies.
ADDED_LATER = {"sent": "newline"}
EVAL_ID_MODES = ("doc_id", "index")


def nrefs_of(reference_counts: Iterable[int]) -> int | str:
    """The signature's `nrefs` from each document's number of references:
    the number when all agree, "var" when they differ.

    Example:
        >>> nrefs_of([4, 4, 4]), nrefs_of([1, 4])
        (4, 'var')
    """
    counts = set(reference_counts)
    if not counts:
        raise RougeConfigError("nrefs of no documents: score at least one document first")
    return counts.pop() if len(counts) == 1 else "var"


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
        version: str | None = None,
    ) -> Signature:
        """The signature of `settings` (a `RougeSettings`), with the run's evaluation
        ids and number of references when given (`nrefs`: a number or "var"; see
        `nrefs_of`)."""
        if version is None:
            version = __version__
        if eval_ids is not None and eval_ids not in EVAL_ID_MODES:
            raise RougeConfigError(f"eval_ids must be one of {EVAL_ID_MODES}; got {eval_ids!r}")
        if nrefs is not None and nrefs != "var" and not (isinstance(nrefs, int) and nrefs >= 1):
            raise RougeConfigError(f"nrefs must be a whole number >= 1 or 'var'; got {nrefs!r}")
        fields = get_preset(settings.preset).signature_fields(settings, _common_fields(settings))
        fields += [(key, str(value)) for key, value in (("eval_ids", eval_ids), ("nrefs", nrefs)) if value is not None]
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
        field only one side has pairs with None.  Empty when the two agree.

        Example:
            >>> Signature.parse("rouge155|n:2|v:1").differences(Signature.parse("rouge_score|n:2|nrefs:1|v:1"))
            {'preset': ('rouge155', 'rouge_score'), 'nrefs': (None, '1')}
        """
        mine, theirs = self.as_dict(), other.as_dict()
        out: dict[str, tuple[str | None, str | None]] = {}
        if self.preset != other.preset:
            out["preset"] = (self.preset, other.preset)
        for key in [*mine, *(k for k in theirs if k not in mine)]:
            # A field added to signatures later stands for its default in an older one.
            if mine.get(key, ADDED_LATER.get(key)) != theirs.get(key, ADDED_LATER.get(key)):
                out[key] = (mine.get(key), theirs.get(key))
        return out


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
