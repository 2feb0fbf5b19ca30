"""Per-system tables for people: systems as rows, metrics as columns, one measure
(R, P or F) x 100 with its interval, ranked by a chosen metric, with a legend.

The same view is the run folder's `system_scores.md`, `score --format table` on a
terminal, and (long form, every number) the CSV.  Input: rows with the columns of
`system_scores` (system, metric, documents, recall, precision, f_measure, and,
in ROUGE-1.5.5 mode, rouge155_<measure> with _low/_high).
"""

from __future__ import annotations

import textwrap
from typing import Optional, Sequence

from tabulate import tabulate

from pipeline.io.names import shown
from pipeline.render.numbers import points
from rouge_core import names, sentence_split

MEASURES = {"r": "recall", "p": "precision", "f": "f_measure"}
MEASURE_NAMES = {"recall": "recall (R)", "precision": "precision (P)", "f_measure": "F-measure (F)"}


class Markdown(str):
    """Text that is Markdown already (e.g. a bold verdict): a cell `markdown_table`
    does not escape."""


def code_span(value) -> str:
    """`value` as a Markdown code span: control characters written as escapes (a newline
    in a field read from a result folder cannot start a heading or a line of its own),
    fenced by more backticks than it holds in a row (so it cannot close the span).

    Example:
        >>> print(code_span("rouge155|n:2"), code_span("a`b\x1b[2J"))
        `rouge155|n:2` ``a`b\\x1b[2J``
    """
    text = shown(str(value))
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_cell(value) -> str:
    """A Markdown table cell: floats with five decimals, text with control characters
    written as escapes (`\\n`) and Markdown's special characters escaped (a name cannot
    become a link, a heading, a new row or a column)."""
    if value is None:
        return ""
    if isinstance(value, Markdown):
        return value
    if isinstance(value, float):
        return "%.5f" % value
    text = shown(str(value))
    for ch in "\\|`*_[]<>#":
        text = text.replace(ch, "\\" + ch)
    return text


def _tabulate(head: Sequence, body: Sequence[Sequence], align: str, tablefmt: str) -> str:
    colalign = [{"l": "left", "r": "right"}[a] for a in align]
    table = tabulate(body, headers=head, tablefmt=tablefmt, colalign=colalign, disable_numparse=True)
    return "\n".join(line.rstrip() for line in table.splitlines()) + "\n"


def markdown_table(head: Sequence, body: Sequence[Sequence], align: str) -> str:
    """A Markdown (pipe) table laid out by tabulate: every cell through `markdown_cell`
    (escaped unless it is `Markdown`); `align` has one letter per column, l or r."""
    def cells(row):
        return [markdown_cell(c) for c in row]

    return _tabulate(cells(head), [cells(row) for row in body], align, "pipe")


def markdown_row(row: Sequence) -> str:
    """One unpadded Markdown table line of escaped cells, for a table written a block of
    rows at a time (too long to lay out whole: see render.significance)."""
    return "| " + " | ".join(markdown_cell(c) for c in row) + " |\n"


def markdown_rule(align: str) -> str:
    """The line under a Markdown table's heads: one ---: (right) or :--- (left) a column."""
    return "|" + "".join("---:|" if a == "r" else ":---|" for a in align) + "\n"


def text_table(head: Sequence, body: Sequence[Sequence], align: str, indent: str = "") -> str:
    """An aligned plain-text table for a terminal, laid out by tabulate; control
    characters in cells are written as escapes, so a cell cannot forge a line."""
    def cells(row):
        return ["" if c is None else shown(str(c)) for c in row]

    table = _tabulate(cells(head), [cells(row) for row in body], align, "simple")
    return "".join(indent + line + "\n" for line in table.splitlines())


def measure_value(row: dict, measure: str):
    """(value, low, high): ROUGE-1.5.5's printed average and interval when the run has
    them, else the plain mean with the Poisson bootstrap interval (F only)."""
    if row.get(f"rouge155_{measure}") is not None:
        return row[f"rouge155_{measure}"], row[f"rouge155_{measure}_low"], row[f"rouge155_{measure}_high"]
    low = row.get(f"bootstrap_{measure}_low")
    high = row.get(f"bootstrap_{measure}_high")
    return row.get(measure), low, high


def wide(rows: list[dict], metric_order: Sequence[str], measure: str = "f_measure", sort_by: Optional[str] = None):
    """(metrics, [(rank, system, documents, {metric: (value, low, high)})]), ranked by
    `sort_by` (default: the first metric), best first, ties by system name.
    `documents` is the docs cell: "scored/had" when the rows carry `documents_had`
    (the documents a system had, scored or rejected), else the documents scored."""
    metrics = [m for m in metric_order if any(r["metric"] == m for r in rows)]
    if sort_by is None:
        sort_by = metrics[0] if metrics else None
    elif sort_by not in metrics:
        raise ValueError(f"cannot sort by {sort_by!r}: the metrics are {', '.join(metrics)}")
    systems: dict[str, dict] = {}
    documents: dict[str, int] = {}
    had: dict[str, int] = {}
    for r in rows:
        systems.setdefault(r["system"], {})[r["metric"]] = measure_value(r, measure)
        documents[r["system"]] = max(documents.get(r["system"], 0), r.get("documents") or 0)
        if r.get("documents_had") is not None:
            had[r["system"]] = max(had.get(r["system"], 0), r["documents_had"])

    def key(system):
        value = systems[system].get(sort_by, (None,))[0]
        return (value is None, -(value or 0.0), system)

    ranked = sorted(systems, key=key)
    cells = {s: f"{documents[s]}/{had[s]}" if s in had else str(documents[s]) for s in systems}
    return metrics, [(i, s, cells[s], systems[s]) for i, s in enumerate(ranked, 1)]


