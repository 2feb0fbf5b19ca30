"""`run --reuse PREVIOUS`: what a run takes from a previous run's results instead of
computing it again, proven equal, never trusted by name or path.

Two ways, both exact (every table byte-identical to a full run on the same inputs,
tests/pipeline/test_reuse.py):

* **Rows** (`BucketPrevious`, in the join).  A row whose (system, doc_id)
  the previous run scored with the same candidate and references (the digests its
  per-document table stores, pipeline.digests) and the same settings is not scored
  again: its per-document values are the previous run's, bit for bit, and every
  table is computed from them as from fresh ones.  Changed references change the
  references' digest of every row of the document, so each is scored again.
* **Systems carried whole.**  A system whose every input file is unchanged (the
  size and SHA-256 of a file the previous run read, a file that held only systems
  carried with it, none of them with an error row) is not read at all: its
  per-document files, its rows of system_scores and its blocks of the ROUGE-1.5.5
  report are copied from the previous run (each depends on its rows alone); the
  significance table is computed again from the per-document tables (a changed
  system changes its pairs with every other).  What could make a carried system's
  results differ from a full run's is checked while the run works: a row of it in
  a file that is read (a duplicate), or, for a document it scored, references
  that now resolve differently (a conflict, or a changed reference row).  Either,
  and the run is done again carrying nothing ("carry_violations", REUSE_COUNTS).

Nothing is reused from a previous run that is not complete and verified
(pipeline.io.result_folder.ResultFolder: its manifest's size and SHA-256 of
every file read), or whose
settings differ (`settings_changes`, through rouge_core.signature); the reason is
one line, in the output and in run.json.  Carrying needs more (`carry_blockers`):
the same input, statistics and output settings, evaluation ids that are the
doc_ids, no human pseudo-system, and in split form reference files unchanged.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pipeline.config import RunConfig, table_settings
from pipeline.io import files
from pipeline.io.manifest import digest
from pipeline.io.result_folder import ResultFolder, ResultFolderError
from pipeline.io.tables import (
    SIGNATURE_BYTES,
    SYSTEM_COLUMNS,
    document_batches,
    document_file_stem,
    missing_documents,
)
from rouge_core.errors import RougeConfigError
from rouge_core.signature import RUN_FIELDS, Signature
from rouge_core.significance import EXACT_MAX_DOCUMENTS

# The graph's tagged output of what a reusing run counts: (name, value) pairs, summed
# per name into run.json's counts (pipeline.io.tables.write_counts): "rows_reused",
# "carried_scored" (scored documents that carried systems scored too),
# "carried_documents", "carry_violations" (what broke the carrying) and "refused"
# (the message of a previous file that failed its check while read).
REUSE_COUNTS = "reuse"
# MetricStats fields in a row's values, as the per-document table names them
VALUE_COLUMNS = ("reference_total", "candidate_total", "hits", "recall", "precision", "f_measure")


@dataclass
class ReusePlan:
    """What a run takes from `folder`: `refused` says in one line why nothing is
    (then everything else is empty); `carried` the systems taken whole, `skipped`
    the input files not read for them ({path: the file's record, as run.json lists
    inputs}); `systems` the previous systems whose rows the join offers;
    `not_carried` why no system is carried, when none is."""

    source: str
    folder: Optional[ResultFolder] = None
    refused: Optional[str] = None
    carried: tuple = ()
    skipped: dict = field(default_factory=dict)
    systems: tuple = ()
    not_carried: Optional[str] = None
    tags: dict = field(default_factory=dict)  # profile -> metric tags (this run's, the previous run's too)
    # the carried systems' rows of system_scores, (profile, system, metric, row), and
    # where their blocks lie in each report file, {file: {system: (offset, length)}}
    system_rows: list = field(default_factory=list)
    report_parts: dict = field(default_factory=dict)
    # the previous run's significance table holds this run's pairs of carried
    # systems (the same settings), over `previous_documents` documents
    significance_copied: bool = False
    previous_documents: int = 0

    def references_per_document(self, scored: Optional[tuple]) -> Optional[tuple]:
        """The fewest and the most references of a document of the run (its
        signature's nrefs), from the documents scored (`scored`, None: none) and what
        the carried systems' documents had: when nothing was scored, the previous
        run's (the run then checks that every previous document was carried:
        `retried_plan`); else the scored documents' (it checks that the carried
        systems scored no other document, or that these are the previous run's)."""
        previous = (self.folder.record.get("counts") or {}).get("references_per_document")
        return scored if scored is not None else (tuple(previous) if previous else None)

    def pairs_copied(self, documents: int) -> bool:
        """Whether the pairs of two carried systems are copied, on a run of
        `documents` documents: their sums are the previous run's, and so are their
        tests when the exact test keeps its documents (at most EXACT_MAX_DOCUMENTS
        of them) in both runs or in neither."""
        return self.significance_copied and bool(self.carried) and (
            (documents > EXACT_MAX_DOCUMENTS) == (self.previous_documents > EXACT_MAX_DOCUMENTS))

    @property
    def reuses(self) -> bool:
        return self.refused is None

    @property
    def previous_run(self) -> str:
        return self.folder.run_id if self.folder is not None else ""

    def without_carrying(self, why: str) -> "ReusePlan":
        """The same plan carrying no system (rows are still reused)."""
        every = tuple(sorted(set(self.systems) | set(self.carried)))
        return ReusePlan(self.source, self.folder, self.refused, (), {}, every, why, self.tags)

    def document_rows(self, system: str, profile: str) -> int:
        """The rows of a (profile, system)'s per-document files, as the previous run
        recorded its documents: a file of more is refused unread (a few KB can
        hold a billion run-length encoded rows)."""
        documents = self.folder.record["counts"].get("documents_by_system", {}).get(system, 0)  # (`record_problem`)
        return documents * len(self.tags[profile])

    def document_files(self, system: str) -> dict[str, list[str]]:
        """{profile: the system's per-document files in the previous run}, verified
        names of its manifest (or of the folder)."""
        out = {}
        for profile in self.tags:
            stem = f"per_document/{document_file_stem(profile, system)}-"
            out[profile] = [name for name in self.folder.names("per_document/*")
                            if name.startswith(stem) and name.endswith(".parquet")]
        return out

    def carried_files(self) -> dict:
        """{(profile, system, name): its manifest Entry} of the carried systems'
        per-document files, in every format the previous run wrote them (its output
        settings are this run's): what CopyCarried copies, checked against these
        entries as it copies them (so the run's manifest takes them:
        Manifest.of_folder's `known`)."""
        listed = self.folder.names("per_document/*")
        out = {}
        for system in self.carried:
            for profile, names in self.document_files(system).items():
                stems = {name.rsplit(".", 1)[0] for name in names}
                out.update({(profile, system, name): self.folder.manifest.files[name]
                            for name in listed if name.rsplit(".", 1)[0] in stems})
        return out

    def record(self) -> dict:
        """run.json's "reuse" before the counts are known (pipeline.beam.run adds them)."""
        out = {"from": self.source, "run_id": self.previous_run or None, "refused": self.refused}
        if self.reuses:
            previous = self.folder.record
            out.update(started=previous.get("started"), systems_carried=list(self.carried),
                       files_not_read=sorted(self.skipped), not_carried=self.not_carried)
        return out


