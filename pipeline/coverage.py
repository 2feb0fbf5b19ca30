"""What a table's numbers rest on: how many rows and documents were rejected, and
which texts the preset could not read or read as one sentence.  Shared by `run`
and `score` (Beam-free), so both warn alike and end with the same exit status.

Rejected rows never look like a clean result:

* every table shows, per system, the documents scored out of the documents it
  had (`scored/had`: the system's candidate rows, scored or rejected);
* when the rejected share of the input rows, or of any one system's documents,
  is above the threshold (`--max-rejected`, default 1%), the command still
  writes what it could, heads its table and report with a warning, and ends with
  exit status `EXIT_REJECTED` (3) instead of 0;
* systems scored over different document sets are named (their means are not
  comparable).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.io.names import shown
from rouge_core.textcheck import FIXES, KINDS, ONE_SENTENCE, UNREADABLE

EXIT_REJECTED = 3  # results written, but more rows were rejected than the threshold allows
DEFAULT_MAX_REJECTED = 0.01  # a share of the rows, or of any one system's documents

# Reasons that concern a reference row or a whole file rather than an input row's candidate.
_NOT_CANDIDATE_ROWS = ("duplicate_reference", "missing_path", "unreadable_file")
REFERENCES = "(references)"  # the owner of reference texts in the text checks


@dataclass
class Coverage:
    """Counts of one run or `score` call.

    rows: input rows read (candidate and reference rows); rejected: rows that
    became error rows; scored: per system, documents scored; rejected_by_system:
    per system, its candidate rows rejected; documents: distinct documents scored.
    """

    rows: int
    rejected: int  # row errors (not file-level, not reference copies)
    scored: dict
    rejected_by_system: dict = field(default_factory=dict)
    documents: int = 0

    @classmethod
    def from_counts(cls, counts: dict) -> "Coverage":
        """From run.json's counts (`pipeline.io.tables.write_counts`)."""
        by_reason = counts.get("errors_by_reason", {})
        return cls(
            rows=counts.get("rows_read", 0),
            rejected=sum(n for reason, n in by_reason.items() if reason not in _NOT_CANDIDATE_ROWS),
            scored=dict(counts.get("documents_by_system", {})),
            rejected_by_system=dict(counts.get("errors_by_system", {})),
            documents=counts.get("documents", 0),
        )

    def had(self, system: str) -> int:
        """The documents a system had: scored plus rejected candidate rows."""
        return self.scored.get(system, 0) + self.rejected_by_system.get(system, 0)

    def systems(self) -> list[str]:
        return sorted(set(self.scored) | set(self.rejected_by_system))

    def problems(self, max_rejected: float) -> list[str]:
        """One sentence per share above `max_rejected`; empty when the result is clean enough."""
        out = []
        if self.rows and self.rejected / self.rows > max_rejected:
            out.append(
                f"{self.rejected:,} of {self.rows:,} input rows ({_share(self.rejected, self.rows)}) were rejected"
            )
        for system in self.systems():
            had, lost = self.had(system), self.rejected_by_system.get(system, 0)
            if had and lost / had > max_rejected:
                out.append(f"{system} was scored on {self.scored.get(system, 0):,} of its {had:,} documents")
        return out

    def different_document_sets(self) -> dict[str, int]:
        """Systems scored on fewer documents than the run holds: {system: missing}."""
        return {s: self.documents - n for s, n in sorted(self.scored.items()) if n < self.documents}


# What to do about the most common reason for rejected rows, where an option helps.
REASON_HINTS = {
    "conflicting_references": "Rows of one doc_id carry different references (a system released with its own "
    "copy): --conflicting-references keep (input.conflicting_references = \"keep\") scores each row against "
    "its own references.",
    "no_references": "No reference row has these doc_ids: check --references and the doc_id field.",
    "duplicate_key": "A (system, doc_id) appears more than once: every copy is rejected.",
}


def rejected_warning(problems: list[str], max_rejected: float, errors_hint: str, by_reason: dict | None = None) -> str:
    """The warning that heads a table or report whose rows were rejected past the
    threshold: what was lost, the most common reason's fix, where the rows are."""
    hint = ""
    if by_reason:
        top = max(sorted(by_reason), key=lambda reason: by_reason[reason])
        hint = f" Most were {top} ({by_reason[top]:,})." + (f" {REASON_HINTS[top]}" if top in REASON_HINTS else "")
    return (
        f"WARNING: these numbers rest on part of the input: {'; '.join(problems)} "
        f"(threshold {_share_text(max_rejected)}, --max-rejected).{hint} {errors_hint} "
        f"Exit status {EXIT_REJECTED}."
    )


def run_rejected(counts: dict, max_rejected: float) -> dict:
    """A run's rejected share against `max_rejected`, as run.json records it (and the
    warning that heads system_scores.md when it is past)."""
    problems = Coverage.from_counts(counts).problems(max_rejected)
    warning = (
        rejected_warning(problems, max_rejected, "The rejected rows are in errors/.", counts["errors_by_reason"])
        if problems
        else None
    )
    return {"max_rejected": max_rejected, "problems": problems, "warning": warning,
            "exit_status": EXIT_REJECTED if problems else 0}


