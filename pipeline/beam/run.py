"""Running the pipeline: resolve inputs, run Beam, check the counts, publish the
result folder atomically with its run record."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import platform
import shutil
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipeline.beam.aggregate import REPORT_INDEX
from pipeline.beam.spill import remove_spills
from pipeline.collector import fewer_collections
from pipeline.beam.graph import build_pipeline
from pipeline.beam.runners.options import choose_runner
from pipeline.beam.runners.locality import reachable_inputs, refuse_unreachable, runner_name
from pipeline.beam.runners.portable import check_job_service
from pipeline.beam.runners.session import runner_session, shows_progress
from pipeline.beam.progress import PROGRESS_FOLDER_ENV
from pipeline.config import RunConfig, profiles_signature
from pipeline.io import files, stores
from pipeline.io.manifest import MARKER
from pipeline.io.publish import OutputError, Staging, check_output, is_local, test_pause
from pipeline.io.publish_url import UrlStaging
from pipeline.io.names import clashes, describe_clashes, seen_as, shown, spelled
from pipeline.io.fields import mapping_hint
from pipeline.io.patterns import system_from_path
from pipeline.io.rows import FILE_LEVEL_REASONS, expand_globs, read_lines
from pipeline.coverage import error_lines, run_rejected
from pipeline.io.tables import FINGERPRINTS, read_fingerprints, read_json
from pipeline.progress import Progress
from pipeline.records import ErrorRecord
from pipeline.render.html import write_run_report
from pipeline.reuse import add_carried_counts, plan_reuse, retried_plan, reuse_line, reuse_record
from pipeline.run_progress import RunProgress
from rouge_core import RougeConfigError, __version__, kernel_info

log = logging.getLogger("rouge-pipeline")




class RunFailed(Exception):
    """The run finished but must not be published (strict mode, nothing scored, counts off)."""


def configure_stores(config: RunConfig, beam_args: Sequence[str] = ()) -> list[str]:
    """Beam's filesystem options (`--s3_*`, `--no_auth`, ... and the environment's:
    pipeline.io.stores) applied before any file is listed or opened; returns the
    options the environment added, which the pipeline carries to its workers."""
    return stores.configure(list(config.run.beam_args) + list(beam_args))


def resolve_inputs(config: RunConfig, beam_args: Sequence[str] = ()) -> dict:
    """The input files; a glob that matches nothing stops the run here, before Beam
    starts, naming the glob."""
    configure_stores(config, beam_args)
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
    pattern = system_from_path(config.input.system_from_path)
    if pattern is not None:  # a pattern that backtracks on a path is refused here, not in a worker
        pattern.check(candidates)
    return {"candidates": candidates, "references": references, "bytes": size + reference_size}


def fingerprints(folder: str, paths: list[str], skipped: Optional[dict] = None) -> list[dict]:
    """Each input's size and SHA-256, as its reader hashed it while reading: the bytes
    that were scored, even if the file changed after (pipeline.io.rows.HashingReader);
    a file not read because a previous run read the same bytes (`skipped`, `run
    --reuse`): that run's record of it, under this run's path; a file that changed
    while or after it was read says so (`changed`), here and on stderr."""
    read = {**read_fingerprints(folder), **(skipped or {})}
    found = [read.get(path, {"path": path, "error": "not read"}) for path in paths]
    for entry in found:
        if entry.get("changed"):
            log.warning("input %s changed: %s (run.json records the bytes read)", shown(entry["path"]),
                        entry["changed"])
    return found


def _announce(inputs: dict, plan, runner_note: str, quiet: bool) -> dict:
    """The inputs the graph reads (without the files of systems carried whole), said
    in one line (not with --quiet), and what is reused, in another (always)."""
    read = inputs
    if plan is not None:
        log.warning("%s", reuse_line(plan))
        if plan.skipped:
            read = dict(inputs, candidates=[path for path in inputs["candidates"] if path not in plan.skipped])
    if not quiet:  # (--quiet: nothing but results, warnings and errors)
        log.warning("reading %d candidate file(s) and %d reference file(s); %s",
                    len(read["candidates"]), len(read["references"]), runner_note)
    return read


def _run_graph(progress: Progress, config: RunConfig, options, inputs: dict, folder: str, reuse) -> dict:
    """Run the Beam graph into `folder`, showing its stages; the run's counts."""
    view = RunProgress(
        progress, inputs, env=PROGRESS_FOLDER_ENV, profiles=len(config.profile_list()),
        baseline=config.significance.baseline, significance=config.significance.enabled,
        human=config.human.name if config.human.enabled else "", live=shows_progress(options),
    )
    with view:
        try:
            with runner_session(options, config.run, os.environ.get(PROGRESS_FOLDER_ENV)) as runner, \
                    beam.Pipeline(runner=runner, options=options) as p:
                try:
                    build_pipeline(p, config, inputs, folder, reuse)
                except BaseException:  # Beam removes its temporary folder only when the graph runs
                    shutil.rmtree(p.local_tempdir, ignore_errors=True)
                    raise
        except BaseException:
            _remove_spills_after_failure(folder)
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