def _cell(value_low_high) -> str:
    value, low, high = value_low_high
    if value is None:
        return ""
    return points(value) + (f" ({points(low)}-{points(high)})" if low is not None and high is not None else "")


def _had(rows: list[dict]) -> bool:
    return any(r.get("documents_had") is not None for r in rows)


def legend(metrics: Sequence[str], measure: str, settings, sort_by: str, interval: str, had: bool = False) -> str:
    """What the numbers are, in a few lines: the measure and its average, what each
    metric measures (`rouge_core.names.legend`), the F formula, the docs column and
    the sentence rule."""
    alpha = getattr(settings, "alpha_value", 0.5)
    lines = [
        f"Scores x 100: {MEASURE_NAMES[measure]}, {interval}; ranked by {sort_by}, best first.",
        "; ".join(names.legend(metrics)) + ".",
        f"R = matches / reference size, P = matches / candidate size, F = RP / ((1-a)P + aR) with a = {alpha}.",
    ]
    if had:
        lines.append("docs: documents scored / documents the system had (the others were rejected: see the errors).")
    if hasattr(settings, "sentence_split"):
        lines.append(sentence_split.legend(settings.sentence_split))
    return "\n".join(textwrap.fill(line, 100) for line in lines)


def interval_name(rows: list[dict], settings, measure: str) -> str:
    if any(r.get(f"rouge155_{measure}") is not None for r in rows):
        return (
            f"ROUGE-1.5.5's average with its {settings.confidence}% bootstrap interval ({settings.resamples} "
            "resamples), the number papers quote from ROUGE-1.5.5 and pyrouge"
        )
    if any(r.get(f"bootstrap_{measure}_low") is not None for r in rows):
        return (
            "mean over documents (rouge-score's and HF evaluate's number) with its seeded Poisson bootstrap "
            f"{getattr(settings, 'confidence', '95')}% interval"
        )
    return "mean over documents"


def _head_and_body(metrics, ranked):
    head = ["#", "system", "docs"] + list(metrics)
    body = [[str(rank), system, docs] + [_cell(values.get(m, (None,) * 3)) for m in metrics] for rank, system, docs, values in ranked]
    return head, body


def markdown(
    rows: list[dict], settings, measure: str = "f_measure", sort_by: Optional[str] = None, profile=None,
    facts: Optional[dict] = None,
) -> str:
    """The wide table as Markdown, with the signature (with the run's `facts`:
    `RunConfig.facts`) and a legend (of `profile`'s metrics and signature when
    given, else of `settings`)."""
    facts = facts or {}
    tags, signature = (
        (profile.metric_order, profile.signature(**facts)) if profile else (settings.metric_tags(), settings.signature(**facts))
    )
    metrics, ranked = wide(rows, tags, measure, sort_by)
    head, body = _head_and_body(metrics, ranked)
    lines = [f"Signature: `{signature}`", "", markdown_table(head, body, "rlr" + "r" * len(metrics))]
    lines += [legend(metrics, measure, settings, sort_by or (metrics[0] if metrics else ""), interval_name(rows, settings, measure), _had(rows))]
    return "\n".join(lines) + "\n"


def text(rows: list[dict], settings, measure: str = "f_measure", sort_by: Optional[str] = None, profile=None,
         facts: Optional[dict] = None) -> str:
    """The wide table as aligned plain text, for a terminal (its signature is printed apart)."""
    metrics, ranked = wide(rows, profile.metric_order if profile else settings.metric_tags(), measure, sort_by)
    head, body = _head_and_body(metrics, ranked)
    out = [text_table(head, body, "rlr" + "r" * len(metrics))]
    out += [legend(metrics, measure, settings, sort_by or (metrics[0] if metrics else ""), interval_name(rows, settings, measure), _had(rows))]
    return "\n".join(out) + "\n"


def by_profile(view, rows: list[dict], profiles, heading, facts: dict) -> str:
    """`view` (markdown or text) of a run's rows: one table, or one per profile under
    `heading(profile)`; `facts`: what the run adds to the signature."""
    if len(profiles) == 1:
        return view(rows, profiles[0].settings[0], profile=profiles[0], facts=facts)
    return "\n".join(
        heading(p) + view([r for r in rows if r["profile"] == p.name], p.settings[0], profile=p, facts=facts)
        for p in profiles
    )


def profiles_markdown(rows: list[dict], profiles, facts: dict) -> str:
    return by_profile(markdown, rows, profiles, lambda p: f"## Profile {p.name}\n\n", facts)


def profiles_text(rows: list[dict], profiles, facts: dict) -> str:
    return by_profile(text, rows, profiles, lambda p: f"profile {p.name}: {p.signature(**facts)}\n\n", facts)
