"""Regular expressions that a user or a file supplies (`input.system_from_path`,
pyrouge's `--system-pattern` and `--model-pattern`, a result folder's recorded
config), run with a time bound.

Python's `re` backtracks: `(a|aa)+$` against forty `a`s and a `b` takes longer
than the universe is old, holding the interpreter the whole time (no signal, no
other thread gets in), so a run wedged at full CPU on its first row.  These
patterns run on the `regex` module (a dependency already: nltk's and the unicode
preset's), whose matching takes a timeout: a search that takes more than
MATCH_SECONDS is stopped and the pattern refused, naming it and the text.  The
texts are file names and paths, a few hundred characters: an honest pattern
matches one in microseconds.
"""

from __future__ import annotations

from rouge_core import RougeConfigError

MATCH_SECONDS = 1.0


def compile_pattern(pattern: str, what: str):
    """`pattern` compiled, or a RougeConfigError naming `what` (the setting) and the error."""
    import regex  # noqa: PLC0415 (only when a pattern is given: `score` starts without it)

    try:
        return regex.compile(pattern)
    except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as err:
        raise RougeConfigError(f"{what} {pattern!r} is not a valid regex ({err})") from None


def bounded(method, compiled, text: str, what: str):
    """`compiled.method(text)` (search, match, fullmatch) stopped after MATCH_SECONDS: a
    RougeConfigError then says that the pattern backtracks, and how to fix it."""
    try:
        return getattr(compiled, method)(text, timeout=MATCH_SECONDS)
    except TimeoutError:
        raise RougeConfigError(
            f"{what} {compiled.pattern!r} took more than {MATCH_SECONDS:g} s on {text[:200]!r} and was stopped: it "
            "backtracks catastrophically (a repetition of a repetition, such as (a+)+ or (a|aa)*); write it "
            "without nested repetition"
        ) from None


class SystemFromPath:
    """`input.system_from_path`: a file path -> the text of its `system` group (None
    when the pattern does not match), worked out once per path and bounded in time."""

    def __init__(self, pattern: str, what: str = "input.system_from_path"):
        self.pattern, self.what = pattern, what
        self.compiled = compile_pattern(pattern, what)
        if "system" not in self.compiled.groupindex:
            raise RougeConfigError(f"{what} {pattern!r} must have a (?P<system>...) group")
        self.known: dict = {}

    def system(self, path: str):
        """The system named by `path` (None: no match, or an empty group); a
        RougeConfigError when the pattern takes too long on it."""
        if path not in self.known:
            match = bounded("search", self.compiled, path, self.what)
            self.known[path] = match.group("system") if match else None
        return self.known[path]

    def check(self, paths) -> None:
        """Every path tried once, before any work: a pattern that backtracks on one of
        them is refused here (exit 2), not in a worker."""
        for path in paths:
            self.system(path)

    def __getstate__(self):  # (sent to Beam workers: the compiled pattern is made again there)
        return {"pattern": self.pattern, "what": self.what}

    def __setstate__(self, state):
        self.__init__(state["pattern"], state["what"])


def system_from_path(pattern: str):
    """A SystemFromPath for a non-empty `input.system_from_path`, else None."""
    return SystemFromPath(pattern) if pattern else None
