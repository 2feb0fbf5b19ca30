"""The `rouge-pipeline` command; each subcommand lives in a module of its own,
imported only when that command runs (so `--help` and `score` never load Beam).

rouge-pipeline score ...      pipeline/cli/score.py: score on this machine, no Beam
rouge-pipeline run ...        pipeline/cli/run.py: the Beam pipeline
rouge-pipeline compare ...    pipeline/cli/compare.py: two result folders, an exit status
rouge-pipeline history ...    pipeline/cli/history.py: a benchmark across result folders
rouge-pipeline meta-eval ...  pipeline/cli/meta_eval.py: correlation with human judgments
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import os
import re
import signal
import sys
import threading
import traceback
from typing import Optional, Sequence

from pipeline.collector import fewer_collections
from pipeline.io.names import shown
from rouge_core import RougeConfigError, RougeInputError, __version__


# command -> (its module, the one line `rouge-pipeline --help` shows)
COMMANDS = {
    "score": ("pipeline.cli.score", "score files on this machine (no Beam) and print a table or the ROUGE-1.5.5 report"),
    "run": ("pipeline.cli.run", "run the Beam pipeline over sharded inputs and write a result folder"),
    "compare": ("pipeline.cli.compare", "compare two result folders: deltas, significance, an exit status for schedulers"),
    "meta-eval": ("pipeline.cli.meta_eval", "correlate metric scores with human judgments (system and summary level)"),
    "history": ("pipeline.cli.history", "a benchmark across result folders: one table, a chart per metric, each system's last significant change"),
}


def _command_of(argv: Sequence[str]) -> Optional[str]:
    """The subcommand named on the command line (the first word that is one)."""
    return next((arg for arg in argv if arg in COMMANDS), None)


def build_parser(command: Optional[str] = None) -> tuple[argparse.ArgumentParser, Optional[argparse.ArgumentParser]]:
    """The top-level parser, with `command`'s own parser fully registered (its
    module imported) and the others as one-line entries; returns both parsers."""
    parser = argparse.ArgumentParser(
        prog="rouge-pipeline",
        description="ROUGE-1.5.5 scores, exactly, at any scale.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = None
    for name, (module, summary) in COMMANDS.items():
        if name == command:
            chosen = importlib.import_module(module).register(commands)
            chosen.allow_abbrev = False  # --out must not silently mean --output
        else:
            commands.add_parser(name, help=summary, add_help=False)
    return parser, chosen


class _QuietBeam(logging.Filter):
    """Beam logs a warning about optional GCP libraries at import and forwards its
    workers' routine warnings; the user needs neither (unless --verbose)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            record.name.startswith("apache_beam") or record.getMessage().startswith("apitools not found")
        )


def _configure_logging(verbose: bool) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("rouge-pipeline: %(message)s"))
    if not verbose:
        handler.addFilter(_QuietBeam())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


class Terminated(BaseException):
    """SIGTERM, handled like Ctrl-C: the run stops, its staging folder is removed."""


def _on_sigterm(signum, frame):
    raise Terminated()


def option_names(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string a parser knows (--input, -h, ...)."""
    return [o for action in parser._actions for o in action.option_strings]  # noqa: SLF001


def _unknown_options(sub: argparse.ArgumentParser, command: str, extra: list[str]) -> None:
    """Every subcommand but `run` takes no other options; suggest the closest one."""
    known = option_names(sub)
    for arg in extra:
        name = arg.split("=", 1)[0]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) if name.startswith("-") else []
        hint = f"; did you mean {close[0]}?" if close else ""
        raise RougeConfigError(f"unknown option or argument {arg!r} for {command}{hint}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    fewer_collections()  # (pipeline.collector: millions of rows, no reference cycles)
    _configure_logging("--verbose" in argv)
    parser, sub = build_parser(_command_of(argv))
    args, extra = parser.parse_known_args(argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if extra and args.command != "run":
            _unknown_options(sub, args.command, extra)
        return args.handler(args, extra)
    except (RougeConfigError, RougeInputError) as err:
        print(f"rouge-pipeline: error: {shown(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rouge-pipeline: interrupted; nothing was published", file=sys.stderr)
        return 130
    except Terminated:
        print("rouge-pipeline: terminated (SIGTERM); nothing was published", file=sys.stderr)
        return 143
    except Exception as err:  # disk full, a worker's failure: one line, never a traceback
        if getattr(args, "verbose", False):
            traceback.print_exc()
        print(f"rouge-pipeline: error: {shown(one_line(err))}", file=sys.stderr)
        return 1


def entry() -> None:
    """The console entry point: run, flush, and leave without the interpreter's
    teardown, where a native library's leftover thread (seen once in a while under
    load: "terminate called without an active exception") could abort a run that
    had already published its results and turn its exit status into SIGABRT."""
    code = main()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def one_line(err: BaseException) -> str:
    """An exception as one line: Beam's runners wrap a worker's exception in a
    traceback text, whose last 'SomeError: message' line is the cause."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    causes = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b.*?:", line)]
    text = causes[-1] if causes else (lines[-1] if lines else type(err).__name__)
    if not causes and not text.startswith(type(err).__name__):
        text = f"{type(err).__name__}: {text}"
    return text[:500]
