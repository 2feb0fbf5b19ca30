"""Guarded use of a third-party library's internals (Beam's private classes and
methods), for the fixes of pipeline.beam.runners.

A fix that replaces a private method keeps working only while the library keeps
that method: on another version a renamed attribute would turn the fix into a
silent no-op (for the FnApiRunner's row loss, the count check would be all that is
left between a user and lost rows).  So every use of internals is declared here,
as an `Internals`: which Beam versions it was tested on, every attribute it reads
(`uses`; for a function's code object, a name the function must still read) and
every attribute it replaces (`replaces`), and `applied()` is a context manager
that, for one run:

* refuses (RougeConfigError) when an attribute is missing, naming it;
* warns, once per process, when Beam is not a version the fix was tested on (the
  attributes exist, so it is applied, but nobody here has seen it work);
* replaces the attributes, and restores the originals when the run ends, however
  it ends.  Runs in threads of one process share one application (counted).
"""

from __future__ import annotations

import logging
import threading
import types
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

from rouge_core import RougeConfigError

log = logging.getLogger("rouge-pipeline")

TESTED_BEAM = ("2.77.0",)


def beam_version() -> str:
    from apache_beam import version

    return version.__version__


@dataclass
class Internals:
    """One fix's use of Beam internals: `name` (the defect it fixes, as the code names
    it), `uses` a function giving the (owner, attribute) pairs it reads, `replaces`
    one giving (owner, attribute, replacement) triples (functions: the owners are
    imported only when the fix is used)."""

    name: str
    uses: Callable[[], list] = list
    replaces: Callable[[], list] = list
    tested: tuple = TESTED_BEAM
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _depth: int = 0
    _saved: list = field(default_factory=list, repr=False)
    _warned: bool = False

    def check(self) -> None:
        """Refuse a missing attribute; warn about an untested Beam version."""
        version = beam_version()
        wanted = [(owner, attr) for owner, attr in self.uses()] + [(o, a) for o, a, _ in self.replaces()]
        missing = [f"{_name(owner)}.{attr}" for owner, attr in wanted if not _has(owner, attr)]
        if missing:
            raise RougeConfigError(
                f"apache-beam {version} has no {', '.join(missing)}, which rouge-pipeline's fix {self.name} "
                f"needs (tested on apache-beam {', '.join(self.tested)}): install apache-beam=={self.tested[-1]}, "
                "or choose another runner"
            )
        if version not in self.tested and not self._warned:
            self._warned = True
            log.warning(
                "apache-beam %s is not a version rouge-pipeline's fix %s was tested on (%s); it is applied, "
                "since every attribute it replaces exists, but the run's count check is what proves it",
                version, self.name, ", ".join(self.tested),
            )

    @contextmanager
    def applied(self):
        """The fix in place for the body; the originals back after it."""
        with self._lock:
            if self._depth == 0:
                self.check()
                self._saved = [(owner, attr, owner.__dict__.get(attr, _INHERITED)) if isinstance(owner, type)
                               else (owner, attr, getattr(owner, attr)) for owner, attr, _ in self.replaces()]
                for owner, attr, replacement in self.replaces():
                    setattr(owner, attr, replacement)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    for owner, attr, original in reversed(self._saved):
                        if original is _INHERITED:
                            delattr(owner, attr)
                        else:
                            setattr(owner, attr, original)
                    self._saved = []


_INHERITED = object()  # a class attribute that came from a base class: restored by deleting ours


def _has(owner, attr: str) -> bool:
    """`owner.attr` exists; for a function's code object: the function reads `attr`."""
    return attr in owner.co_names if isinstance(owner, types.CodeType) else hasattr(owner, attr)


def _name(owner) -> str:
    if isinstance(owner, types.CodeType):
        return f"{owner.co_qualname}()"
    return getattr(owner, "__qualname__", None) or getattr(owner, "__name__", None) or type(owner).__qualname__
