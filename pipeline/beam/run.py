"""Running the pipeline: resolve inputs, run Beam, check the counts, publish the
result folder atomically with its run record."""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import sys
import time
import uuid
from importlib.metadata import PackageNotFoundError, version
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipeline.beam import fn_runner_fixes
from pipeline.beam.aggregate import REPORT_INDEX
from pipeline.beam.faults import watch_workers
from pipeline.beam.spill import remove_spills
from pipeline.beam.graph import build_pipeline
from pipeline.beam.options import choose_runner
from pipeline.beam.progress import PROGRESS_FOLDER_ENV
from pipeline.config import RunConfig, profiles_signature
from pipeline.io import files
from pipeline.io.publish import MARKER, OutputError, Staging, check_output, is_local
from pipeline.io.names import clashes, describe_clashes, seen_as, shown, spelled
from pipeline.io.rows import FILE_LEVEL_REASONS, expand_globs
from pipeline.coverage import EXIT_REJECTED, Coverage, rejected_warning
from pipeline.io.tables import FINGERPRINTS, SYSTEM_COLUMNS, csv_text, parquet_bytes, read_fingerprints, read_json, read_system_rows
from pipeline.progress import Progress
from pipeline.render import tables as views
from pipeline.render.html import write_run_report
from pipeline.reuse import add_carried_counts, plan_reuse, retried_plan, reuse_line, reuse_record
from pipeline.run_progress import LOCAL_RUNNERS, RunProgress
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
    for path in candidates + references:
        kind = files.special_kind(path)
        if kind:
            raise RougeConfigError(
                f"input {path} is {kind}, which can be read only once; `run` reads each input in a Beam "
                "worker that may read it again (a retry). Save it to a file first, or score it with "
                "`rouge-pipeline score`, which reads every input exactly once"
            )
    return {"candidates": candidates, "references": references, "bytes": size + reference_size}


def fingerprints(folder: str, paths: list[str], skipped: Optional[dict] = None) -> list[dict]:
    """Each input's size and SHA-256, as its reader hashed it while reading: the bytes
    that were scored, even if the file changed after (pipeline.io.rows.HashingReader);
    a file not read because a previous run read the same bytes (`skipped`, `run
    --reuse`): that run's record of it, under this run's path."""
    read = {**read_fingerprints(folder), **(skipped or {})}
    return [read.get(path, {"path": path, "error": "not read"}) for path in paths]


def _announce(inputs: dict, plan, runner_note: str) -> dict:
    """The inputs the graph reads (without the files of systems carried whole), said
    in one line, and what is reused, in another."""
    read = inputs
    if plan is not None:
        log.warning("%s", reuse_line(plan))
        if plan.skipped:
            read = dict(inputs, candidates=[path for path in inputs["candidates"] if path not in plan.skipped])
    log.warning("reading %d candidate file(s) and %d reference file(s); %s",
                len(read["candidates"]), len(read["references"]), runner_note)
    return read


def _run_graph(progress: Progress, config: RunConfig, options, inputs: dict, folder: str, reuse) -> dict:
    """Run the Beam graph into `folder`, showing its stages; the run's counts."""
    view = RunProgress(
        progress, inputs, env=PROGRESS_FOLDER_ENV, profiles=len(config.profile_list()),
        baseline=config.significance.baseline, significance=config.significance.enabled,
        human=config.human.name if config.human.enabled else "",
        local=options.view_as(StandardOptions).runner in LOCAL_RUNNERS,
    )
    with view:
        try:
            with watch_workers(config.run.worker_stall_seconds, os.environ.get(PROGRESS_FOLDER_ENV)), \
                    beam.Pipeline(options=options) as p:
                build_pipeline(p, config, inputs, folder, reuse)
        except BaseException:
            _remove_spills_after_failure(folder)  # (an output URL has no staging folder to discard)
            raise
        remove_spills(folder)
        counts = read_json(files.join(folder, "_counts.json"))
        view.finish(counts)
    return counts


def _clear_staging(folder: str) -> None:
    """Everything a graph wrote into the staging folder removed (its marker kept):
    the run starts again."""
    if is_local(folder):
        for name in os.listdir(folder):
            if name != MARKER:
                path = os.path.join(folder, name)
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
        return
    found = [name for pattern in ("*", "*/*") for name in files.match(files.join(folder, pattern))]
    files.delete(sorted(found))


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
        raise RunFailed(f"strict mode: {counts['errors']} error rows")
    if counts["scored"] == 0:
        raise RunFailed(f"nothing was scored ({counts['rows_read']} rows read"
                        + (": the input files hold no rows)" if not counts["rows_read"] else ")"))


