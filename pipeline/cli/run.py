"""`rouge-pipeline run`: the Beam pipeline, from a config and overrides to a result folder."""

from __future__ import annotations

import argparse
import sys

from pipeline import config as run_config
from pipeline.beam.runners.options import check_beam_args
from pipeline.beam.run import RunFailed, resolve_inputs, resolve_output, run, runner_options
from pipeline.cli.common import (
    add_conflicting_references,
    add_field_options,
    add_rouge_options,
    config_option,
    input_overrides,
    print_signature,
    rouge_overrides,
)
from pipeline.coverage import EXIT_REJECTED, document_sets_warning, text_warnings
from pipeline.io.names import shown
from pipeline.io.tables import read_system_rows
from pipeline.progress import Progress
from pipeline.render import tables as views
from rouge_core import RougeConfigError

RUN_EPILOG = """\
examples:
  rouge-pipeline run --config configs/demo.toml
      the bundled sample (84 KiB: it runs in this process); prints the per-system table.
  rouge-pipeline run --config configs/pyrouge.toml --input 'outputs/*.jsonl.gz' --output out/tonight
  rouge-pipeline run --config configs/duc.toml --input 'cands/*.parquet' --references 'refs/*.parquet'
      split form: candidates and references in separate files, joined by doc_id.
  rouge-pipeline run --config configs/dataflow.toml --project P --region R --temp_location gs://B/tmp
      any option the command does not know goes to Beam unchanged.
  rouge-pipeline run --config configs/pyrouge.toml --dry-run
      check the config, list the inputs, print the signature; run nothing.
  rouge-pipeline run --input 'preds/*.jsonl' --fields system=model,doc_id=id,candidate=prediction \\
      --integer-ids doc_id --output out/preds
      rows of {"model": ..., "id": 7, "prediction": ..., "reference": ...}: no config needed.

runners: without --runner, Beam's local FnApiRunner in this process, whatever the
input's size (its worker-process mode, --direct_running_mode=multi_processing, lost
rows of one large file in Beam 2.77: docs/scaling.md); the first line printed names
the runner.  --runner DaskRunner --dask_client_address HOST:PORT runs on a
dask.distributed cluster (pip install 'apache-beam[dask]').
--runner DataflowRunner (pip install 'rouge-pipeline[gcp]'),
--runner SparkRunner / FlinkRunner, or --runner PortableRunner --job_endpoint HOST:PORT
submit the same pipeline to a cluster; see configs/ and the README.

The result folder holds system_scores.{parquet,csv,md}, rouge155.txt (the
ROUGE-1.5.5 report; rouge155 preset only), per_document/*.parquet, errors/*.{parquet,jsonl}, run.json,
report.html (the page for people: charts and tables of the scores with their
intervals, significance, errors) and _SUCCESS.  It appears only when the run
succeeded.

exit status: 0 when the run published; 1 when it failed (nothing published);
2 when it was refused before any work (a usage error, a bad config, an input glob
that matches nothing, an output folder in the way: one line on stderr, nothing on
stdout); 3 when it published but more rows were rejected than --max-rejected allows
(run.max_rejected, default 1% of all rows or of any one system's documents):
the printed table, system_scores.md and report.html are headed by a warning.
"""