class AlikeErrors:
    """Error rows as a terminal shows them: the rows of one file with the same reason
    and message are one kind, shown as one line with their count.  The first `limit`
    kinds are kept (where the first row is, and how many rows), later ones only
    counted: memory stays bounded whatever the number of rows."""

    def __init__(self, limit: int):
        self.limit = limit
        self.kinds: dict = {}  # (source, reason, message) -> [position of the first row, rows]
        self.total = 0

    def add(self, error) -> None:
        """Counts `error` (an ErrorRecord, or what has its source, position, reason, message)."""
        self.total += 1
        key = (error.source, error.reason, error.message)
        if key in self.kinds:
            self.kinds[key][1] += 1
        elif len(self.kinds) < self.limit:
            self.kinds[key] = [error.position, 1]

    def lines(self, hint=None) -> list[str]:
        """One line per kept kind, then how many rows are not shown, then for each file
        whose rows miss a field `hint(source)` once (what the file's rows hold and how
        to map them; None: nothing)."""
        lines = []
        for (source, reason, message), (position, n) in self.kinds.items():
            where = source + (f":{position}" if position is not None else "")
            more = f" (and {n - 1:,} more row{'s' if n > 2 else ''} like it)" if n > 1 else ""
            lines.append(f"  {shown(where)}{more}: {reason}: {shown(message)}")
        rest = self.total - sum(n for _, n in self.kinds.values())
        if rest:
            lines.append(f"  ... and {rest:,} more")
        for source in dict.fromkeys(s for s, reason, _ in self.kinds if reason == "missing_field"):
            line = hint(source) if hint else None
            if line:
                lines.append(f"  {shown(line)}")
        return lines


def error_lines(errors, limit: int, hint=None) -> list[str]:
    """`errors` as lines for a terminal, at most `limit` kinds (AlikeErrors)."""
    alike = AlikeErrors(limit)
    for error in errors:
        alike.add(error)
    return alike.lines(hint)


def document_sets_warning(missing: dict[str, int], documents: int) -> list[str]:
    return [f"warning: {system} has no score for {n:,} of the {documents:,} documents" for system, n in missing.items()]


def docs_cell(scored, had) -> str:
    """A table's docs cell: "scored/had", or "scored" when had is unknown."""
    return str(scored) if had is None else f"{scored}/{had}"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%"


def _share_text(value: float) -> str:
    return f"{100 * value:g}%"


class TextTally:
    """Per owner (a system, or REFERENCES) and kind of problem (rouge_core.textcheck):
    how many texts, and the smallest doc_id among them as the example (the same
    whatever the order, so `run` and `score` name the same one)."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], list] = {}

    def add(self, owner: str, kind: str, doc_id: str, texts: int = 1) -> None:
        entry = self.found.setdefault((owner, kind), [0, doc_id])
        entry[0] += texts
        entry[1] = min(entry[1], doc_id)

    def to_dict(self) -> dict:
        """{owner: {kind: {"texts": n, "example": doc_id}}}, for run.json."""
        out: dict = {}
        for (owner, kind), (n, example) in sorted(self.found.items()):
            out.setdefault(owner, {})[kind] = {"texts": n, "example": example}
        return out


LISTED_OWNERS = 3  # systems named in a merged text warning (the ones with the most texts)


def text_warnings(checks: dict) -> list[str]:
    """One line per kind of problem, every system's and the references' merged: how
    many texts, whose (the references, then the systems with the most, the rest
    counted), an example and the fix.  `checks`: {owner: {kind: {"texts": n,
    "example": doc_id}}} (`TextTally.to_dict`, run.json's text_checks).

    Example:
        >>> text_warnings({"(references)": {"one_sentence": {"texts": 2, "example": "d1"}},
        ...                "lead3": {"one_sentence": {"texts": 1, "example": "d4"}}})[0][:97]
        'warning: 3 texts (2 reference texts; lead3 1) were scored as one sentence but hold several senten'
    """
    what = {  # (one text, several texts)
        UNREADABLE: ("has", "have", "letters the preset's tokenizer drops (no tokens, or most letters lost): "
                     "{they} near 0"),
        ONE_SENTENCE: ("was", "were", "scored as one sentence but {hold} several sentences: summary-level "
                       "ROUGE-L/W and rougeLsum see one sentence"),
    }
    lines = []
    for kind in KINDS:
        found = {owner: kinds[kind] for owner, kinds in checks.items() if kind in kinds}
        if not found:
            continue
        n = sum(f["texts"] for f in found.values())
        one, many, rest = what[kind]
        rest = rest.format(they="it scores" if n == 1 else "they score", hold="holds" if n == 1 else "hold")
        references = found.pop(REFERENCES, None)
        systems = sorted(found.items(), key=lambda item: (-item[1]["texts"], item[0]))
        if references is None and len(systems) == 1:  # one system
            whose = f"{_texts(n)} of {systems[0][0]}"
        elif not systems:  # the references only
            whose = _texts(n, "reference text")
        else:
            parts = [_texts(references["texts"], "reference text")] if references else []
            listed = ", ".join(f"{system} {f['texts']:,}" for system, f in systems[:LISTED_OWNERS])
            more = len(systems) - LISTED_OWNERS
            parts.append(listed + (f" and {more:,} more system{'s' * (more > 1)}" if more > 0 else ""))
            whose = f"{_texts(n)} ({'; '.join(parts)})"
        owner, example = (REFERENCES, references) if references else systems[0]
        of = "" if len(found) + (references is not None) == 1 else (
            ", a reference" if owner == REFERENCES else f", {owner}'s"
        )
        lines.append(
            f"warning: {whose} {one if n == 1 else many} {rest} (e.g. doc_id {example['example']}{of}); "
            f"use {FIXES[kind]}"
        )
    return lines


def _texts(n: int, noun: str = "text") -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