def plan_reuse(source: str, config: RunConfig, inputs: dict) -> ReusePlan:
    """The plan of a run of `config` on `inputs` (pipeline.beam.run.resolve_inputs)
    reusing the result folder `source`."""
    try:
        folder = ResultFolder.open(source)
    except ResultFolderError as err:
        return ReusePlan(source, refused=str(err))
    previous = folder.record
    problem = record_problem(previous)
    if problem:
        return ReusePlan(source, folder, refused=f"{folder.location('run.json')}: {problem}")
    changes = settings_changes(previous, config)
    if changes:
        return ReusePlan(source, folder, refused="other settings: " + "; ".join(changes))
    tags = {p.name: p.tags for p in config.profile_list()}
    systems = sorted((previous.get("counts") or {}).get("documents_by_system") or {})
    human = config.human.name if config.human.enabled else None
    plan = ReusePlan(source, folder, systems=tuple(s for s in systems if s != human), tags=tags)
    try:
        for system in plan.systems:  # every (profile, system) the record names has its files
            for profile, names in plan.document_files(system).items():
                if not names:
                    raise ResultFolderError(f"{folder.path}: no per-document file of system {system!r} (profile {profile})")
    except ResultFolderError as err:
        return ReusePlan(source, folder, refused=str(err))
    blocker = carry_blockers(previous, config, inputs)
    if blocker:
        return plan.without_carrying(blocker)
    carried, skipped, why = carried_systems(previous, config, inputs["candidates"])
    if not carried:
        return plan.without_carrying(why)
    try:
        plan.system_rows, plan.report_parts = carried_tables(folder, carried, tags)
        if config.significance.enabled and previous.get("significance_signature") == config.significance.signature():
            with folder.verified("significance.parquet"):  # (verified here, streamed; read where the pairs are copied)
                pass
            plan.significance_copied = True
            plan.previous_documents = int((previous.get("counts") or {}).get("documents") or 0)
    except ResultFolderError as err:
        return ReusePlan(source, folder, refused=str(err))
    plan.carried = tuple(sorted(carried))
    plan.skipped = skipped
    plan.systems = tuple(s for s in plan.systems if s not in carried)
    return plan