def check_names(counts: dict, human: Optional[str], baseline: str = "") -> None:
    """Systems are compared as people see them (pipeline.io.names): two that print
    alike are refused, and so is a submitted system named like the human
    pseudo-system, which would silently take its place; a significance baseline
    must be one of the systems (else the significance table would be empty)."""
    systems = counts["documents_by_system"]
    groups = clashes(systems)
    if groups:
        raise RunFailed(describe_clashes("systems", groups))
    if baseline and baseline not in systems:
        raise RunFailed(f"significance.baseline {spelled(baseline)} names no system of this run, so no pair could be "
                        f"tested; its systems: {_listed(sorted(systems))} (--baseline NAME names one of them)")
    if human:
        alike = [s for s in systems if seen_as(s) == seen_as(human) and s != human]
        submitted = systems.get(human, 0) - counts.get("human_documents", 0)
        if alike or submitted > 0:
            name = alike[0] if alike else human
            raise RunFailed(
                f"a submitted system is named {spelled(name)}, like the human pseudo-system {spelled(human)} "
                "(human.name): it would replace the human upper bound; rename the system or set human.name"
            )


def _listed(names: list, limit: int = 10) -> str:
    """The first `limit` names, spelled (pipeline.io.names.spelled), and how many more."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(spelled(n) for n in names[:limit]) + more


# Error rows read back to show the first of them (alike rows as one line): a bound on the reading.
_ERROR_ROWS_SHOWN_FROM = 10_000


def explain_failure(folder: str, final: str, run_id: str, counts: Optional[dict], keep: bool,
                    config: Optional[RunConfig] = None) -> str:
    """The first reasons, with their counts, and the first error rows, for the
    terminal (alike rows of a file as one line, and for a file whose rows miss a
    field, how to map its fields); the errors table is kept (moved to
    `<output>.failed-<run id>/errors` for a local output) and named."""
    lines = []
    if counts:
        by_reason = sorted(counts["errors_by_reason"].items(), key=lambda kv: (-kv[1], kv[0]))
        if by_reason:
            lines.append(
                "error rows by reason: " + ", ".join(f"{reason} {n}" for reason, n in by_reason[:5])
                + (f" and {len(by_reason) - 5} more reasons" if len(by_reason) > 5 else "")
            )
    errors = sorted(files.match(files.join(folder, "errors", "*.jsonl")))
    hint = (lambda source: mapping_hint(source, config.input)) if config is not None else None
    first = error_lines(itertools.islice(_error_rows(errors), _ERROR_ROWS_SHOWN_FROM), 5, hint)
    if first:
        lines.append("first error rows:")
        lines += first
    if counts is not None and not counts["errors"]:
        errors = []  # an empty errors table is not kept, nor pointed at
    if errors and keep:
        lines.append(_keep_errors(folder, f"{final}.failed-{run_id}", counts))
    elif errors:
        lines.append(f"the errors table is in {files.join(folder, 'errors')}/")
    else:
        lines.append("no error rows were written")
    return "\n".join(lines)


def _error_rows(paths: list[str]):
    """The rows of the errors table's files, as records, one at a time (each file read
    a line at a time: a table of millions of rows is not loaded)."""
    for name in paths:
        with files.open_read(name) as fh:
            for line in read_lines(fh, 1 << 20):
                try:
                    row = json.loads(line)
                except (TypeError, ValueError):  # (None: a line over the bound)
                    continue
                yield ErrorRecord(None, None, str(row.get("source")), row.get("position"), str(row.get("reason")),
                                  str(row.get("message"))[:300])


def _keep_errors(folder: str, kept: str, counts: Optional[dict]) -> str:
    """The errors table moved (a URL: copied) out of the staging folder, which is then
    removed, to `kept`, with the counts; a line saying where, or why it could not be
    kept (a full disk: the staging folder is removed all the same)."""
    try:
        if is_local(folder):
            os.makedirs(kept)
            os.rename(os.path.join(folder, "errors"), os.path.join(kept, "errors"))
        else:  # (the staging prefix goes with the failed run)
            parts = sorted(files.list_tree(files.join(folder, "errors")))
            files.copy([files.join(folder, "errors", p) for p in parts], [files.join(kept, "errors", p) for p in parts])
    except OSError as err:
        if is_local(folder):
            shutil.rmtree(kept, ignore_errors=True)
        return f"the errors table could not be kept ({err}); it is removed with the staging folder"
    line = f"the errors table is kept in {kept}/errors/ (delete the folder when done)"
    if counts:
        try:
            _write_text(files.join(kept, "counts.json"), json.dumps(counts, indent=1))
        except OSError as err:
            with contextlib.suppress(OSError):
                files.delete([files.join(kept, "counts.json")])
            line += f"; its counts.json could not be written ({err})"
    return line


def runner_options(config: RunConfig, beam_args: Sequence[str], input_bytes: int = 0) -> tuple[PipelineOptions, str]:
    """The Beam options to run with and the line saying which runner and why; a local
    path that workers on other machines cannot reach is refused here, before any work
    (pipeline.beam.runners.locality)."""
    args, runner_note = choose_runner(list(config.run.beam_args) + list(beam_args), input_bytes)
    options = PipelineOptions(args)
    refuse_unreachable(options, config)
    return options, runner_note


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
    `progress` shows the stages while it works (default: nothing).  The garbage
    collector works as `pipeline.collector` says while the pipeline runs in this
    process, and is left as the caller had it."""
    with fewer_collections():
        return _run(config, beam_args, inputs, progress or Progress(quiet=True))