def run_command(args: argparse.Namespace, beam_args: list[str], our_options: list[str]) -> int:
    config = run_config.load_config(args.config)
    rouge_options = ("rouge_args", "preset", "rouge_types", "stem", "language", "multi_ref", "sentence_split")
    given = [f"--{name.replace('_', '-')}" for name in rouge_options if getattr(args, name) is not None]
    if config.profiles and given:
        raise RougeConfigError(
            f"{', '.join(given)} set [rouge], but {config.source} scores with its [profiles]; "
            "change the profiles in the config instead"
        )
    config = run_config.with_overrides(
        config,
        input_candidates=tuple(args.input) if args.input else None,
        input_references=tuple(args.references) if args.references else None,
        **input_overrides(args),
        output_folder=args.output,
        output_overwrite=True if args.overwrite else None,
        **rouge_overrides(args),
        run_strict=True if args.strict else None,
        run_shared_filesystem=True if args.shared_filesystem else None,
        run_max_rejected=args.max_rejected,
        run_reuse=args.reuse,
        significance_baseline=args.baseline,
        output_per_document_formats=(tuple(dict.fromkeys(("parquet", *args.per_document_format)))
                                     if args.per_document_format else None),
    ).validate()
    check_beam_args(list(config.run.beam_args) + list(beam_args), our_options)
    runner_options(config, beam_args)  # a local path that the runner's workers cannot reach: refused
    profiles = config.profile_list()
    inputs = resolve_inputs(config, beam_args)  # every glob must match: checked before Beam starts
    if args.dry_run:  # the signature as far as the config says it (the references per document: once read)
        folder = config.output.folder
        output = resolve_output(folder) if "://" not in folder else folder
        print_signatures(profiles, config.facts())
        for kind in ("candidates", "references"):
            for path in inputs[kind]:
                print(f"{kind[:-1]}: {shown(path)}")
        print(f"output: {output}")
        return 0
    progress = Progress(quiet=args.quiet, interval=config.run.progress_seconds)
    try:
        record = run(config, beam_args, inputs, progress)
    except RunFailed as err:
        print(f"rouge-pipeline: run failed, nothing published: {err}", file=sys.stderr)
        return 1
    # stdout gets only results: nothing before the run has published (a refused run prints nothing there)
    folder = record.get("output") or config.output.folder  # the output as the system resolved it
    counts = record["counts"]
    rejected = record["rejected"]
    print()
    if rejected["warning"]:  # the table a person reads starts with it
        print(rejected["warning"] + "\n")
    facts = config.counted_facts(counts)
    print(views.profiles_text(read_system_rows(folder), profiles, facts))
    print(
        f"rows read {counts['rows_read']}, scored {counts['scored']}, errors {counts['errors']}"
        + "".join(f"\n  {reason}: {n}" for reason, n in counts["errors_by_reason"].items())
    )
    for line in document_sets_warning(counts["systems_missing_documents"], counts["documents"]):
        print(line)
    for line in text_warnings(counts.get("text_checks", {})):
        print(line)
    print_signatures(profiles, facts)  # once, whole: with the references per document the run found
    print(f"results: {folder} ({record['seconds']:.1f} s)")
    print(f"report: {folder}/report.html")
    return rejected["exit_status"]


def print_signatures(profiles, facts: dict) -> None:
    """Each setting's signature (with the run's `facts`) and its ROUGE-1.5.5 command, on stdout."""
    for profile in profiles:
        if len(profiles) > 1:
            print(f"profile {profile.name}:")
        for settings in profile.settings:
            print_signature(settings, sys.stdout, facts)


def register(commands) -> argparse.ArgumentParser:
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
    # nargs="+": `--input dir/*.jsonl` expanded by the shell gives every file to --input
    io_group.add_argument("--input", nargs="+", action="extend", metavar="GLOB",
                          help="candidate files or globs (several values; repeatable)")
    io_group.add_argument(
        "--references", nargs="+", action="extend", metavar="GLOB",
        help="reference files or globs, split form (several values; repeatable)",
    )
    io_group.add_argument("--output", metavar="DIR", help="result folder")
    io_group.add_argument(
        "--overwrite", action="store_true", help="replace a previous result folder of this tool (nothing else)"
    )
    io_group.add_argument(
        "--reuse", metavar="PREVIOUS_RESULT",
        help="a previous result folder (local or URL): reuse what it computed from unchanged rows and systems, "
        "verified (every table as a full run's; docs/nightly.md)",
    )
    config_option(
        io_group, "--per-document-format", "output", "per_document_formats", action="append",
        help="also write per-document scores as CSV or JSON Lines next to the Parquet shards (always written; "
        "repeatable)",
    )
    add_field_options(io_group)
    add_rouge_options(run)
    run.set_defaults(rouge_args=None, eval_ids=None)
    control = run.add_argument_group("run control")
    control.add_argument("--strict", action="store_true", help="fail the run on any bad row")
    control.add_argument(
        "--shared-filesystem", action="store_true",
        help="every worker of a cluster runner (Dask, PortableRunner, Flink, Spark, Dataflow) sees this machine's "
        "paths (a shared filesystem, or workers on this machine); without it, a local --input, --output, "
        "--temp_location or --staging_location is refused with such a runner (run.shared_filesystem)",
    )
    add_conflicting_references(control)
    control.add_argument(
        "--max-rejected", type=float, metavar="SHARE",
        help=f"publish, but exit with status {EXIT_REJECTED} and head the tables with a warning, when more than "
        "this share of the rows, or of any one system's documents, was rejected (default: run.max_rejected, 0.01)",
    )
    control.add_argument(
        "--baseline",
        metavar="SYSTEM",
        help="paired significance of each system against this one (default: every pair of systems)",
    )
    control.add_argument(
        "--dry-run", action="store_true", help="validate, list inputs, print the signature; run nothing"
    )
    control.add_argument("--verbose", action="store_true", help="show tracebacks and Beam's own messages")
    control.add_argument(
        "--quiet", action="store_true",
        help="no progress (by default each stage shows what is done of its total, the rate and the time "
        "left: bars on a terminal, a line every [run] progress_seconds otherwise)",
    )
    ours = [o for action in run._actions for o in action.option_strings]  # noqa: SLF001
    run.set_defaults(handler=lambda args, beam_args: run_command(args, beam_args, ours))
    return run