def _count(value) -> bool:
    return type(value) is int and 0 <= value < 1 << 53


def _counts_of(value) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and _count(n) for k, n in value.items())


def _file_record(value) -> bool:
    """An input file's record as run.json lists it (pipeline.beam.run.fingerprints): its
    path and, if it was read, its bytes, SHA-256, rows, error rows, rows per system."""
    return (isinstance(value, dict) and isinstance(value.get("path"), str)
            and all(_count(value[key]) for key in ("bytes", "rows", "errors") if key in value)
            and isinstance(value.get("sha256", ""), str) and ("systems" not in value or _counts_of(value["systems"])))


def record_problem(record: dict) -> Optional[str]:
    """What makes a previous run.json unusable (a field `--reuse` reads that is not
    what this tool writes there: a folder resealed after its run.json was edited, or
    of another version), in a phrase, or None.  Checked before anything is taken
    from it, so that no value of it fails the run later."""
    counts = record.get("counts")
    if not isinstance(counts, dict):
        return "its counts are not an object"
    if not _count(counts.get("documents")):
        return "counts.documents is not a count"
    for key in ("documents_by_system", "errors_by_system"):
        if not _counts_of(counts.get(key, {})):
            return f"counts.{key} is not a count per system"
    checks = counts.get("text_checks", {})
    if not isinstance(checks, dict) or not all(
            isinstance(kinds, dict) and all(isinstance(found, dict) and _count(found.get("texts"))
                                            and isinstance(found.get("example"), str) for found in kinds.values())
            for kinds in checks.values()):
        return "counts.text_checks is not {owner: {kind: {texts, example}}}"
    nrefs = counts.get("references_per_document")
    if nrefs not in (None, []) and not (isinstance(nrefs, list) and len(nrefs) == 2 and all(map(_count, nrefs))):
        return "counts.references_per_document is not [fewest, most]"
    if not isinstance(record.get("config"), dict):
        return "its config is not an object"
    inputs = record.get("inputs", {})  # (none recorded: no system is carried, rows are reused)
    if not isinstance(inputs, dict) or not all(
            isinstance(inputs.get(kind, []), list) and all(map(_file_record, inputs.get(kind, [])))
            for kind in ("candidates", "references")):
        return "its inputs are not lists of file records (path, bytes, sha256, rows, errors, systems)"
    parts = record.get("rouge155_parts", {})
    if not isinstance(parts, dict) or not all(
            isinstance(name, str) and isinstance(listed, list) and all(
                isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and _count(item[1])
                and _count(item[2]) for item in listed)
            for name, listed in parts.items()):
        return "its rouge155_parts are not [system, offset, length] lists"
    return None


def carried_tables(folder: ResultFolder, carried: set, tags: dict) -> tuple[list, dict]:
    """The carried systems' rows of the previous system_scores.parquet, as
    (profile, system, metric, row), and their blocks' places in each ROUGE-1.5.5
    report file, {file: {system: (offset, length)}}: both files verified here
    (small), the blocks copied from them later (AggregatePerSystem).  The table must
    have this version's columns and one row of each carried system for each metric
    of each profile (`tags`), as a full run would write: else no row of it is taken."""
    rows = folder.table("system_scores.parquet", max_cell_bytes=SIGNATURE_BYTES, written_as=SYSTEM_COLUMNS).to_pylist()
    mine = [(r["profile"], r["system"], r["metric"], r) for r in rows if r["system"] in carried]
    wanted = {(profile, system, metric) for profile, metrics in tags.items() for metric in metrics for system in carried}
    found = [row[:3] for row in mine]
    if len(found) != len(wanted) or set(found) != wanted:
        missing = sorted(wanted - set(found))
        what = (f"no row of system {missing[0][1]!r}, {missing[0][2]} (profile {missing[0][0]})" if missing
                else "a carried system's row more than once, or of a metric this run does not score")
        raise ResultFolderError(f"{folder.location('system_scores.parquet')}: {what}")
    parts = folder.record.get("rouge155_parts")
    if not isinstance(parts, dict):
        raise ResultFolderError(f"{folder.path}: run.json does not say where each system's report block lies")
    places = {}
    for name, listed in parts.items():  # (their shape checked: `record_problem`)
        with folder.verified(name) as fh:  # (verified whole, streamed: a block is copied from it)
            size = fh.seek(0, 2)
        places[name] = {system: (offset, length) for system, offset, length in listed if system in carried}
        if any(offset + length > size for offset, length in places[name].values()):
            raise ResultFolderError(f"{folder.location(name)}: run.json places a system's block past its end")
    return mine, places


