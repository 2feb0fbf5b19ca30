"""What a person sees while a long command works: one line per stage (reading,
scoring, aggregating, bootstrap, report ...) with what is done of a known total,
the rate and the time left.

On a terminal tqdm draws each stage as a bar that stays on screen when the stage
ends.  Anywhere else (a file, a pipe, a scheduler's log) the same stage becomes a
log line every `interval` seconds and one line when it ends, so a log shows the
run's progress too.  `quiet` shows nothing.  Everything goes to stderr; stdout
keeps only the results.

    progress = Progress(quiet=args.quiet)
    with progress.stage("scoring", total=len(groups), unit="summaries") as stage:
        for group in groups:
            ...
            stage.update(1)

`Stage.set(done, total)` takes absolute numbers instead, for a view that polls
counters (the run's workers write theirs with `write_counts`; the driver reads
them back with `read_counts`: see pipeline/beam/progress.py and
pipeline/run_progress.py).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Optional

# Seconds between two log lines of a stage when stderr is not a terminal.
INTERVAL = 10.0
# A stage shorter than this shows nothing: nobody waited for it (unless its
# view asks for every stage's last line: Stage.always_end, as a run's log does).
SHOW_AFTER = 2.0


def duration(seconds: float) -> str:
    """A short human duration: 'under a second', '8 s', '2 min 05 s', '1 h 03 min'."""
    if seconds < 0.5:
        return "under a second"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def count(n: float) -> str:
    return f"{int(n):,}"


def per_second(rate: float) -> str:
    return f"{rate:,.0f}/s" if rate >= 10 else f"{rate:.1f}/s"


class Progress:
    """The stages of one command.  `terminal`: draw bars (default: whether `stream`
    is a terminal); `interval`: seconds between log lines otherwise."""

    def __init__(self, quiet: bool = False, stream=None, interval: Optional[float] = None,
                 terminal: Optional[bool] = None):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.terminal = _isatty(self.stream) if terminal is None else terminal
        self.interval = INTERVAL if interval is None else interval

    def stage(self, name: str, total: Optional[int] = None, unit: str = "items",
              position: Optional[int] = None, always_end: bool = False) -> "Stage":
        """A stage; `position`: its line among stages shown at the same time (bars only);
        `always_end`: its last line is logged however short it was (a run's log sums up
        every stage, so what it prints never depends on how fast the machine is)."""
        if self.quiet:
            stage = Stage(name, total, unit)
        elif self.terminal:
            stage = BarStage(name, total, unit, self.stream, position)
        else:
            stage = LogStage(name, total, unit, self.stream, self.interval)
        stage.always_end = always_end
        return stage


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Stage:
    """A stage that shows nothing (--quiet); the others draw or log."""

    def __init__(self, name: str, total: Optional[int], unit: str):
        self.name, self.total, self.unit = name, total, unit
        self.done = 0
        self.started = time.monotonic()
        self.closed = False
        self.always_end = False  # end with a line however short (a run's summary of its stages)

    def __enter__(self) -> "Stage":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.close(finished=kind is None)

    def update(self, n: int = 1) -> None:
        self.done += n
        self._show()

    def set(self, done: int, total: Optional[int] = None) -> None:
        """Absolute numbers (from counters read elsewhere); a total may become known
        late.  The stage ends when it reaches its total."""
        if self.closed:
            return
        end = total or self.total
        self._set(done, total)
        if end and done >= end:
            self.close()

    def _set(self, done: int, total: Optional[int]) -> None:
        if total is not None:
            self.total = total
        self.done = done
        self._show()

    def close(self, finished: bool = True) -> None:
        if not self.closed:
            self.closed = True
            self._end(finished)

    def _show(self) -> None:
        pass

    def _end(self, finished: bool) -> None:
        pass

    def rate(self) -> float:
        return self.done / max(time.monotonic() - self.started, 1e-9)

    def line(self) -> str:
        """'1,234 of 5,000 summaries (25%), 410/s, about 9 s left'."""
        elapsed = time.monotonic() - self.started
        rate = self.rate()
        if self.total == 1 and self.done == 0:  # one step: only the time it has taken
            return f"working ({duration(elapsed)} so far)"
        if self.total:
            text = f"{count(self.done)} of {count(self.total)} {self.unit} ({100 * min(self.done, self.total) / self.total:.0f}%)"
        else:
            text = f"{count(self.done)} {self.unit}"
        text += f", {per_second(rate)}" if self.done else ", working"  # nothing done yet: no rate to tell
        if self.total and self.total / 100 <= self.done < self.total and rate > 0:  # under 1%: too early to tell
            left = duration((self.total - self.done) / rate)
            text += f", {left} left" if left == "under a second" else f", about {left} left"
        return text + f" ({duration(elapsed)} so far)"


class LogStage(Stage):
    """Log lines: every `interval` seconds while it runs, and one when it ends."""

    def __init__(self, name, total, unit, stream, interval: float):
        super().__init__(name, total, unit)
        self.stream, self.interval = stream, interval
        self.last = self.started

    def _print(self, text: str) -> None:
        print(f"rouge-pipeline: {self.name}: {text}", file=self.stream, flush=True)

    def _show(self) -> None:
        if self.total and self.done >= self.total:
            return  # the stage's last line says it
        now = time.monotonic()
        if now - self.last >= self.interval and now - self.started >= min(SHOW_AFTER, self.interval):
            self.last = now
            self.shown = True
            self._print(self.line())

    def _end(self, finished: bool) -> None:
        elapsed = time.monotonic() - self.started
        if elapsed < min(SHOW_AFTER, self.interval) and not getattr(self, "shown", False) and not self.always_end:
            return
        if not finished:
            self._print(f"stopped after {count(self.done)} {self.unit} ({duration(elapsed)})")
            return
        if self.total == 1 and self.done == 1:  # one step: only the time it took
            self._print(f"done in {elapsed:.1f} s")
            return
        of = f" of {count(self.total)}" if self.total and self.total != self.done else ""
        seen = elapsed >= 0.1 or getattr(self, "shown", False)
        rate = f" ({per_second(self.rate())})" if seen else ""  # seen only at its end: no rate to tell
        self._print(f"{count(self.done)}{of} {self.unit} in {elapsed:.1f} s{rate}")


class BarStage(Stage):
    """A tqdm bar that stays on the terminal when the stage ends; drawn from the first
    update after SHOW_AFTER seconds (a quicker stage draws nothing)."""

    def __init__(self, name, total, unit, stream, position: Optional[int] = None):
        super().__init__(name, total, unit)
        self.stream, self.position = stream, position
        self.bar = None

    def update(self, n: int = 1) -> None:
        self._set(self.done + n, None)

    def _set(self, done: int, total: Optional[int]) -> None:
        if total is not None:
            self.total = total
        if self.bar is None and time.monotonic() - self.started >= SHOW_AFTER:
            from tqdm import tqdm  # noqa: PLC0415 (only on a terminal)

            # Made empty with its clock at the stage's start, then drawn at `done`: its
            # rate and time left count what was done since the stage started (made at
            # `initial=done`, tqdm counted only the steps after: "1.99/s, 2:38:52 left").
            self.bar = tqdm(total=self.total, desc=self.name, unit=f" {self.unit}", file=self.stream, leave=True,
                            dynamic_ncols=True, mininterval=0.25, smoothing=0.1, position=self.position,
                            delay=1e-9)  # nothing drawn until the update below
            self.bar.start_t = self.bar.last_print_t = self.bar._time() - (time.monotonic() - self.started)
            if not done:
                self.bar.refresh()  # nothing done yet: the bar shows how long it has worked
        if self.bar is not None:
            if self.bar.total != self.total:
                self.bar.total = self.total
                self.bar.refresh()
            if done != self.bar.n:
                self.bar.update(done - self.bar.n)
        self.done = done

    def _end(self, finished: bool) -> None:
        if self.bar is None:
            return
        if finished and self.total is not None and self.done < self.total:
            self.bar.total = self.done  # what was counted in advance was an estimate
        self.bar.close()


# ----------------------------------------------------------------- counters in files

# Workers write their counters to one small JSON file each, replaced atomically;
# the driver sums the latest of every file.  A file is written at most every few
# seconds, never per element.


def write_counts(folder: str, name: str, counts: dict) -> None:
    """Replace `folder/name.json` with `counts` ({stage: {what: n}, "systems": [...]})."""
    path = os.path.join(folder, f"{name}.json")
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as fh:
            json.dump(counts, fh)
        os.replace(temporary, path)
    except OSError:  # progress is never worth failing a run for
        pass


def read_counts(folder: str) -> dict:
    """The sum over every worker's file: {stage: {what: n}}, and "systems": the set
    of systems the workers saw."""
    total: dict = {"systems": set()}
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json")]
    except OSError:
        return total
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                counts = json.load(fh)
        except (OSError, ValueError):
            continue  # being replaced: the next poll reads it
        for stage, values in counts.items():
            if stage == "systems":
                total["systems"].update(values)
                continue
            into = total.setdefault(stage, {})
            for what, n in values.items():
                into[what] = into.get(what, 0) + n
    return total