def _run(config: RunConfig, beam_args: Sequence[str], inputs: Optional[dict], progress: Progress) -> dict:
    _check_kernel()
    profiles = config.profile_list()
    final = config.output.folder
    started = time.time()
    beam_args = list(beam_args) + configure_stores(config, beam_args)  # (the environment's store options go to the workers too)
    if inputs is None:
        runner_options(config, beam_args)  # what cannot work is refused before anything is listed
        inputs = resolve_inputs(config, beam_args)
    options, runner_note = runner_options(config, beam_args, inputs["bytes"])
    inputs = reachable_inputs(options, inputs)
    check_job_service(options, runner_name(options), config.run.cluster_wait_seconds)
    paths = inputs["candidates"] + inputs["references"]
    if is_local(final):
        final = resolve_output(final)
        staging = Staging(final, check_output(final, config.output.overwrite, paths)).create()
    else:  # an object store: a lock, a staging prefix, the manifest (pipeline.io.publish_url)
        staging = UrlStaging(final, config.output.overwrite, paths, lease_seconds=config.output.lock_lease_seconds)
        final = staging.create().final
    folder, run_id = staging.path, staging.run_id
    plan = plan_reuse(config.run.reuse, config, inputs) if config.run.reuse else None
    counts = None
    try:
        while True:  # once, or again when what a previous run offered could not be used as planned
            read = _announce(inputs, plan, runner_note, progress.quiet)
            counts = _run_graph(progress, config, options, read, folder, plan if plan and plan.reuses else None)
            retry = plan and retried_plan(plan, counts, list(read_fingerprints(folder).values()))
            if not retry:
                break
            log.warning("%s; running again", retry.not_carried or retry.refused)
            _clear_staging(folder)
            plan = retry
        if plan is not None:
            add_carried_counts(counts, plan)
        test_pause("before_checks")  # (tests: a disk that fills up before a failed run keeps its errors)
        check_counts(counts, config.run.strict)
        check_names(counts, config.human.name if config.human.enabled else None,
                    config.significance.baseline if config.significance.enabled else "")
        facts = config.counted_facts(counts)
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
        record["rejected"] = run_rejected(counts, config.run.max_rejected)
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
        carried = plan.carried_files() if plan is not None and plan.reuses else {}
        staging.publish({name: entry for (_, _, name), entry in carried.items()})  # the manifest, _SUCCESS, last
    except RunFailed as err:
        try:
            explained = explain_failure(folder, final, run_id, counts, keep=True, config=config)
        except OSError as failure:  # the explanation itself failed (a full disk): the reason still stands
            explained = f"the errors could not be listed ({failure})"
        finally:
            staging.discard()
        raise RunFailed(f"{err}\n{explained}") from None
    except BaseException:
        staging.discard()
        raise
    return record


def _check_kernel() -> None:
    """The scoring path ROUGE_CORE_KERNEL asks for, refused before anything starts
    when it cannot be had (a bad value; "c" without the compiled kernel): the
    graph's first worker to score said it before."""
    info = kernel_info()  # (RougeConfigError for a value other than auto, c, python)
    if info["requested"] == "c" and not info["available"]:
        raise RougeConfigError(f"ROUGE_CORE_KERNEL=c, but the {info['reason']}")


def _remove_spills_after_failure(folder: str) -> None:
    """A failed pipeline's spill files removed, best effort: the failure is what the
    user must see, so a file that will not go is a warning."""
    try:
        remove_spills(folder)
    except Exception as err:  # noqa: BLE001
        log.warning("could not remove the spill files under %s: %s", folder, err)


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