def reuse_line(plan: ReusePlan) -> str:
    """What a run takes from its previous run, in one line (said before it works)."""
    if not plan.reuses:
        reason = plan.refused or ""
        for named in (plan.source, plan.folder.path if plan.folder is not None else None):
            if named and reason.startswith(f"{named}: "):  # (a folder's error names it: not twice)
                reason = reason[len(named) + 2:]
            elif named and reason.startswith(f"{named.rstrip('/')}/"):  # (or one of its files: by its name)
                reason = reason[len(named.rstrip("/")) + 1:]
        return f"reusing nothing from {plan.source}: {reason}"
    line = f"reusing run {plan.previous_run} ({plan.source}): rows scored with the same texts and settings"
    if plan.carried:
        return line + (f"; {len(plan.carried)} system(s) carried whole, {len(plan.skipped)} unchanged input "
                       f"file(s) not read")
    return line + (f"; no system carried whole ({plan.not_carried})" if plan.not_carried else "")


def retried_plan(plan: ReusePlan, counts: dict, read: list[dict]) -> Optional[ReusePlan]:
    """The plan to run again with, when what the previous run offered could not be used
    as planned (None: the run stands): rows of a carried system in a file that was
    read (`read`: the read files' records, with the rows of each system; nothing
    carried), a previous file that failed its check while the run read it (nothing
    reused; a carried file's check can fail on what the run wrote of such a system,
    hence the order), or documents a carried system scored that now have other
    references (nothing carried)."""
    reuse = counts.get("reuse") or {}
    again = sorted({s for f in read for s in f.get("systems") or {} if s in set(plan.carried)})
    if again:  # (first: a carried file's check may have failed on what this run wrote of the system)
        return plan.without_carrying(f"rows of {', '.join(again[:3])}{' ...' if len(again) > 3 else ''} are also in "
                                     "files read again (they would be duplicates)")
    if reuse.get("refused"):
        return ReusePlan(plan.source, plan.folder, refused=reuse["refused"][0])
    nrefs = references_known(plan, counts)
    if reuse.get("carry_violations"):
        return plan.without_carrying(f"{reuse['carry_violations']:,} row(s) of documents the systems planned to be "
                                     "carried whole scored have other references now")
    if not nrefs:
        return plan.without_carrying("the references per document (the signature's nrefs) of documents only the "
                                     "systems carried whole scored are not known to be the scored documents'")
    return None


def references_known(plan: ReusePlan, counts: dict) -> bool:
    """Whether the run's references per document (the graph's counts, before the
    carried systems' are added: `ReusePlan.references_per_document`) are a full
    run's: no system carried; or nothing scored (the previous run's range) and every
    previous document carried; or something scored and no document that only
    carried systems scored, or the scored documents' range is the previous run's
    (the carried documents, unchanged, lie in it)."""
    if not plan.carried:
        return True
    reuse = counts.get("reuse") or {}
    previous = plan.folder.record.get("counts") or {}
    same = list(counts.get("references_per_document") or []) == list(previous.get("references_per_document") or [])
    if not counts.get("scored"):
        return reuse.get("carried_documents", 0) == previous.get("documents")
    return same or reuse.get("carried_documents", 0) == reuse.get("carried_scored", 0)


