"""`rouge-pipeline score`: its options, and what it prints."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from pipeline import config as run_config
from pipeline.cli.common import (
    FIELDS_EXAMPLE,
    PYROUGE_DEFAULTS,
    add_conflicting_references,
    add_field_options,
    add_rouge_options,
    input_overrides,
    measure_name,
    print_signature,
    rouge_overrides,
)
from pipeline.coverage import (
    DEFAULT_MAX_REJECTED,
    EXIT_REJECTED,
    document_sets_warning,
    rejected_warning,
    text_warnings,
)
from pipeline.io import files
from pipeline.io.fields import mapping_hint
from pipeline.io.names import clashes, describe_clashes, id_problem
from pipeline.io.tables import csv_text
from pipeline.io.pyrouge_folders import check_patterns, pyrouge_rows
from pipeline.io.text_files import expand_text_globs, is_text_file, line_aligned_rows
from pipeline.progress import Progress
from pipeline.render import tables as views
from pipeline.render.numbers import points, points_value
from pipeline.score import LocalScores, StrictStop, metric_stats, score_files, score_rows, system_rows
from pipeline.summaries import report_block
from rouge_core import RougeConfigError, RougeInputError, names
from rouge_core.report import evaluation_ids


def print_errors(scores: LocalScores, config, file=None) -> None:
    """The counts, then the first bad rows with where they are and why (alike rows
    of a file as one line; a file whose rows miss a field, how to map its fields),
    to stderr as it is when called."""
    file = file or sys.stderr
    print(scores.summary(), file=file)
    for line in scores.errors.lines(lambda source: mapping_hint(source, config)):
        print(line, file=file)


EPILOG = f"""\
examples:
  rouge-pipeline score summaries.jsonl
      ROUGE-1..4, L, W-1.2, S*, SU* with stemming: pyrouge's defaults,
      "{PYROUGE_DEFAULTS}", which most papers report.
  rouge-pipeline score cand.txt ref.txt [ref2.txt ...]
      line-aligned text files (files2rouge, sacreBLEU, rouge-score): line n of every
      file is document n; several reference files give several references.  The
      same as --candidates cand.txt --references ref.txt; '-' reads one from stdin:
      my_model | rouge-pipeline score - ref.txt
  rouge-pipeline score --system-dir sys/ --model-dir models/ \\
      --system-pattern 'text.(\\d+).txt' --model-pattern 'text.[A-Z].#ID#.txt'
      pyrouge's folders: one file per document, one sentence per line, the
      patterns as pyrouge's system_filename_pattern and model_filename_pattern.
  rouge-pipeline score 'outputs/*.parquet' --references 'refs/*.jsonl' --format csv
      split form, as `run` reads it; every system's table as CSV.
  cat summaries.jsonl | rouge-pipeline score - --format report
      the ROUGE-1.5.5 report, byte-identical to the official script's with -a.
  rouge-pipeline score summaries.jsonl --rouge-args "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -d"
      DUC/TAC style ROUGE-2 and ROUGE-SU4, with per-document lines.
  rouge-pipeline score summaries.jsonl --eval-ids index
      number documents 1..N in sorted doc_id order, as pyrouge does: the printed
      averages are bootstrap means whose digits depend on that order.

  rouge-pipeline score cand.txt ref.txt --rouge-types rouge2 --preset rouge_score --score-only
      just the number (x 100), as sacreBLEU's -b: one line per system.

