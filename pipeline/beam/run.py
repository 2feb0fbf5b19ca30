"""Running the pipeline: resolve inputs, run Beam, check the counts, publish the
result folder atomically with its run record."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import sys
import time
import uuid
from importlib.metadata import PackageNotFoundError, version
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipeline.beam.graph import build_pipeline
from pipeline.beam.options import choose_runner
from pipeline.config import RunConfig, profiles_signature
from pipeline.io import files
from pipeline.io.publish import OutputError, Staging, check_output, is_local
from pipeline.io.rows import FILE_LEVEL_REASONS, expand_globs
from pipeline.coverage import EXIT_REJECTED, Coverage, rejected_warning
from pipeline.io.tables import SYSTEM_COLUMNS, csv_text, parquet_bytes, read_json, read_system_rows
from pipeline.render import tables as views
from pipeline.render.html import write_run_report
from rouge_core import RougeConfigError, __version__, kernel_info

log = logging.getLogger("rouge-pipeline")




class RunFailed(Exception):
    """The run finished but must not be published (strict mode, nothing scored, counts off)."""


def resolve_inputs(config: RunConfig) -> dict:
    """The input files; a glob that matches nothing stops the run here, before Beam
    starts, naming the glob."""
    candidates, missing, size = expand_globs(config.input.candidates)
    references, missing_refs, reference_size = expand_globs(config.input.references)
    if missing + missing_refs:
        raise RougeConfigError("; ".join(e.message for e in missing + missing_refs))
    return {"candidates": candidates, "references": references, "bytes": size + reference_size}


def fingerprint(path: str) -> dict:
    """Size and SHA-256 of an input file (read once more)."""
    digest = hashlib.sha256()
    size = 0
    try:
        with files.open_read(path) as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
    except OSError as err:  # the errors table already says the file could not be read
        return {"path": path, "error": str(err)}
    return {"path": path, "bytes": size, "sha256": digest.hexdigest()}


def check_counts(counts: dict, strict: bool) -> None:
    """`rows read = scored + row errors + reference rows` (a reference row reported as
    `duplicate_reference` is counted once, as an error); strict mode fails on any error."""
    by_reason = counts["errors_by_reason"]
    file_errors = sum(n for reason, n in by_reason.items() if reason in FILE_LEVEL_REASONS)
    reported_references = by_reason.get("duplicate_reference", 0)
    row_errors = counts["errors"] - file_errors
    accounted = counts["scored"] + row_errors + counts["reference_rows"] - reported_references
    counts["balanced"] = counts["rows_read"] == accounted
    if not counts["balanced"]:
        raise RunFailed(
            f"rows read ({counts['rows_read']}) != scored ({counts['scored']}) + row errors "
            f"({row_errors}) + reference rows ({counts['reference_rows'] - reported_references}): rows were lost"
        )
    if strict and counts["errors"]:
        raise RunFailed(f"strict mode: {counts['errors']} error rows ({by_reason}); see errors/")
    if counts["scored"] == 0:
        raise RunFailed("nothing was scored; see errors/")


def run(config: RunConfig, beam_args: Sequence[str] = (), inputs: Optional[dict] = None) -> dict:
    """Run the whole job and publish its result folder; returns the run record."""
    profiles = config.profile_list()
    final = config.output.folder
    started = time.time()
    inputs = inputs or resolve_inputs(config)
    staging = None
    if is_local(final):
        final = os.path.abspath(final)
        replaces = check_output(final, config.output.overwrite, inputs["candidates"] + inputs["references"])
        staging = Staging(final, replaces).create()
        folder, run_id = staging.path, staging.run_id
    else:
        if files.exists(files.join(final, "_SUCCESS")) and not config.output.overwrite:
            raise OutputError(f"output folder {final} holds a finished run; pass --overwrite to replace it")
        folder, run_id = final, uuid.uuid4().hex[:12]
    args, runner_note = choose_runner(list(config.run.beam_args) + list(beam_args), inputs["bytes"])
    log.warning(
        "reading %d candidate file(s) and %d reference file(s); %s",
        len(inputs["candidates"]),
        len(inputs["references"]),
        runner_note,
    )
    options = PipelineOptions(args)
    try:
        with beam.Pipeline(options=options) as p:
            build_pipeline(p, config, inputs, folder)
        counts = read_json(files.join(folder, "_counts.json"))
        check_counts(counts, config.run.strict)
        record = {
            "signature": profiles_signature(profiles),
            "significance_signature": config.significance.signature() if config.significance.enabled else None,
            "rouge155_flags": _flags_or_none(profiles[0].settings[0]) if len(profiles) == 1 else None,
            "profiles": [
                {
                    "name": p.name,
                    "signatures": [s.signature() for s in p.settings],
                    "rouge155_flags": [_flags_or_none(s) for s in p.settings],
                    "metrics": p.tags,
                }
                for p in profiles
            ],
            "config": config.to_dict(),
            "config_file": config.source,
            "inputs": {
                "candidates": [fingerprint(p) for p in inputs["candidates"]],
                "references": [fingerprint(p) for p in inputs["references"]],
            },
            "counts": counts,
            "runner": options.view_as(StandardOptions).runner,
            "direct_running_mode": options.view_as(DirectOptions).direct_running_mode,
            "versions": _versions(),
            "run_id": run_id,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "seconds": round(time.time() - started, 3),
        }
        record["rejected"] = _coverage(folder, counts, config, profiles)
        files.delete([files.join(folder, "_counts.json")])
        _write_text(
            files.join(folder, "run.json"), json.dumps(record, indent=1, ensure_ascii=False) + "\n"
        )
        write_run_report(folder, record)
        _write_text(files.join(folder, "_SUCCESS"), "")
        if staging is not None:
            staging.publish()
    except BaseException:
        if staging is not None:
            staging.discard()
        raise
    return record


def _coverage(folder: str, counts: dict, config: RunConfig, profiles) -> dict:
    """The rejected share against run.max_rejected (pipeline.coverage), for run.json;
    system_scores.{parquet,csv,md} written again with `documents_had` (the .md headed
    by the warning when the share is past the threshold: the run still publishes)."""
    coverage = Coverage.from_counts(counts)
    problems = coverage.problems(config.run.max_rejected)
    warning = (
        rejected_warning(problems, config.run.max_rejected, "The rejected rows are in errors/.", counts["errors_by_reason"])
        if problems
        else None
    )
    rows = [dict(r, documents_had=coverage.had(r["system"])) for r in read_system_rows(folder)]
    metadata = {"signature": profiles_signature(profiles)}
    files.write_bytes(files.join(folder, "system_scores.parquet"), parquet_bytes(rows, SYSTEM_COLUMNS, metadata))
    files.write_bytes(files.join(folder, "system_scores.csv"), csv_text(rows).encode("utf-8"))
    table = views.profiles_markdown(rows, profiles)
    _write_text(files.join(folder, "system_scores.md"), (f"**{warning}**\n\n" if warning else "") + table)
    return {"max_rejected": config.run.max_rejected, "problems": problems, "warning": warning,
            "exit_status": EXIT_REJECTED if problems else 0}


def _flags_or_none(settings):
    try:
        return settings.rouge155_flags()
    except RougeConfigError:
        return None


def _write_text(path: str, text: str) -> None:
    files.write_bytes(path, text.encode("utf-8"))


def _versions() -> dict:
    """Versions of what can change a number or a byte, read from the installed
    packages' metadata (importing nltk alone costs seconds)."""
    def of(package: str):
        try:
            return version(package)
        except PackageNotFoundError:
            return None

    return {
        "rouge_pipeline": __version__,
        **{name: of(name) for name in ("apache-beam", "pyarrow", "numpy", "nltk", "regex", "jinja2", "matplotlib")},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        # Which scoring path ran here (the compiled kernel or pure Python): never a
        # difference in the numbers, so it is not part of the signature.
        "rouge_core_kernel": kernel_info()["kernel"],
    }