def check_names(counts: dict, human: Optional[str]) -> None:
    """Systems are compared as people see them (pipeline.io.names): two that print
    alike are refused, and so is a submitted system named like the human
    pseudo-system, which would silently take its place."""
    systems = counts["documents_by_system"]
    groups = clashes(systems)
    if groups:
        raise RunFailed(describe_clashes("systems", groups))
    if human:
        alike = [s for s in systems if seen_as(s) == seen_as(human) and s != human]
        submitted = systems.get(human, 0) - counts.get("human_documents", 0)
        if alike or submitted > 0:
            name = alike[0] if alike else human
            raise RunFailed(
                f"a submitted system is named {spelled(name)}, like the human pseudo-system {spelled(human)} "
                "(human.name): it would replace the human upper bound; rename the system or set human.name"
            )


def explain_failure(folder: str, final: str, run_id: str, counts: Optional[dict], keep: bool) -> str:
    """The first reasons, with their counts, and the first error rows, for the
    terminal; the errors table is kept (moved to `<output>.failed-<run id>/errors`
    for a local output) and named."""
    lines = []
    if counts:
        by_reason = sorted(counts["errors_by_reason"].items(), key=lambda kv: (-kv[1], kv[0]))
        if by_reason:
            lines.append(
                "error rows by reason: " + ", ".join(f"{reason} {n}" for reason, n in by_reason[:5])
                + (f" and {len(by_reason) - 5} more reasons" if len(by_reason) > 5 else "")
            )
    errors = sorted(files.match(files.join(folder, "errors", "*.jsonl")))
    first = []
    for name in errors:
        for line in files.read_bytes(name).decode("utf-8", "replace").splitlines():
            if len(first) == 5:
                break
            try:
                row = json.loads(line)
            except ValueError:
                continue
            where = str(row.get("source")) + (f":{row['position']}" if row.get("position") is not None else "")
            first.append(f"  {shown(where)}: {row.get('reason')}: {shown(str(row.get('message')))[:300]}")
    if first:
        lines.append("first error rows:")
        lines += first
    if counts is not None and not counts["errors"]:
        errors = []  # an empty errors table is not kept, nor pointed at
    if errors and keep and is_local(folder):
        kept = f"{final}.failed-{run_id}"
        os.makedirs(kept)
        os.rename(os.path.join(folder, "errors"), os.path.join(kept, "errors"))
        if counts:
            with open(os.path.join(kept, "counts.json"), "w", encoding="utf-8") as fh:
                json.dump(counts, fh, indent=1)
        lines.append(f"the errors table is kept in {kept}/errors/ (delete the folder when done)")
    elif errors:
        lines.append(f"the errors table is in {files.join(folder, 'errors')}/")
    else:
        lines.append("no error rows were written")
    return "\n".join(lines)


def resolve_output(path: str) -> str:
    """The output folder as the system resolves it, never simplified as text:
    `dl/../out` with `dl` a symlink is the folder beside dl's target, as a shell's
    `ls dl/../out` shows, and `nonexist/../out` names nothing (refused).  The last
    name is kept as given (a symlink there is refused by check_output)."""
    parts = path.split(os.sep)
    for i, part in enumerate(parts):
        if part == ".." and i:
            prefix = os.sep.join(parts[:i]) or os.sep
            if not os.path.isdir(prefix):
                raise OutputError(
                    f"output {path}: {prefix} is not an existing folder, so {prefix}{os.sep}.. names "
                    "nothing; give the output without '..'"
                )
    head, name = os.path.split(path.rstrip(os.sep) or os.sep)
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(head or "."), name)