exit status: 0 when every row was scored or few were rejected; 1 for an error
(nothing scored, --strict on a bad row); 2 when refused before any work (a usage
error, a missing file: one line on stderr, nothing on stdout); 3 when more rows
were rejected than --max-rejected allows (default 1% of all rows, or of any one
system's documents): everything that could be scored is still printed, headed
by a warning.  The table's docs column reads scored/had per system.

formats (--format): table (the default on a terminal, and for the rouge_score
and unicode presets): systems as rows, metrics as columns, x 100 with intervals;
report (the rouge155 preset's default otherwise): the ROUGE-1.5.5 text; json: a
list of one object per (system, metric), the measure's score x 100 with its
interval and which average it is ("average": "rouge155", ROUGE-1.5.5's printed
average, also as rouge155_recall ..; or "mean", the mean over documents), the
means mean_recall, mean_precision, mean_f_measure, documents scored and had, and
the signature (sacreBLEU's shape); csv: one row per (system, metric), every
number (recall, precision, f_measure: the means; rouge155_*: the printed averages);
jsonl: one object per (system, doc_id, metric) with recall, precision and
f_measure at full precision.
--sort and --measure name metrics and measures as the field writes them:
rouge2 or ROUGE-2, rougeLsum or ROUGE-L, ROUGE-SU4; F, f, R, P.

while it works, stderr shows each stage (reading, scoring, bootstrap, report)
with its total, rate and time left (--quiet: nothing); stdout gets only the result.

input: JSON Lines (.jsonl, .jsonl.gz), Parquet, or '-' for JSON Lines on stdin,
one object per (system, document):
  {{"system": "lead3", "doc_id": "d1", "candidate": "First sentence.\\nSecond.",
   "references": ["A reference.", ["Another", "as a list of sentences."]]}}
or with one reference a row, "reference": "A reference.".  Other column names:
  rouge-pipeline score preds.jsonl --fields {FIELDS_EXAMPLE} --integer-ids doc_id
      a file of {{"model": ..., "id": 7, "prediction": ..., "reference": ...}} rows.
"""


FORMATS = ["table", "report", "json", "csv", "jsonl"]


def register(commands) -> argparse.ArgumentParser:
    score = commands.add_parser(
        "score",
        help="score files on this machine (no Beam) and print a table or the ROUGE-1.5.5 report",
        description="Score summaries on this machine, without Beam, through the same reader and\n"
        "rules as `run`, and print a table, the ROUGE-1.5.5 report, JSON, CSV or JSON Lines.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument(
        "input", nargs="*", metavar="INPUT",
        help="files or globs: JSONL, .jsonl.gz or Parquet (joined form, or candidates with "
        "--references); '-' reads JSON Lines from stdin; or plain text files CAND REF [REF ...], "
        "one summary per line",
    )
    inputs = score.add_argument_group("line-aligned text files")
    inputs.add_argument("--candidates", metavar="FILE", help="one candidate summary per line ('-': stdin)")
    score.add_argument(
        "--references", nargs="+", action="extend", metavar="FILE",
        help="reference files: globs of split-form files, or with --candidates, line-aligned text files",
    )
    inputs.add_argument("--sentence-sep", metavar="STR", help="split each line into sentences at STR, e.g. '<q>'")
    inputs.add_argument("--system", default="system", help="the system name of text or pyrouge input (default: system)")
    folders = score.add_argument_group("pyrouge's folders (one file per document)")
    folders.add_argument("--system-dir", metavar="DIR", help="the system summaries (pyrouge's system_dir)")
    folders.add_argument("--model-dir", metavar="DIR", help="the reference summaries (pyrouge's model_dir)")
    folders.add_argument("--system-pattern", metavar="REGEX",
                         help=r"a system file's name, its one group the document ID, e.g. 'text.(\d+).txt'")
    folders.add_argument("--model-pattern", metavar="REGEX",
                         help="a reference file's name with #ID# for the ID, e.g. 'text.[A-Z].#ID#.txt'")
    out = score.add_argument_group("output")
    out.add_argument("--format", choices=FORMATS, help="see below")
    out.add_argument("--score-only", "-b", action="store_true",
                     help="print only the scores x 100 of --measure: one line per system, the metrics tab-separated")
    out.add_argument("--measure", type=measure_name, default="f_measure", metavar="{F,R,P}",
                     help="the measure of the table, json and --score-only: F (default), R or P, any case")
    out.add_argument("--sort", metavar="METRIC",
                     help="rank the table's systems by this metric, e.g. rouge2, ROUGE-L, rougeLsum (default: the first)")
    add_field_options(score.add_argument_group("JSONL and Parquet input"))
    score.add_argument("--config", help="a run configuration (TOML, as for run): its [input] fields and "
                       "policies, [rouge] and [statistics]; options given here override it")
    policies = score.add_argument_group("rejected rows")
    add_conflicting_references(policies)
    policies.add_argument(
        "--max-rejected", type=float, metavar="SHARE",
        help=f"exit with status {EXIT_REJECTED} (after printing everything) when more than this share of the "
        f"rows, or of any one system's documents, was rejected (default: run.max_rejected, {DEFAULT_MAX_REJECTED})",
    )
    score.add_argument("--strict", action="store_true", help="stop at the first bad row (exit 1)")
    score.add_argument("--quiet", action="store_true", help="no progress on stderr")
    score.add_argument("--verbose", action="store_true", help="show tracebacks")
    add_rouge_options(score)
    score.set_defaults(rouge_args=None, eval_ids=None, handler=lambda args, extra: score_command(args))
    return score


def score_configuration(args: argparse.Namespace) -> run_config.RunConfig:
    """The run configuration `score` reads: --config's (or the defaults, with
    pyrouge's flags), and the options given on the command line over it."""
    config = run_config.load_config(args.config)
    if config.profiles:
        raise RougeConfigError(f"{config.source} has [profiles]: score takes one setting ([rouge]); use run for profiles")
    if args.config is None:
        config = run_config.with_overrides(config, rouge_args=PYROUGE_DEFAULTS)
    config = run_config.with_overrides(
        config,
        **input_overrides(args),
        **rouge_overrides(args),
        run_max_rejected=args.max_rejected,
    )
    # Check what score uses ([input] needs no candidates here: they come from the command line).
    dataclasses.replace(config, input=dataclasses.replace(config.input, candidates=("-",))).validate()
    return config


def _input_mode(args: argparse.Namespace) -> str:
    """Which reader, from the options, checked before anything is read:
    "tables" (JSONL/Parquet), "text" (line-aligned) or "pyrouge" (folders)."""
    pyrouge = [o for o in ("system_dir", "model_dir", "system_pattern", "model_pattern") if getattr(args, o)]
    if pyrouge:
        if args.input or args.candidates or args.references:
            raise RougeConfigError("pyrouge's folders (--system-dir ...) replace INPUT, --candidates and --references")
        missing = [f"--{o.replace('_', '-')}" for o in ("system_dir", "model_dir", "system_pattern", "model_pattern")
                   if not getattr(args, o)]
        if missing:
            raise RougeConfigError(
                f"pyrouge's folders need all four of --system-dir, --model-dir, --system-pattern and "
                f"--model-pattern; missing {', '.join(missing)}"
            )
        check_patterns(args.system_pattern, args.model_pattern)
        _tables_only(args, "pyrouge's folders")
        return "pyrouge"
    _check_exist([*args.input, *([args.candidates] if args.candidates else []), *(args.references or [])])
    if args.candidates and args.input:
        raise RougeConfigError("give either INPUT files or --candidates with --references, not both")
    if args.candidates:
        if not args.references:
            raise RougeConfigError(f"--candidates needs --references: rouge-pipeline score --candidates "
                                   f"{args.candidates} --references REF.txt")
        _tables_only(args, "text files")
        return "text"
    if not args.input:
        if args.config:  # the config's [input] candidates (checked when they are resolved)
            return "tables"
        raise RougeConfigError("nothing to score: give INPUT files, '-' for stdin, text files CAND REF, "
                               "or pyrouge's --system-dir and --model-dir")
    args.input = expand_text_globs(args.input)  # ('refs/*.txt' quoted: the text files, as a shell gives them)
    text = [path for path in args.input if is_text_file(path)]
    if text:
        if args.references:
            raise RougeConfigError(
                f"{text[0]} is a text file: give the text files as CAND REF [REF ...] "
                f"(rouge-pipeline score {' '.join(args.input + args.references)}), without --references"
            )
        if len(args.input) < 2:
            raise RougeConfigError(
                f"{text[0]} is a text file (one summary per line) and needs its references: "
                f"rouge-pipeline score {text[0]} REF.txt [REF2.txt ...]"
            )
        tables = [path for path in args.input if path != "-" and not is_text_file(path)]
        if tables:
            if not files.is_url(tables[0]) and not os.path.lexists(tables[0]) and not files.match(tables[0]):
                raise RougeConfigError(f"no file matches {tables[0]!r}")
            raise RougeConfigError(f"mixed inputs: {text[0]} is a text file but {tables[0]} is JSONL or Parquet")
        _tables_only(args, "text files")
        return "text"
    if args.sentence_sep:
        raise RougeConfigError("--sentence-sep applies to text files; JSONL input gives sentences as lists")
    return "tables"


def _tables_only(args: argparse.Namespace, what: str) -> None:
    """--fields and --integer-ids name the columns of JSONL and Parquet rows, which
    `what` has none of."""
    for option in ("--fields", "--integer-ids"):
        if getattr(args, option[2:].replace("-", "_")):
            raise RougeConfigError(f"{option} names the columns of JSONL and Parquet input; {what} have none")


def _check_exist(paths: list[str]) -> None:
    """A local file named (not a glob, not '-' for stdin) that does not exist is
    named as missing, before its name says anything about its format."""
    for path in paths:
        if path != "-" and not files.is_url(path) and not any(c in path for c in "*?[") and not os.path.lexists(path):
            raise RougeConfigError(f"{path}: no such file")


def _checked_sort(args: argparse.Namespace, settings) -> str | None:
    if args.sort is None:
        return None
    try:  # the project's one grammar of metric names: rouge2, ROUGE-2, rougeLsum, ROUGE-L, ROUGE-su4 ...
        return names.find(args.sort, settings.metric_tags())
    except RougeConfigError as err:
        raise RougeConfigError(f"--sort {args.sort}: {err}") from None


def score_command(args: argparse.Namespace) -> int:
    # Every option is checked before anything is read (a usage error is exit 2).
    run = score_configuration(args)
    settings = run.settings()
    mode = _input_mode(args)
    sort = _checked_sort(args, settings)
    problem = id_problem(args.system)
    if problem:  # (the name of text or pyrouge input, in every table)
        raise RougeConfigError(f"--system {args.system!r}: a system name {problem}")
    if args.score_only and args.format:
        raise RougeConfigError("--score-only prints only the scores; it takes no --format")
    # Piped, rouge155 prints the script's report; another preset's number is the mean with
    # its seeded interval, which the report (ROUGE-1.5.5's bootstrap averages) is not.
    piped = "report" if settings.preset == "rouge155" else "table"
    form = "score-only" if args.score_only else args.format or ("table" if sys.stdout.isatty() else piped)
    inputs = tuple(args.input) or (() if args.candidates or mode == "pyrouge" else run.input.candidates)
    config = dataclasses.replace(run.input, candidates=inputs, references=tuple(args.references or run.input.references))
    if mode != "tables":  # the reader makes the rows, ids as text
        config = dataclasses.replace(config, integer_ids=())
    keep = config.conflicting_references == "keep"
    if "-" in (*inputs, args.candidates, *(args.references or ())):
        try:  # '-' on a device or a terminal is refused now, before anything is read
            files.stdin()
        except OSError as err:
            raise RougeInputError(str(err)) from None
    progress = Progress(quiet=args.quiet)
    try:
        if mode == "pyrouge":
            rows = pyrouge_rows(args.system_dir, args.model_dir, args.system_pattern, args.model_pattern,
                                args.system, config)
            scores = score_rows(rows, [], config, settings, keep_conflicts=keep, strict=args.strict, progress=progress)
        elif mode == "text":
            candidates, references = (args.candidates, args.references) if args.candidates else (args.input[0], args.input[1:])
            rows = line_aligned_rows(candidates, references, args.system, args.sentence_sep, config)
            scores = score_rows(rows, [], config, settings, keep_conflicts=keep, strict=args.strict, progress=progress)
        else:
            scores = score_files(list(inputs), list(config.references), config, settings, keep_conflicts=keep,
                                 strict=args.strict, progress=progress)
    except StrictStop as err:
        print(f"rouge-pipeline: error: strict mode: {err}", file=sys.stderr)
        return 1
    if scores.error_count:
        print_errors(scores, config)
    if not scores.scored:
        print("rouge-pipeline: error: nothing was scored", file=sys.stderr)
        return 1
    groups = clashes(scores.results)
    if groups:  # two systems that print alike would be two rows a reader cannot tell apart
        raise RougeInputError(describe_clashes("systems", groups))
    ids = evaluation_ids((d for docs in scores.results.values() for d in docs), run.rouge.eval_ids)
    facts = run.facts(scores.references())  # what the run adds to the signature
    coverage = scores.coverage()
    for line in text_warnings(scores.texts.to_dict()) + document_sets_warning(
        coverage.different_document_sets(), coverage.documents
    ):
        print(line, file=sys.stderr)
    problems = coverage.problems(run.run.max_rejected)
    by_reason = dict(scores.by_reason)
    warning = rejected_warning(problems, run.run.max_rejected, "The first rejected rows are listed on stderr.",
                               by_reason) if problems else ""
    if warning:  # the table a person reads starts with it; machine formats keep stdout clean
        print(warning + ("\n" if form == "table" else ""), file=sys.stdout if form == "table" else sys.stderr)
    if form == "jsonl":
        for system in sorted(scores.results):
            for doc_id, values in sorted(scores.results[system].items()):
                for tag, s in metric_stats(values, settings.metric_tags()).items():
                    record = {"system": system, "doc_id": doc_id, "metric": tag, "recall": s.recall,
                              "precision": s.precision, "f_measure": s.f_measure}
                    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    elif form == "report":
        if settings.preset != "rouge155":
            print(f"note: the ROUGE-1.5.5 report prints ROUGE-1.5.5's bootstrap averages of the {settings.preset} "
                  "scores; the preset's own number is the mean F with its seeded interval (--format table, csv "
                  "or json)", file=sys.stderr)
        profile = run_config.Profile(run_config.DEFAULT_PROFILE, (settings,))
        with progress.stage("bootstrap", len(scores.results), "systems") as stage:
            for system in sorted(scores.results):  # the report is the systems' blocks in name order
                documents = {ids[d]: values for d, values in scores.results[system].items()}
                _, lines = report_block(system, documents, profile)  # (the pipeline's rouge155.txt block)
                sys.stdout.write("".join(line + "\n" for line in lines))
                stage.update(1)
    else:
        rows = []
        had = {s: coverage.had(s) for s in coverage.systems()}
        with progress.stage("bootstrap" if settings.preset == "rouge155" else "averaging", len(scores.results),
                            "systems") as stage:
            for system in sorted(scores.results):
                rows += system_rows({system: scores.results[system]}, settings, ids, run.statistics, had, facts)
                stage.update(1)
        measure = args.measure
        if form == "csv":
            sys.stdout.write(csv_text(rows))
        elif form == "json":
            sys.stdout.write(json_text(rows, measure))
        elif form == "score-only":
            sys.stdout.write(score_only_text(rows, settings, measure))
        else:
            sys.stdout.write(views.text(rows, settings, measure, sort))
    if form != "score-only":
        print_signature(settings, facts=facts)
    return EXIT_REJECTED if problems else 0


def json_text(rows: list[dict], measure: str) -> str:
    """sacreBLEU's JSON shape, one object per (system, metric): the name, the score
    x 100 of `measure` with its interval (the table's digits, `numbers.points`) and
    `average` saying which average it is ("rouge155": ROUGE-1.5.5's printed average
    and bootstrap interval, as the script prints them in `rouge155_recall` ..;
    "mean": the mean over documents with the seeded Poisson bootstrap interval),
    the means over documents (`mean_recall`, `mean_precision`, `mean_f_measure`),
    the documents scored and had, and the signature."""
    objects = []
    for row in rows:
        value, low, high = views.measure_value(row, measure)
        printed = row.get(f"rouge155_{measure}") is not None
        objects.append({
            "system": row["system"],
            "name": row["metric"],
            "measure": measure,
            "score": points_value(value),
            "low": points_value(low),
            "high": points_value(high),
            "average": "rouge155" if printed else "mean",
            **({f"rouge155_{m}": row[f"rouge155_{m}"] for m in views.MEASURES.values()} if printed else {}),
            **{f"mean_{m}": row[m] for m in views.MEASURES.values()},
            "documents": row["documents"],
            "documents_had": row.get("documents_had", row["documents"]),
            "signature": row["signature"],
        })
    return json.dumps(objects, indent=1, ensure_ascii=False) + "\n"


def score_only_text(rows: list[dict], settings, measure: str) -> str:
    """One line per system (name order): its metrics' scores x 100, tab-separated, in
    the signature's metric order, as sacreBLEU's --score-only prints one number."""
    by_system: dict = {}
    for row in rows:
        by_system.setdefault(row["system"], {})[row["metric"]] = views.measure_value(row, measure)[0]
    tags = settings.metric_tags()
    return "".join(
        "\t".join(points(scores[t]) for t in tags if t in scores) + "\n" for _, scores in sorted(by_system.items())
    )
