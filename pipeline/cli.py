"""The `rouge-pipeline` command.

rouge-pipeline run --config configs/NAME.toml [overrides] [Beam options]
    The Beam pipeline: sharded inputs in, a result folder out.
rouge-pipeline score INPUT.jsonl [--rouge-args "<ROUGE-1.5.5 flags>"]
    Score a JSONL file on this machine, without Beam, and print the
    ROUGE-1.5.5 report, byte-identical to the official script's.
rouge-pipeline meta-eval (--run RUN_DIR | --metric-scores FILE) --judgments FILE
    Correlate the scores with human judgments (pipeline/meta_eval.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import sys
from typing import Optional, Sequence

from rouge_core import (
    RougeConfigError,
    RougeInputError,
    RougeScorer,
    RougeSettings,
    __version__,
    render_report,
)
from pipeline import meta_eval
from rouge_core.report import evaluation_ids

PYROUGE_DEFAULTS = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"

EPILOG = f"""\
examples:
  rouge-pipeline score summaries.jsonl
      ROUGE-1..4, L, W-1.2, S*, SU* with stemming: pyrouge's defaults,
      "{PYROUGE_DEFAULTS}", which most papers report.
  rouge-pipeline score summaries.jsonl --rouge-args "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -d"
      DUC/TAC style ROUGE-2 and ROUGE-SU4, with per-document lines.
  rouge-pipeline score summaries.jsonl --eval-ids index
      number documents 1..N in sorted doc_id order, as pyrouge does: the printed
      averages are bootstrap means whose digits depend on that order.

input: JSON Lines, one object per (system, document):
  {{"system": "lead3", "doc_id": "d1", "candidate": "First sentence.\\nSecond.",
   "references": ["A reference.", ["Another", "as a list of sentences."]]}}
"""


def _add_rouge_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ROUGE options")
    group.add_argument(
        "--rouge-args",
        default=PYROUGE_DEFAULTS,
        metavar="FLAGS",
        help=f'ROUGE-1.5.5 flags, as a paper reports them (default: the config\'s [rouge] args for run, '
        f'"{PYROUGE_DEFAULTS}" for score)',
    )
    group.add_argument(
        "--multi-ref",
        choices=["average", "best", "jackknife"],
        help="how several references combine: average (-f A, ROUGE's default), best (-f B), or "
        "jackknife (Lin 2004 section 2.1: best of each set of M-1 references, averaged); "
        "overrides -f in --rouge-args",
    )
    group.add_argument(
        "--eval-ids",
        choices=["doc_id", "index"],
        default="doc_id",
        help="ROUGE evaluation ids: the doc_ids (default) or 1..N in sorted doc_id order, as pyrouge numbers them",
    )


def settings_from_args(args: argparse.Namespace) -> RougeSettings:
    settings = RougeSettings.from_flags(args.rouge_args)
    if args.multi_ref:
        settings = settings.replace(multi_reference=args.multi_ref)
    return settings


def _read_cases(path: str):
    """Joined-form JSONL rows; a malformed row stops with its line number."""
    required = {"system": str, "doc_id": str, "candidate": (str, list), "references": list}
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise RougeInputError(f"{path}:{number}: not valid JSON ({err.msg})") from err
            if not isinstance(row, dict):
                raise RougeInputError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            for name, kind in required.items():
                if name not in row:
                    raise RougeInputError(f"{path}:{number}: missing field {name!r}")
                if not isinstance(row[name], kind):
                    raise RougeInputError(
                        f"{path}:{number}: field {name!r} has type {type(row[name]).__name__}"
                    )
            yield number, row


def score_command(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    scorer = RougeScorer(settings)
    cases = list(_read_cases(args.input))
    ids = evaluation_ids((row["doc_id"] for _, row in cases), args.eval_ids)
    results: dict = {}
    for number, row in cases:
        documents = results.setdefault(row["system"], {})
        if ids[row["doc_id"]] in documents:
            raise RougeInputError(
                f"{args.input}:{number}: duplicate (system, doc_id) = ({row['system']!r}, {row['doc_id']!r})"
            )
        try:
            documents[ids[row["doc_id"]]] = scorer.score(
                candidate=row["candidate"], references=row["references"]
            )
        except RougeInputError as err:
            raise RougeInputError(f"{args.input}:{number}: {err}") from err
    sys.stdout.write(render_report(results, settings))
    print(f"signature: {settings.signature()}", file=sys.stderr)
    try:
        print(f"ROUGE-1.5.5 equivalent: ROUGE-1.5.5.pl -e DATA {settings.rouge155_flags()} -a CONFIG.xml", file=sys.stderr)
    except RougeConfigError as err:
        print(f"ROUGE-1.5.5 equivalent: none ({err})", file=sys.stderr)
    return 0


RUN_EPILOG = """\
examples:
  rouge-pipeline run --config configs/demo.toml
      the bundled sample, on every local core; prints the per-system table.
  rouge-pipeline run --config configs/pyrouge.toml --input 'outputs/*.jsonl.gz' --output out/tonight
  rouge-pipeline run --config configs/duc.toml --input 'cands/*.parquet' --references 'refs/*.parquet'
      split form: candidates and references in separate files, joined by doc_id.
  rouge-pipeline run --config configs/dataflow.toml --project P --region R --temp_location gs://B/tmp
      any option the command does not know goes to Beam unchanged.
  rouge-pipeline run --config configs/pyrouge.toml --dry-run
      check the config, list the inputs, print the signature; run nothing.

