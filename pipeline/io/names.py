"""Names (systems, metrics, columns, files) as people see them.

Two strings that print alike must not be two things: `seen_as` is a name after
Unicode NFKC normalization, with invisible characters removed (format characters
such as U+200B ZERO WIDTH SPACE, variation selectors, Hangul fillers) and spaces
collapsed; `clashes` finds the names that differ only there.  `shown` writes any
name safely for a terminal, Markdown, HTML or CSV: control characters become
visible escapes (`\\n`, `\\x1b`), so a name cannot move the cursor, forge a line
or a table row.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from typing import Iterable

# Default-ignorable code points that are not of category Cf (which is removed whole).
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SPACES = re.compile(r"\s+")


def seen_as(name: str) -> str:
    """What a person reads: NFKC, without invisible or control characters, spaces collapsed."""
    if name.isascii() and name.isprintable() and "  " not in name and name.strip() == name:
        return name  # (the common case, and every row's doc_id in `run`: as read)
    text = unicodedata.normalize("NFKC", name)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc"))
    text = _INVISIBLE.sub("", text)
    return _SPACES.sub(" ", text).strip()


def clashes(names: Iterable[str]) -> list[list[str]]:
    """Groups (sorted) of two or more distinct names that a person reads as one."""
    groups: dict[str, set[str]] = defaultdict(set)
    for name in names:
        groups[seen_as(name)].add(name)
    return sorted(sorted(group) for group in groups.values() if len(group) > 1)


def spelled(name: str) -> str:
    """A name with every character that is not plainly visible written as an escape
    (ascii() of it), so two spellings that print alike can be told apart."""
    return ascii(name)


def describe_clashes(what: str, groups: list[list[str]], limit: int = 5) -> str:
    """`what` names that print alike, each group with its spellings."""
    shown = "; ".join(" and ".join(spelled(n) for n in group) for group in groups[:limit])
    more = f" and {len(groups) - limit} more" if len(groups) > limit else ""
    return f"{what} that print alike but differ (invisible characters or Unicode forms): {shown}{more}"


def shown(text: str) -> str:
    """`text` with control characters and lone surrogates escaped (`\\n`, `\\x1b`)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def control_character(text: str):
    """The first control character of `text` as an escape, or None."""
    found = _CONTROL.search(text)
    return None if found is None else repr(found.group())[1:-1]


MAX_ID_CHARS = 1000


def id_problem(name: str):
    """Why `name` cannot name anything (a system, a document, a column, a setting's
    name), in a few words, or None: the id rule of every name a user or a file
    gives.  A name is not empty, at most MAX_ID_CHARS characters, holds no control
    character or lone surrogate (ESC would reach a terminal, a newline would forge
    a line of a report), and is not made only of invisible characters or spaces
    (U+200B U+200C U+2060 print as nothing: a name no one can read or type).

    Example:
        >>> id_problem("lead-3") is None, id_problem("")
        (True, 'is empty')
        >>> print(id_problem("a\x1b[2J"))
        holds a control character (\\x1b), which could forge output lines
        >>> print(id_problem("\u200b\u2060"))
        is made only of invisible characters or spaces (\\u200b\\u2060), which print as nothing
    """
    if not name:
        return "is empty"
    if len(name) > MAX_ID_CHARS:
        return f"is {len(name)} characters, over the limit of {MAX_ID_CHARS}"
    found = _CONTROL.search(name)
    if found:
        what = "a lone surrogate" if "\ud800" <= found.group() <= "\udfff" else "a control character"
        return f"holds {what} ({repr(found.group())[1:-1]}), which could forge output lines"
    if not seen_as(name):
        return f"is made only of invisible characters or spaces ({ascii(name)[1:-1][:60]}), which print as nothing"
    return None
