"""Beam pipeline options: which runner a run uses, and refusing, before Beam starts,
an option that nobody knows (Beam would silently ignore it) or an unknown runner."""

from __future__ import annotations

import argparse
import difflib
from functools import lru_cache
from typing import Iterable, Sequence

from apache_beam.options import pipeline_options
from apache_beam.options.pipeline_options import StandardOptions

from rouge_core import RougeConfigError

# The embedded default: every local core, in separate worker processes.  The
# FnApiRunner is named directly, because the default DirectRunner first tries
# to download the Prism runner, which fails (slowly) without internet.
LOCAL_DEFAULTS = ["--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=0"]
# Below this many input bytes, starting worker processes costs more than it saves:
# the run stays in this process.
SMALL_INPUT_BYTES = 8 << 20
IN_PROCESS = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]


@lru_cache(maxsize=1)
def beam_option_names() -> frozenset[str]:
    """Every `--flag` of every registered Beam PipelineOptions class."""
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    for cls in set(subclasses(pipeline_options.PipelineOptions)):
        try:
            cls._add_argparse_args(parser)
        except argparse.ArgumentError:  # two classes declaring one flag
            pass
    return frozenset(o for action in parser._actions for o in action.option_strings)


def check_beam_args(args: Sequence[str], ours: Iterable[str]) -> None:
    """Refuse an option that is neither ours nor Beam's, and an unknown runner."""
    known = beam_option_names()
    ours = set(ours)
    for i, arg in enumerate(args):
        if not arg.startswith("--"):
            previous = args[i - 1] if i else ""
            if not (previous.startswith("--") and "=" not in previous):
                # e.g. a file the shell expanded after another option: never silently dropped
                raise RougeConfigError(
                    f"unexpected argument {arg!r}: every input goes after --input (or --references), "
                    "and every Beam option is --name=value or --name value"
                )
            continue
        name = arg.split("=", 1)[0]
        if name in known:
            if name == "--runner":
                runner = arg.split("=", 1)[1] if "=" in arg else (args[i + 1] if i + 1 < len(args) else "")
                _check_runner(runner, StandardOptions.KNOWN_RUNNER_NAMES)
            continue
        close = difflib.get_close_matches(name, sorted(ours | known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]}?" if close else " (not an option of rouge-pipeline nor of Beam)"
        raise RougeConfigError(f"unknown option {name}{hint}")


def _check_runner(runner: str, known_names: Sequence[str]) -> None:
    if "." in runner:  # a runner class given by its module path
        return
    names = {n.lower() for n in known_names}
    if runner.lower() in names or runner.lower() + "runner" in names or runner.lower() == "fnapirunner":
        return
    close = difflib.get_close_matches(runner, list(known_names) + ["FnApiRunner"], n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise RougeConfigError(f"unknown runner {runner!r}{hint} (known: {', '.join(sorted(known_names))})")


def choose_runner(args: Sequence[str], input_bytes: int) -> tuple[list[str], str]:
    """The Beam arguments to run with, and a line saying which runner and why."""
    args = list(args)
    if any(a == "--runner" or a.startswith("--runner=") for a in args):
        return args, "runner: as given"
    if input_bytes < SMALL_INPUT_BYTES:
        return IN_PROCESS + args, (
            f"runner: in this process (the input, {input_bytes / (1 << 20):.1f} MiB, is under "
            f"{SMALL_INPUT_BYTES >> 20} MiB; --runner overrides)"
        )
    return LOCAL_DEFAULTS + args, (
        f"runner: every local core, in worker processes (the input, {input_bytes / (1 << 20):.1f} MiB, is "
        f"{SMALL_INPUT_BYTES >> 20} MiB or more)"
    )
