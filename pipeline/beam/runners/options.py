"""Beam pipeline options: which runner a run uses, and refusing, before Beam starts,
an option that nobody knows (Beam would silently ignore it) or an unknown runner.

A runner's own options (`--dask_client_address`, `--flink_master`, ...) exist only
once the runner's module is imported: Beam registers an options class when its
module loads.  So the runner named by `--runner` is resolved to its module path
and imported first, and only then are the other options checked.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import math
from typing import Iterable, Optional, Sequence

from rouge_core import RougeConfigError

# The embedded default: Beam's FnApiRunner in this process (named directly,
# because the default DirectRunner first tries to download the Prism runner,
# which fails, slowly, without internet).  Its worker-process mode
# (`--direct_running_mode=multi_processing`) is opt-in: on this 2-core machine it
# was slower than one process.  In Beam 2.77 it also lost rows of one large input
# file (1,000,000 rows in one JSONL file: 12,023 to 256,355 missing in 5 of 7 runs),
# a race in the runner's data plane that pipeline.beam.runners.fn_runner_fixes now closes
# (docs/many_systems.md).  A run that loses rows is still refused by the count
# check (`rows read = scored + errors`), on every runner.
IN_PROCESS = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]

# Runners Beam ships but does not list in StandardOptions.ALL_KNOWN_RUNNERS (so
# Beam itself would not find them by their short name).  DaskRunner runs with the
# fixes of pipeline.beam.runners.dask_runner (Beam 2.77's own mixes tagged outputs and
# computes only the last sink).
EXTRA_RUNNERS = {"daskrunner": "pipeline.beam.runners.dask_runner.DaskRunner"}
# What to install when a runner's module cannot be imported.
EXTRAS = {"dask": "apache-beam[dask]", "dataflow": "apache-beam[gcp]", "interactive": "apache-beam[interactive]"}


def known_runners() -> dict[str, str]:
    """{lower-case short name: module path} of every runner Beam ships."""
    from apache_beam.options.pipeline_options import StandardOptions

    runners = {path.rsplit(".", 1)[-1].lower(): path for path in StandardOptions.ALL_KNOWN_RUNNERS}
    return {**runners, **EXTRA_RUNNERS}


def runner_path(name: str) -> str:
    """The module path of the runner `--runner` names (`DaskRunner`, `dask`,
    `FlinkRunner`, a module path ...); an unknown short name is an error naming
    the closest known one."""
    if "." in name:  # a runner class given by its module path
        return name
    runners = known_runners()
    key = name.lower()
    if key in runners or key + "runner" in runners:
        return runners.get(key) or runners[key + "runner"]
    names = sorted(path.rsplit(".", 1)[-1] for path in runners.values())
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise RougeConfigError(f"unknown runner {name!r}{hint} (known: {', '.join(names)})")


def import_runner(path: str) -> None:
    """Import the runner's module, which registers its options class."""
    module = path.rsplit(".", 1)[0]
    try:
        importlib.import_module(module)
    except ImportError as err:
        extra = next((e for key, e in EXTRAS.items() if key in module), None)
        install = f"; install {extra}" if extra else ""
        raise RougeConfigError(f"runner {path} cannot be loaded ({err}){install}") from err


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # (argparse would print and exit)
        raise RougeConfigError(f"Beam option: {message}")


def _beam_parser() -> argparse.ArgumentParser:
    """A parser of every Beam PipelineOptions class registered so far (a runner's
    options appear once its module is imported)."""
    from apache_beam.options import pipeline_options

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    parser = _Parser(allow_abbrev=False, add_help=False, exit_on_error=False)
    for cls in sorted(set(subclasses(pipeline_options.PipelineOptions)), key=lambda c: c.__qualname__):
        try:
            cls._add_argparse_args(parser)
        except argparse.ArgumentError:  # two classes declaring one flag
            pass
    return parser


def beam_option_names() -> frozenset[str]:
    """Every `--flag` of every Beam PipelineOptions class registered so far."""
    return frozenset(o for action in _beam_parser()._actions for o in action.option_strings)


# Bounds of Beam's numeric options where "not negative" is not enough: local worker
# processes (each a Python process of 100-200 MB; 0 means one per CPU) and ports.
OPTION_RANGES = {"direct_num_workers": (0, 256), "job_port": (0, 65_535), "artifact_port": (0, 65_535),
                 "expansion_port": (0, 65_535), "profile_sample_rate": (0, 1)}


def check_beam_values(args: Sequence[str]) -> None:
    """Each Beam option's value of the right type and in its range, refused here with
    a sentence (`--direct_num_workers=-1` ended in an IndexError inside Beam): an
    integer or a number not below 0 (or below the option's own negative default,
    "unset"), nor past OPTION_RANGES; a float finite; a choice among its choices."""
    parser = _beam_parser()
    try:
        given, _ = parser.parse_known_args(list(args))
    except argparse.ArgumentError as err:
        raise RougeConfigError(f"Beam option {err.argument_name}: {err.message}") from None
    named = {arg.split("=", 1)[0] for arg in args if arg.startswith("--")}
    for action in parser._actions:  # noqa: SLF001 (argparse keeps its actions there)
        if not named & set(action.option_strings) or action.type not in (int, float):
            continue
        value = getattr(given, action.dest, None)
        if value is None:
            continue
        default = action.default if isinstance(action.default, (int, float)) else 0
        low, high = OPTION_RANGES.get(action.dest, (min(0, default), math.inf))
        if not (math.isfinite(value) and low <= value <= high):
            bound = f"from {low} to {high}" if math.isfinite(high) else f"{low} or more"
            raise RougeConfigError(f"Beam option {action.option_strings[0]} must be {bound}; got {value}")


def runner_arg(args: Sequence[str]) -> Optional[tuple[int, str]]:
    """(index, runner name) of the last `--runner` in `args`, or None."""
    found = None
    for i, arg in enumerate(args):
        if arg == "--runner":
            found = (i, args[i + 1] if i + 1 < len(args) else "")
        elif arg.startswith("--runner="):
            found = (i, arg.split("=", 1)[1])
    return found


def check_beam_args(args: Sequence[str], ours: Iterable[str]) -> None:
    """Refuse an unknown runner, and an option that is neither ours nor Beam's nor
    the chosen runner's."""
    runner = runner_arg(args)
    if runner is not None:
        import_runner(runner_path(runner[1]))
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
            continue
        close = difflib.get_close_matches(name, sorted(ours | known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]}?" if close else " (not an option of rouge-pipeline nor of Beam)"
        raise RougeConfigError(f"unknown option {name}{hint}")
    check_beam_values(args)


def choose_runner(args: Sequence[str], input_bytes: int) -> tuple[list[str], str]:
    """The Beam arguments to run with, and a line saying which runner and why.  A
    runner Beam does not find by its short name is passed by its module path."""
    args = list(args)
    runner = runner_arg(args)
    if runner is not None:
        i, name = runner
        path = runner_path(name)
        if path in EXTRA_RUNNERS.values():
            import_runner(path)
            args[i : i + (1 if args[i].startswith("--runner=") else 2)] = [f"--runner={path}"]
        return args, "runner: as given"
    return IN_PROCESS + args, (
        f"runner: in this process (the input, {input_bytes / (1 << 20):.1f} MiB; "
        "--runner chooses another: run --help)"
    )