def run(config: RunConfig, beam_args: Sequence[str] = (), inputs: Optional[dict] = None,
        progress: Optional[Progress] = None) -> dict:
    """Run the whole job and publish its result folder; returns the run record.
    `progress` shows the stages while it works (default: nothing)."""
    progress = progress or Progress(quiet=True)
    profiles = config.profile_list()
    final = config.output.folder
    started = time.time()
    inputs = inputs or resolve_inputs(config)
    staging = None
    if is_local(final):
        final = resolve_output(final)
        replaces = check_output(final, config.output.overwrite, inputs["candidates"] + inputs["references"])
        staging = Staging(final, replaces).create()
        folder, run_id = staging.path, staging.run_id
    else:
        if files.exists(files.join(final, "_SUCCESS")) and not config.output.overwrite:
            raise OutputError(f"output folder {final} holds a finished run; pass --overwrite to replace it")
        folder, run_id = final, uuid.uuid4().hex[:12]
    args, runner_note = choose_runner(list(config.run.beam_args) + list(beam_args), inputs["bytes"])
    plan = plan_reuse(config.run.reuse, config, inputs) if config.run.reuse else None
    options = PipelineOptions(args)
    counts = None
    fn_runner_fixes.apply()  # worker processes: no chunk lost between stages
    try:
        while True:  # once, or again when what a previous run offered could not be used as planned
            read = _announce(inputs, plan, runner_note)
            counts = _run_graph(progress, config, options, read, folder, plan if plan and plan.reuses else None)
            retry = plan and retried_plan(plan, counts, list(read_fingerprints(folder).values()))
            if not retry:
                break
            log.warning("%s; running again", retry.not_carried or retry.refused)
            _clear_staging(folder)
            plan = retry
        if plan is not None:
            add_carried_counts(counts, plan)
        check_counts(counts, config.run.strict)
        check_names(counts, config.human.name if config.human.enabled else None)
        facts = run_facts(config, counts)
        record = {
            "signature": profiles_signature(profiles, **facts),
            "significance_signature": config.significance.signature() if config.significance.enabled else None,
            "rouge155_flags": _flags_or_none(profiles[0].settings[0]) if len(profiles) == 1 else None,
            "profiles": [
                {
                    "name": p.name,
                    "signatures": [s.signature(**facts) for s in p.settings],
                    "rouge155_flags": [_flags_or_none(s) for s in p.settings],
                    "metrics": p.tags,
                }
                for p in profiles
            ],
            "config": config.to_dict(),
            "config_file": config.source,
            "inputs": {
                "candidates": fingerprints(folder, inputs["candidates"], plan.skipped if plan else None),
                "references": fingerprints(folder, inputs["references"]),
            },
            "counts": counts,
            "runner": options.view_as(StandardOptions).runner,
            "direct_running_mode": options.view_as(DirectOptions).direct_running_mode,
            "versions": _versions(),
            "run_id": run_id,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "seconds": round(time.time() - started, 3),
            "output": final,
        }
        if plan is not None:
            record["reuse"] = reuse_record(plan, counts)
        record["rejected"] = _coverage(folder, counts, config, profiles, facts)
        # where each system's block lies in the ROUGE-1.5.5 report(s): what a later run copies (pipeline.reuse)
        record["rouge155_parts"] = read_json(files.join(folder, REPORT_INDEX))
        files.delete([files.join(folder, "_counts.json"), files.join(folder, REPORT_INDEX)]
                     + sorted(files.match(files.join(folder, FINGERPRINTS, "*"))))
        if is_local(folder) and os.path.isdir(os.path.join(folder, FINGERPRINTS)):  # (none: no file was read)
            os.rmdir(os.path.join(folder, FINGERPRINTS))
        _write_text(
            files.join(folder, "run.json"), json.dumps(record, indent=1, ensure_ascii=False) + "\n"
        )
        with progress.stage("report", 1, "pages", always_end=True) as stage:
            write_run_report(folder, record)
            stage.update(1)
        _write_text(files.join(folder, "_SUCCESS"), "")
        if staging is not None:
            staging.publish()
    except RunFailed as err:
        explained = explain_failure(folder, final, run_id, counts, keep=staging is not None)
        if staging is not None:
            staging.discard()
        raise RunFailed(f"{err}\n{explained}") from None
    except BaseException:
        if staging is not None:
            staging.discard()
        raise
    return record


def _remove_spills_after_failure(folder: str) -> None:
    """A failed pipeline's spill files removed, best effort: the failure is what the
    user must see, so a file that will not go is a warning."""
    try:
        remove_spills(folder)
    except Exception as err:  # noqa: BLE001
        log.warning("could not remove the spill files under %s: %s", folder, err)


def run_facts(config: RunConfig, counts: dict) -> dict:
    """What the run adds to its settings' signature (`RunConfig.facts`), with the
    references per document its counts found."""
    references = counts.get("references_per_document")
    return config.facts(tuple(references) if references else None)


def _coverage(folder: str, counts: dict, config: RunConfig, profiles, facts: dict) -> dict:
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
    metadata = {"signature": profiles_signature(profiles, **facts)}
    files.write_bytes(files.join(folder, "system_scores.parquet"), parquet_bytes(rows, SYSTEM_COLUMNS, metadata))
    files.write_bytes(files.join(folder, "system_scores.csv"), csv_text(rows).encode("utf-8"))
    table = views.profiles_markdown(rows, profiles, facts)
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