runners: without --runner, the local DirectRunner (FnApiRunner) on every core, in
separate processes.  --runner DataflowRunner (pip install 'rouge-pipeline[gcp]'),
--runner SparkRunner / FlinkRunner, or --runner PortableRunner --job_endpoint HOST:PORT
submit the same pipeline to a cluster; see configs/ and the README.

The result folder holds system_scores.{parquet,csv,md}, rouge155.txt (the
ROUGE-1.5.5 report), per_document/*.parquet, errors.{parquet,jsonl}, run.json
and _SUCCESS.  It appears only when the run succeeded.
"""


def run_command(args: argparse.Namespace, beam_args: list[str]) -> int:
    from pipeline import config as run_config
    from pipeline.run import RunFailed, resolve_inputs, run

    config = run_config.load_config(args.config)
    config = run_config.with_overrides(
        config,
        input_candidates=tuple(args.input) if args.input else None,
        input_references=tuple(args.references) if args.references else None,
        output_folder=args.output,
        output_overwrite=True if args.overwrite else None,
        rouge_args=args.rouge_args,
        rouge_multi_reference=args.multi_ref,
        rouge_eval_ids=args.eval_ids,
        run_strict=True if args.strict else None,
    ).validate()
    settings = config.settings()
    print(f"signature: {settings.signature()}")
    try:
        print(f"ROUGE-1.5.5 equivalent: ROUGE-1.5.5.pl -e DATA {settings.rouge155_flags()} -a CONFIG.xml")
    except RougeConfigError as err:
        print(f"ROUGE-1.5.5 equivalent: none ({err})")
    if args.dry_run:
        inputs = resolve_inputs(config)
        for kind in ("candidates", "references"):
            for path in inputs[kind]:
                print(f"{kind[:-1]}: {path}")
        for error in inputs["missing"]:
            print(f"warning: {error.message}")
        print(f"output: {config.output.folder}")
        return 1 if not inputs["candidates"] else 0
    try:
        record = run(config, beam_args)
    except RunFailed as err:
        print(f"rouge-pipeline: run failed, nothing published: {err}", file=sys.stderr)
        return 1
    folder = config.output.folder
    with open(f"{folder}/system_scores.md", encoding="utf-8") as fh:
        print(fh.read())
    counts = record["counts"]
    print(
        f"rows read {counts['rows_read']}, scored {counts['scored']}, errors {counts['errors']}"
        + "".join(f"\n  {reason}: {n}" for reason, n in counts["errors_by_reason"].items())
    )
    for system, missing in counts["systems_missing_documents"].items():
        print(f"warning: {system} has no score for {missing} of the {counts['documents']} documents")
    print(f"results: {folder} ({record['seconds']:.1f} s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rouge-pipeline",
        description="ROUGE-1.5.5 scores, exactly, at any scale.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    score = commands.add_parser(
        "score",
        help="score a JSONL file locally and print the ROUGE-1.5.5 report",
        description="Score a JSONL file on this machine (no Beam) and print the ROUGE-1.5.5\n"
        "report, byte-identical to the official script's output with -a.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("input", help="JSONL (or .jsonl.gz) file with system, doc_id, candidate, references")
    _add_rouge_options(score)
    score.set_defaults(handler=lambda args, extra: score_command(args))

    run = commands.add_parser(
        "run",
        help="run the Beam pipeline over sharded inputs and write a result folder",
        description="Run the Beam pipeline: read sharded JSONL/JSONL.gz/Parquet, score every\n"
        "(system, document), aggregate per system, write the result folder.  Options not\n"
        "listed here are Beam pipeline options and pass through unchanged.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--config", help="TOML run configuration (see configs/)")
    io_group = run.add_argument_group("input and output (override the config)")
    io_group.add_argument("--input", action="append", metavar="GLOB", help="candidate files (repeatable)")
    io_group.add_argument(
        "--references", action="append", metavar="GLOB", help="reference files, split form (repeatable)"
    )
    io_group.add_argument("--output", metavar="DIR", help="result folder")
    io_group.add_argument("--overwrite", action="store_true", help="replace an existing result folder")
    _add_rouge_options(run)
    run.set_defaults(rouge_args=None, eval_ids=None)
    control = run.add_argument_group("run control")
    control.add_argument("--strict", action="store_true", help="fail the run on any bad row")
    control.add_argument(
        "--dry-run", action="store_true", help="validate, list inputs, print the signature; run nothing"
    )
    run.set_defaults(handler=run_command)
    meta_eval.register(commands)
    return parser


class _QuietBeam(logging.Filter):
    """Beam logs a warning about optional GCP libraries at import and forwards its
    workers' routine warnings; the user needs neither."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            record.name.startswith("apache_beam") or record.getMessage().startswith("apitools not found")
        )


def _configure_logging() -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("rouge-pipeline: %(message)s"))
    handler.addFilter(_QuietBeam())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    _configure_logging()
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "run":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.handler(args, extra)
    except (RougeConfigError, RougeInputError) as err:
        print(f"rouge-pipeline: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"rouge-pipeline: error: {err}", file=sys.stderr)
        return 2