def add_carried_counts(counts: dict, plan: ReusePlan) -> None:
    """The graph's counts completed with what the carried systems' rows (not read, not
    scored) count in a full run: rows read, scored documents per system, documents,
    their text checks; "reuse" moved into the run record (`reuse_record`)."""
    reuse = counts.setdefault("reuse", {})
    if not plan.carried:
        return
    previous = plan.folder.record.get("counts") or {}
    counts["rows_read"] += sum(int(f.get("rows") or 0) for f in plan.skipped.values())
    by_system = dict(counts["documents_by_system"])
    for system in plan.carried:
        by_system[system] = int((previous.get("documents_by_system") or {}).get(system, 0))
    counts["documents_by_system"] = dict(sorted(by_system.items()))
    counts["scored"] += sum(by_system[s] for s in plan.carried)
    counts["documents"] += reuse.get("carried_documents", 0) - reuse.get("carried_scored", 0)
    counts["systems_missing_documents"] = missing_documents(counts["documents_by_system"], counts["documents"])
    checks = dict(counts.get("text_checks") or {})
    for system in plan.carried:
        if system in (previous.get("text_checks") or {}):
            checks[system] = previous["text_checks"][system]
    counts["text_checks"] = dict(sorted(checks.items()))


def with_carried_counts(counts: dict, plan: ReusePlan) -> dict:
    """A copy of the graph's `counts` completed as `add_carried_counts` does: what the
    per-system table (documents had, rejected share) counts in the graph."""
    out = copy.deepcopy(counts)
    add_carried_counts(out, plan)
    return out


def reuse_record(plan: ReusePlan, counts: dict) -> dict:
    """run.json's "reuse": from which run, how many rows and systems were reused, and
    what was computed again."""
    out = plan.record()
    reuse = counts.pop("reuse", {})
    if not plan.reuses:
        return out
    carried_rows = sum(counts["documents_by_system"].get(s, 0) for s in plan.carried)
    reused = reuse.get("rows_reused", 0)
    out.update(
        rows_carried=carried_rows,
        rows_reused=reused,
        rows_scored=counts["scored"] - carried_rows - reused,
        systems_recomputed=sorted(s for s in counts["documents_by_system"] if s not in plan.carried),
        copied=(["per-document files, system_scores rows and ROUGE-1.5.5 report blocks of the carried systems"]
                if plan.carried else []),
        recomputed=[
            "system_scores and ROUGE-1.5.5 report of the other systems, from reused and newly scored rows",
            "significance: every pair, " + ("from the per-document files" if plan.carried else "from the scored rows"),
        ],
    )
    return out


# ------------------------------------------------------------------ settings


def settings_changes(previous: dict, config: RunConfig) -> list[str]:
    """The scoring settings of a previous run's record that differ from `config`'s,
    one phrase each ("n: 2 -> 4", "profiles: default -> case, stem"), through
    `Signature.differences`; the fields a run adds to its settings' (RUN_FIELDS:
    evaluation ids, references per document, bootstrap) are not compared: a row's
    values do not depend on them (its references are checked row by row, by their
    digest; what carrying needs of them, `carry_blockers`).  Empty when every profile scores as before."""
    profiles = config.profile_list()
    before = previous.get("profiles")
    if not isinstance(before, list) or not all(isinstance(p, dict) for p in before):
        return ["the previous run.json names no profiles"]
    old_names = [str(p.get("name")) for p in before]
    new_names = [p.name for p in profiles]
    if old_names != new_names:
        return [f"profiles: {', '.join(old_names)} -> {', '.join(new_names)}"]
    out = []
    for old, new in zip(before, profiles):
        where = "" if len(profiles) == 1 else f"{new.name} "
        signatures = old.get("signatures") or []
        if len(signatures) != len(new.settings):
            out.append(f"{where}settings: {len(signatures)} -> {len(new.settings)}")
            continue
        before = len(out)
        for k, (text, settings) in enumerate(zip(signatures, new.settings), 1):
            try:
                differences = Signature.parse(str(text), strict=False).differences(Signature.parse(settings.signature()))
            except RougeConfigError as err:
                out.append(f"{where}signature: {err}")
                continue
            label = where + (f"#{k} " if len(new.settings) > 1 else "")
            out += [f"{label}{key}: {a if a is not None else '(absent)'} -> {b if b is not None else '(absent)'}"
                    for key, (a, b) in differences.items() if key not in RUN_FIELDS]
        if len(out) == before and old.get("metrics") != new.tags:
            out.append(f"{where}metrics: {', '.join(map(str, old.get('metrics') or []))} -> {', '.join(new.tags)}")
    return out


