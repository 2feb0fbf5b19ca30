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
import contextlib
import difflib
import importlib
import logging
import os
import re
import shlex
import signal
import sys
import threading
import traceback
from typing import Optional, Sequence

from pipeline.collector import fewer_collections
from pipeline.io.names import shown
from pipeline.io.stores import split_filesystem_args
from rouge_core import RougeConfigError, RougeInputError, __version__
from rouge_core.settings import leading_flags


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


class UsageError(RougeConfigError):
    """A command line argparse refuses, as one line naming the command (`prog`)."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog = prog


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line on stderr and nothing on stdout
    (argparse prints the whole usage first), and a bad choice naming the valid
    ones and the closest."""

    def error(self, message: str):
        raise UsageError(self.prog, message)

    def _check_value(self, action, value):
        if action.choices is not None and value not in action.choices:
            valid = [str(choice) for choice in action.choices]
            close = difflib.get_close_matches(str(value), valid, n=1, cutoff=0.6)
            raise argparse.ArgumentError(
                action, f"{value!r} is not one of {', '.join(valid)}" + (f"; did you mean {close[0]}?" if close else "")
            )


def build_parser(command: Optional[str] = None) -> tuple[argparse.ArgumentParser, Optional[argparse.ArgumentParser]]:
    """The top-level parser, with `command`'s own parser fully registered (its
    module imported) and the others as one-line entries; returns both parsers."""
    parser = Parser(
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


@contextlib.contextmanager
def _command_logging(verbose: bool):
    """The root logger says warnings on stderr as "rouge-pipeline: ..." while the
    command runs; the caller's handlers and level are put back after, never closed
    (`logging.basicConfig(force=True)` closes them: a program that calls `main()`
    would lose its log files)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("rouge-pipeline: %(message)s"))
    if not verbose:
        handler.addFilter(_QuietBeam())
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


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


def _store_options(sub: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> list[str]:
    """A command that reads result folders takes Beam's filesystem options (`--s3_*`,
    `--no_auth`, ...: pipeline.io.stores), returned for it to apply; anything else is
    refused, with the closest option named."""
    if getattr(args, "store_options", False):
        store_args, extra = split_filesystem_args(extra)
    else:
        store_args = []
    if extra:
        _unknown_options(sub, args.command, extra)
    return store_args
def stray_rouge_flags(sub: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """ROUGE-1.5.5's flags given bare (`score c.txt r.txt -c 95 -r 1000 -n 2 -m`, as a
    paper prints them), with their values: they belong in --rouge-args.  A value
    of one of the command's own options is never taken for one."""
    known = {o: action for action in sub._actions for o in action.option_strings}  # noqa: SLF001
    i = 0
    while i < len(args):
        name, attached = args[i].partition("=")[::2] if args[i].startswith("--") else (args[i], "")
        action = known.get(name)
        if action is not None:
            i += 1
            if not attached and action.nargs != 0:  # its value(s)
                i += 1 if action.nargs in (None, 1) else 0
                while action.nargs in ("+", "*") and i < len(args) and not args[i].startswith("-"):
                    i += 1
            continue
        count = leading_flags(args[i:])
        if count:
            return args[i : i + count]
        i += 1
    return []


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line: exit 0 done, 1 failed, 2 refused before any work (one line
    on stderr, nothing on stdout), or the command's own statuses.  The process's
    garbage-collector thresholds, SIGTERM handler, thread exception hook and root
    logger are the command's while it runs, and restored after."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv
    failed = threading.Event()
    with _command_logging(verbose), fewer_collections(), _signal_handler(signal.SIGTERM, _on_sigterm), \
            _thread_hook(verbose, failed):
        try:
            return _command(argv)
        except UsageError as err:
            print(f"{err.prog}: error: {shown(str(err))}", file=sys.stderr)
            return 2
        except (RougeConfigError, RougeInputError) as err:
            print(f"rouge-pipeline: error: {shown(str(err))}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            return _closed_pipe()
        except KeyboardInterrupt:
            failed.set()
            print("rouge-pipeline: interrupted; nothing was published", file=sys.stderr)
            return 130
        except Terminated:
            failed.set()
            print("rouge-pipeline: terminated (SIGTERM); nothing was published", file=sys.stderr)
            return 143
        except Exception as err:  # disk full, a worker's failure: one line, never a traceback
            failed.set()
            if verbose:
                traceback.print_exc()
            print(f"rouge-pipeline: error: {shown(one_line(err))}", file=sys.stderr)
            return 1


def _command(argv: list[str]) -> int:
    command = _command_of(argv)
    parser, sub = build_parser(command)
    if sub is not None and "--rouge-args" in option_names(sub):
        flags = stray_rouge_flags(sub, argv[argv.index(command) + 1 :])
        if flags:
            raise UsageError(
                sub.prog, f"{' '.join(flags)}: ROUGE-1.5.5's flags go in one option: "
                f"--rouge-args {shlex.quote(' '.join(flags))}"
            )
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "run":
        extra = _store_options(sub, args, extra)
    return args.handler(args, extra)


@contextlib.contextmanager
def _signal_handler(signum: int, handler):
    """`handler` for `signum` while the command runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signum, handler)
    try:
        yield
    finally:
        signal.signal(signum, previous)


@contextlib.contextmanager
def _thread_hook(verbose: bool, failed: threading.Event):
    """While the command runs, a thread's exception is one line (its traceback with
    --verbose); once the command has failed, the runner's threads that fail after
    it (a broken gRPC stream to a lost worker) say nothing more: the command's
    own error says why."""
    previous = threading.excepthook

    def hook(args):
        if verbose:
            previous(args)
        elif not (failed.is_set() or type(args.exc_value).__name__ == "RpcError"):
            print(f"rouge-pipeline: a thread failed: {shown(one_line(args.exc_value))}", file=sys.stderr)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous


EXIT_PIPE = 128 + signal.SIGPIPE  # what a shell reports for a command ended by SIGPIPE


def _closed_pipe() -> int:
    """The reader of stdout has gone (`score ... | head -1`): nothing more can be
    written, and that is no error.  Later writes go nowhere; `entry` ends the
    process by SIGPIPE, as `cat` or `seq` end, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return EXIT_PIPE


def entry() -> None:
    """The console entry point: run, flush, and leave without the interpreter's
    teardown, where a native library's leftover thread (seen once in a while under
    load: "terminate called without an active exception") could abort a run that
    had already published its results and turn its exit status into SIGABRT.  A
    closed stdout ends the process by SIGPIPE (exit status 141 in a shell), with
    no message, as other Unix tools end."""
    code = main()
    logging.shutdown()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = _closed_pipe()
    try:
        sys.stderr.flush()
    except OSError:
        pass
    if code == EXIT_PIPE:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    os._exit(code)


def one_line(err: BaseException) -> str:
    """An exception as one line: Beam's runners wrap a worker's exception in a
    traceback text, whose last 'SomeError: message' line is the cause."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    causes = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b.*?:", line)]
    text = causes[-1] if causes else (lines[-1] if lines else type(err).__name__)
    text = re.sub(r" \[while running '[^']*'\]$", "", text)  # (Beam's note of the step: the message says what)
    if not causes and not text.startswith(type(err).__name__):
        text = f"{type(err).__name__}: {text}"
    return text[:500]
