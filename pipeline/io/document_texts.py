"""The texts of a few documents of a finished run, read back from the run's own
input files (run.json lists them, with the reading settings), for the comparison
report's "documents that moved most": what each run's candidate said and what
the reference says.

Only local regular files that still exist are read, each once, through the one row
reader (pipeline.io.rows), and only if they still hold the bytes that were scored
(the SHA-256 run.json recorded): a run whose inputs moved, changed or were URLs
shows its documents without text, and says so.  (run.json is untrusted: a pipe or
a device it names is never opened.)  `on_file` is called after each file (the
command's progress).
"""

from __future__ import annotations

import os
from typing import Callable, Optional

from pipeline.config import InputConfig, input_section
from pipeline.io import files
from pipeline.io.patterns import system_from_path
from pipeline.io.rows import iter_rows, parse_candidate, parse_reference, used_fields
from pipeline.records import ErrorRecord, SourceRow
from rouge_core import RougeConfigError


def input_config(record: dict) -> InputConfig:
    """The run's reading settings, from run.json (defaults for what it does not hold),
    checked as a config's are (types, ranges): run.json is untrusted, and its limits
    bound what reading the texts costs."""
    given = (record.get("config") or {}).get("input") if isinstance(record.get("config"), dict) else None
    return input_section(given if isinstance(given, dict) else {}, "run.json")


def input_files(record: dict) -> tuple[list[str], list[str]]:
    """The run's candidate and reference files that can still be read here."""
    def readable(kind):
        paths = [entry.get("path") for entry in _entries(record, kind)]
        return [p for p in paths if isinstance(p, str) and p and not files.is_url(p) and os.path.isfile(p)]

    return readable("candidates"), readable("references")


def find_texts(record: dict, wanted: set, on_file: Optional[Callable[[], None]] = None) -> dict:
    """{(system, doc_id): candidate text} and {doc_id: [reference texts]} for the
    `wanted` (system, doc_id) pairs, as far as the run's input files give them."""
    candidate_files, reference_files = input_files(record)
    try:  # (settings out of range, or a pattern that backtracks: the report shows no text)
        config = input_config(record)
        pattern = system_from_path(config.system_from_path)
        if pattern is not None:
            pattern.check(candidate_files)
    except RougeConfigError:
        return {"candidates": {}, "references": {}}
    joined = not reference_files
    fields = used_fields(config)
    doc_ids = {d for _, d in wanted}
    recorded = {
        entry.get("path"): entry.get("sha256")
        for kind in ("candidates", "references")
        for entry in _entries(record, kind)
    }
    found = {}
    for kind, paths in (("candidates", candidate_files), ("references", reference_files)):
        for path in paths:
            candidates, references, digest = {}, {}, {}
            for row in iter_rows(path, config, fields, digest):
                if not isinstance(row, SourceRow):
                    continue
                if kind == "candidates":
                    parsed = parse_candidate(row, config, joined, pattern)
                    if isinstance(parsed, ErrorRecord) or parsed.doc_id not in doc_ids:
                        continue
                    if (parsed.system, parsed.doc_id) in wanted:
                        candidates[parsed.system, parsed.doc_id] = _text(parsed.text)
                    if joined and parsed.references is not None:
                        references.setdefault(parsed.doc_id, [_text(r) for r in parsed.references])
                else:
                    parsed = parse_reference(row, config)
                    if not isinstance(parsed, ErrorRecord) and parsed.doc_id in doc_ids:
                        references.setdefault(parsed.doc_id, []).extend(_text(r) for r in parsed.references)
            if recorded.get(path) in (None, digest.get("sha256")):  # the bytes that were scored
                found.setdefault("candidates", {}).update(candidates)
                for doc_id, texts in references.items():
                    if kind == "candidates":  # joined form: each row repeats its references
                        found.setdefault("references", {}).setdefault(doc_id, texts)
                    else:
                        found.setdefault("references", {}).setdefault(doc_id, []).extend(texts)
            if on_file is not None:
                on_file()
    return {"candidates": found.get("candidates", {}), "references": found.get("references", {})}


def _entries(record: dict, kind: str) -> list:
    """run.json's `inputs.<kind>` entries that are objects (run.json is untrusted)."""
    inputs = record.get("inputs")
    entries = inputs.get(kind) if isinstance(inputs, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _text(value) -> str:
    """A text given as a string or as a list of sentences, as one string."""
    return value if isinstance(value, str) else " ".join(value)