def carry_blockers(previous: dict, config: RunConfig, inputs: dict) -> Optional[str]:
    """Why no system can be carried whole (its tables copied) from this previous run,
    or None.  Rows are reused whatever this says."""
    old = previous.get("config") or {}
    now = config.to_dict()
    if config.human.enabled:
        return "the human pseudo-system is scored from every document's references"
    if config.rouge.eval_ids != "doc_id":
        return "evaluation ids numbered over every document (eval_ids = index) change when documents change"
    for section in ("statistics", "output", "rouge", "human", "input"):
        # the input files are checked row by row (digests), and the references below
        skip = {"candidates", "references"} if section == "input" else set()
        recorded = old.get(section) or {}
        if not isinstance(recorded, dict):
            return f"the previous run.json's [{section}] is not a table of settings"
        wanted = {k: _plain(v) for k, v in table_settings(section, now[section]).items() if k not in skip}
        had = {k: _plain(v) for k, v in table_settings(section, recorded).items() if k not in skip}
        if wanted != had:
            keys = sorted(k for k in wanted.keys() | had.keys() if wanted.get(k) != had.get(k))
            return f"[{section}] differs ({', '.join(keys)})"
    if inputs["references"]:
        before = sorted((f.get("sha256"), f.get("bytes")) for f in (previous.get("inputs") or {}).get("references") or [])
        now_files = _fingerprints(inputs["references"], {b for _, b in before})
        if sorted((f.get("sha256"), f.get("bytes")) for f in now_files.values()) != before:
            return "the reference files changed"
    return None


def _plain(value):
    """Config values as JSON gives them back (tuples as lists)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# ------------------------------------------------------------------ systems carried whole


def carried_systems(previous: dict, config: RunConfig, candidates: list[str]) -> tuple[set, dict, Optional[str]]:
    """(the systems carried whole, {path of a file not read: its record}, why none is).

    A previous candidate file and a current one are the same file when their size
    and SHA-256 agree (and their path too when input.system_from_path names the
    systems after it); a file counts once (two current files with one content are
    both read: the full run would see every row twice).  The files and the systems
    they hold form groups (a file with several systems ties them together); a
    group is carried when every file of it is unchanged and error-free and no
    system of it had an error row."""
    before = (previous.get("inputs") or {}).get("candidates") or []
    if not before or not all(isinstance(f, dict) and isinstance(f.get("systems"), dict) for f in before):
        return set(), {}, "the previous run did not record which systems each input file held"
    errors_by_system = (previous.get("counts") or {}).get("errors_by_system") or {}
    by_content: dict = {}
    for f in before:
        by_content.setdefault((f.get("sha256"), f.get("bytes")), []).append(f)
    now = _fingerprints(candidates, {f.get("bytes") for f in before})
    matched: dict = {}  # current path -> previous record
    seen: dict = {}
    for path, fingerprint in now.items():
        seen.setdefault((fingerprint["sha256"], fingerprint["bytes"]), []).append(path)
    for content, paths in seen.items():
        twins = by_content.get(content, [])
        if len(paths) == 1 and len(twins) == 1 and (not config.input.system_from_path or twins[0]["path"] == paths[0]):
            matched[paths[0]] = twins[0]
    files_of: dict = {}  # system -> previous files holding it
    for f in before:
        for system in f["systems"]:
            files_of.setdefault(system, []).append(f)
    unchanged = {id(f) for f in matched.values()}
    carried: set = set()
    for system, held in files_of.items():
        group, todo = set(), [system]  # the systems tied to this one by shared files
        while todo:
            s = todo.pop()
            if s not in group:
                group.add(s)
                todo += [t for f in files_of[s] for t in f["systems"]]
        files = [f for s in group for f in files_of[s]]
        if all(id(f) in unchanged and _error_free(f) for f in files) \
                and not any(errors_by_system.get(s) for s in group):
            carried |= group
    skipped = {path: dict(record, path=path) for path, record in matched.items()  # (a file of error rows alone is read)
               if set(record["systems"]) <= carried and _error_free(record)}
    if not carried:
        return set(), {}, "no system's input files are unchanged" if not matched else "no unchanged file holds only unchanged, error-free systems"
    return carried, skipped, None


def _error_free(record: dict) -> bool:
    """Whether a previous input file's every row was scored (its error rows are
    reported by reading it again)."""
    return not record.get("errors") and record.get("rows") == sum(record["systems"].values())


def _fingerprints(paths: list[str], sizes: set) -> dict[str, dict]:
    """{path: {"bytes", "sha256"}} of the files among `paths` whose size is one of
    `sizes` (only those can be unchanged; the others are not read here)."""
    out = {}
    for path in paths:
        try:
            size = files.match(path).get(path)
        except (OSError, ValueError):
            continue
        if size is None or size not in sizes:
            continue
        out[path] = {"bytes": size, "sha256": digest(path)[1]}
    return out


# ------------------------------------------------------------------ reading previous rows


def document_file_parts(folder: ResultFolder, name: str, tags: list[str], most_rows: Optional[int] = None):
    """One previous per-document file of one (profile, system), verified (its bytes
    against the manifest), in parts of whole documents (`document_batches`): per part
    (doc_ids, digests as (documents, 2) int64, values as (documents, metrics x 6)
    float64 in `tags` order: each document's `values` bytes, row by row).  Anything
    but the rows this tool writes (every metric of the profile, in order, for each
    document, documents sorted and distinct, one digest per document; at most
    `most_rows` rows) is refused."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    metrics, last = len(tags), None
    columns = ["doc_id", "metric", *VALUE_COLUMNS, "candidate_digest", "references_digest"]
    try:
        with folder.verified(name) as fh:  # (checked whole first; a store's file: a local copy)
            for table in document_batches(fh, metrics, columns, most_rows=most_rows):
                rows = table.num_rows
                if rows % metrics or table.column("doc_id").null_count or table.column("metric").null_count:
                    raise ResultFolderError(f"{folder.path}: {name} does not hold every metric of each document")
                documents = rows // metrics
                encoded = pc.dictionary_encode(table.column("metric")).combine_chunks()
                if documents and (encoded.dictionary.to_pylist() != list(tags)
                                  or not np.array_equal(encoded.indices.to_numpy(), np.tile(np.arange(metrics), documents))):
                    raise ResultFolderError(f"{folder.path}: {name} does not hold the metrics {tags} in order")
                ids = table.column("doc_id").take(pa.array(np.arange(0, rows, metrics))).combine_chunks()
                if documents > 1 and not pc.all(pc.less(ids.slice(0, documents - 1), ids.slice(1))).as_py():
                    raise ResultFolderError(f"{folder.path}: {name} does not hold its documents once each, in order")
                ids = ids.to_pylist()
                if last is not None and ids and ids[0] <= last:
                    raise ResultFolderError(f"{folder.path}: {name} does not hold its documents once each, in order")
                last = ids[-1] if ids else last
                digests = np.stack([table.column(c).to_numpy() for c in ("candidate_digest", "references_digest")],
                                   axis=1).reshape(documents, metrics, 2)
                if (digests != digests[:, :1]).any():
                    raise ResultFolderError(f"{folder.path}: {name} gives a document's metrics different digests")
                values = np.stack([table.column(c).to_numpy().astype(np.float64) for c in VALUE_COLUMNS], axis=1)
                yield ids, np.ascontiguousarray(digests[:, 0]).astype("<i8"), np.ascontiguousarray(values.reshape(documents, -1))
    except ResultFolderError:
        raise
    except Exception as err:  # noqa: BLE001 (a file that is no per-document table of this tool)
        raise ResultFolderError(f"{folder.path}: {name} is not a per-document table of this version ({err})") from err


def previous_rows(plan: ReusePlan, system: str):
    """A previous system's rows, for the join, a part at a time: (doc_ids, digests as
    (documents, 2) int64, [values as (documents, metrics x 6) float64 per profile, in
    the run's profile order]), the profiles' files read side by side (a (profile,
    system)'s files and their parts depend on its documents alone: every profile's
    are cut alike) and checked to agree."""
    streams = [(part for name in names
                for part in document_file_parts(plan.folder, name, plan.tags[profile], plan.document_rows(system, profile)))
               for profile, names in plan.document_files(system).items()]
    for parts in itertools.zip_longest(*streams):
        if any(part is None for part in parts) or any(
                part[0] != parts[0][0] or not np.array_equal(part[1], parts[0][1]) for part in parts[1:]):
            raise ResultFolderError(f"{plan.folder.path}: the profiles' per-document files of system {system!r} disagree")
        yield parts[0][0], parts[0][1], [part[2] for part in parts]


def carried_documents(plan: ReusePlan) -> tuple[list, np.ndarray]:
    """(doc_ids, references digests as int64) of every document a carried system
    scored (its first profile's files; one system's when each scored every
    document of the previous run): what the join checks the run's references
    against.  One digest per document (the smallest: a previous run that resolved a
    document's references in two ways kept each row's own,
    input.conflicting_references = "keep", and then nothing is checked)."""
    import pyarrow as pa  # noqa: PLC0415

    profile = next(iter(plan.tags))
    metrics = len(plan.tags[profile])
    counts = plan.folder.record.get("counts") or {}
    every = counts.get("documents")
    whole = all((counts.get("documents_by_system") or {}).get(s) == every for s in plan.carried)
    tables = []
    for system in plan.carried[:1] if whole else plan.carried:  # (each scored every document: one says it all)
        for name in plan.document_files(system)[profile]:
            table = plan.folder.table(name, ["doc_id", "references_digest"], most_rows=plan.document_rows(system, profile))
            tables.append(table.take(np.arange(0, table.num_rows, metrics)))
    if not tables:
        return [], np.zeros(0, "<i8")
    if len(tables) == 1:  # (one file of one system: its documents once each)
        found = tables[0].rename_columns(["doc_id", "references_digest_min"])
    else:
        found = pa.concat_tables(tables).group_by("doc_id").aggregate([("references_digest", "min")])
    return found.column("doc_id").to_pylist(), found.column("references_digest_min").to_numpy().astype("<i8")


# ------------------------------------------------------------------ in a bucket of the join


class BucketPrevious:
    """What the join of one bucket knows of the previous run (ReadPrevious's blocks,
    columns of many rows each: ("rows", system, doc_ids, digests (16 bytes a row),
    then each profile's values (bytes, as many a row)) of the systems read again;
    ("documents", doc_ids, references digests (8 bytes a document)) of the
    documents carried systems scored): the previous values of a list of candidates, for ScoreDocuments,
    and what would make a carried system's results differ from a full run's
    (`unresolved`, `match`'s `changed`; a row of a carried system read again is
    found from the read files' record, `retried_plan`).  A row is a position in its
    system's columns: no Python object per previous row."""

    def __init__(self, blocks, check_references: bool):
        parts: dict = {}
        ids, references = [], []
        for block in blocks:
            if block[0] == "rows":
                parts.setdefault(block[1], []).append(block[2:])
            else:
                ids += block[1]
                references.append(block[2])
        self.systems: dict = {}  # system -> ({doc_id: position}, digests, values per profile, bytes of a row's values)
        for system, held in parts.items():
            doc_ids = [doc_id for part in held for doc_id in part[0]]
            values = tuple(b"".join(v) for v in zip(*(part[2:] for part in held)))
            self.systems[system] = (dict(zip(doc_ids, range(len(doc_ids)))), b"".join(part[1] for part in held),
                                    values, tuple(len(v) // len(doc_ids) for v in values))
        self.documents = dict(zip(ids, range(len(ids))))  # doc_id -> position in `references`
        self.references = b"".join(references)
        self.check_references_ = check_references
        self.changed = 0  # candidates whose references differ from the carried systems' (`match`)

    def match(self, groups, digests) -> tuple[Optional[list], frozenset]:
        """One pass over some DocumentGroups and their candidates' `digests`
        (candidate's, then references'): per candidate, in order, the previous run's
        values (bytes per profile) when it scored the same (system, doc_id) with the
        same digests, else None (None for the list when no candidate's are); and the
        documents among the groups that carried systems scored.  A candidate of such
        a document whose references are not the ones those systems scored it with
        is counted (`changed`: a conflict in a full run; checked where a document's
        rows share one list of references, as they do unless
        input.conflicting_references is "keep", which checks nothing)."""
        out, carried, i, found = [], [], 0, False
        systems, documents, references = self.systems, self.documents, self.references
        check = self.check_references_ and bool(documents)
        for doc_id, candidates in groups:
            k = documents.get(doc_id)
            if k is not None:
                carried.append(doc_id)
                if check and digests[i][8:] != references[8 * k : 8 * k + 8]:
                    self.changed += len(candidates)
            for c, _ in candidates:
                rows = systems.get(c.system)
                if rows is not None and (k := rows[0].get(doc_id)) is not None and rows[1][16 * k : 16 * k + 16] == digests[i]:
                    out.append(tuple(v[w * k : w * k + w] for v, w in zip(rows[2], rows[3])))
                    found = True
                else:
                    out.append(None)
                i += 1
        return (out if found else None), frozenset(carried)

    def is_carried(self, doc_id: str) -> bool:
        return doc_id in self.documents

    def unresolved(self, error) -> int:
        """1 when the join reports a row of a document carried systems scored as
        having no usable references: in a full run the carried rows of that
        document would be reported so too."""
        return int(error.reason in ("conflicting_references", "no_references") and error.doc_id in self.documents)
