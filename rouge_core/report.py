"""The ROUGE-1.5.5 text report (`printResults` l.660), byte for byte.

Input: per system, per evaluation id, the `MetricStats` of every metric.
Systems print in string order (`-a`, l.527); each metric block starts with 45
dashes; with `-d` the per-document lines follow 45 dots, ordered by `by_evalID`
(l.789).  The averages come from `resampling.perl_bootstraps` over the documents
in the script's instance order: the string-sorted `"<eval id>.<system>"`.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np

from rouge_core.errors import RougeConfigError
from rouge_core.perl_numbers import perl_int_string, perl_string, perl_sum
from rouge_core.resampling import perl_bootstraps
from rouge_core.settings import RougeSettings
from rouge_core.signature import EVAL_ID_MODES
from rouge_core.types import MetricStats

DASHES = "-" * 45
DOTS = "." * 45
_LEADING_DIGITS = re.compile(r"[0-9]+")

# system -> evaluation id -> metric tag -> stats
Results = Mapping[str, Mapping[str, Mapping[str, MetricStats]]]


def by_eval_id(instance: str) -> tuple:
    """Sort key equivalent to the script's `by_evalID`: numeric on leading digits
    when both ids have them, string order otherwise.

    Ids without leading digits start with a byte below '0' or above '9', so they
    sort before or after all numbered ids; ids with equal numbers tie in Perl (in
    hash order, which varies from run to run) and sort by string here.
    """
    digits = _LEADING_DIGITS.match(instance)
    if digits:
        return (1, float(digits.group()), instance)
    return (0 if instance < "0" else 2, 0.0, instance)


def _document_values(stats: MetricStats, counting: int) -> tuple:
    if counting == 0:
        return stats.recall, stats.precision, stats.f_measure
    return stats.reference_total, stats.candidate_total, stats.hits


def averages_of(system: str, values: Mapping[str, Sequence], metrics: int, settings: RougeSettings):
    """The (R, P, F) `Interval`s ROUGE-1.5.5 prints for each of `metrics` metrics of one
    system, or None under `-t 2`, which prints counts instead.  `values` maps
    evaluation ids to one row per metric of what the script averages (R, P, F under
    `-t 0`, the counts under `-t 1`: `_document_values`); the bootstrap takes the
    documents in the script's instance order, the string order of
    `"<eval id>.<system>"`, and walks its draws once for all metrics."""
    if settings.counting == 2:
        return None
    instances = sorted(values, key=lambda eval_id: f"{eval_id}.{system}")
    return perl_bootstraps(
        np.array([values[e] for e in instances], dtype=np.float64).reshape(len(instances), metrics, 3),
        resamples=settings.resamples,
        confidence=settings.confidence,
        counting=settings.counting,
        alpha=settings.alpha_value,
    )


def averages_of_values(system: str, documents: Mapping[str, np.ndarray], settings: RougeSettings):
    """`averages_of` every metric of `settings` from each document's values: `documents`
    maps evaluation ids to an array (metrics, 6) of the MetricStats fields in order
    (`rouge_core.aggregate.stats_array`).  One (R, P, F) triple per metric, or None
    under `-t 2`."""
    instances = instance_order(system, documents)
    metrics = len(settings.metric_tags())
    stacked = np.stack([documents[e] for e in instances]) if instances else np.zeros((0, metrics, 6))
    return averages_of_stacked(stacked, settings)


def instance_order(system: str, eval_ids) -> list:
    """The evaluation ids in the script's instance order: the string order of
    `"<eval id>.<system>"`."""
    return sorted(eval_ids, key=lambda eval_id: f"{eval_id}.{system}")


def averages_of_stacked(values: np.ndarray, settings: RougeSettings):
    """`averages_of_values` from one array (documents in `instance_order`, metrics, 6)."""
    if settings.counting == 2:
        return None
    averaged = slice(3, 6) if settings.counting == 0 else slice(0, 3)  # R, P, F (-t 0) or the counts (-t 1)
    return perl_bootstraps(
        np.ascontiguousarray(values[:, :, averaged]),
        resamples=settings.resamples,
        confidence=settings.confidence,
        counting=settings.counting,
        alpha=settings.alpha_value,
    )


def printed_averages(system: str, documents: Mapping[str, MetricStats], settings: RougeSettings):
    """`averages_of` one metric: `documents` maps evaluation ids to the system's scores."""
    out = averages_of(system, {e: [_document_values(s, settings.counting)] for e, s in documents.items()}, 1, settings)
    return None if out is None else out[0]


def system_averages(system: str, documents: Mapping[str, Mapping[str, MetricStats]], settings: RougeSettings):
    """`averages_of` every metric of `settings` ({tag: intervals or None}); `documents`
    maps evaluation ids to {tag: stats}."""
    tags = settings.metric_tags()
    # Every document's MetricStats of every metric as one array (documents, metrics, 6).
    flat = [x for doc in documents.values() for tag in tags for x in doc[tag]]
    stats = np.array(flat, dtype=np.float64).reshape(len(documents), len(tags), 6)
    out = averages_of_values(system, dict(zip(documents, stats)), settings)
    return dict.fromkeys(tags) if out is None else dict(zip(tags, out))


def metric_block(
    system: str, tag: str, documents: Mapping[str, MetricStats], settings: RougeSettings, averages=None
) -> list[str]:
    """The lines of one system's block for one metric (`averages`: from
    `printed_averages`, computed here when not given; with them given, `documents`
    is read only for `-d` and `-t 2`)."""
    rows = {  # only where the block prints them (-d) or sums them (-t 2)
        f"{eval_id}.{system}": _document_values(stats, settings.counting)
        for eval_id, stats in (documents.items() if settings.per_document or settings.counting == 2 else ())
    }
    lines = [DASHES]
    if settings.counting == 2:
        totals = [perl_int_string(perl_sum(rows[i][k] for i in sorted(rows))) for k in range(3)]
        lines.append(f"{system} {tag} M_count: {totals[0]} P_count: {totals[1]} H_count: {totals[2]}")
    else:
        for name, interval in zip("RPF", averages or printed_averages(system, documents, settings)):
            lines.append(
                f"{system} {tag} Average_{name}: {interval.average} "
                f"({settings.confidence}%-conf.int. {interval.low} - {interval.high})"
            )
    if settings.per_document:
        lines.append(DOTS)
        for instance in sorted(rows, key=by_eval_id):
            r, p, f = rows[instance]
            if settings.counting == 0:
                values = ("%7.5f" % r, "%7.5f" % p, "%7.5f" % f)
            else:
                values = (perl_string(r), perl_string(p), perl_string(f))
            lines.append(f"{system} {tag} Eval {instance} R:{values[0]} P:{values[1]} F:{values[2]}")
    return lines


def evaluation_ids(doc_ids, mode: str = "doc_id") -> dict[str, str]:
    """The ROUGE evaluation id of each document.

    The printed averages depend on the order of the evaluation ids (see
    `resampling`).  "doc_id" uses the doc_ids themselves; "index" numbers the
    documents 1..N in sorted doc_id order, as pyrouge numbers its sorted files,
    which is how most published ROUGE-1.5.5 numbers were made.

    Example:
        >>> evaluation_ids(["b", "a", "c"], "index")
        {'a': '1', 'b': '2', 'c': '3'}
    """
    ordered = sorted(set(doc_ids))
    if mode == "doc_id":
        return {doc: doc for doc in ordered}
    if mode == "index":
        return {doc: str(i) for i, doc in enumerate(ordered, 1)}
    raise RougeConfigError(f"eval ids must be one of {EVAL_ID_MODES}; got {mode!r}")


def render_report(results: Results, settings: RougeSettings) -> str:
    """The whole ROUGE-1.5.5 report for every system, as the script prints it with `-a`."""
    lines: list[str] = []
    for system in sorted(results):
        documents = results[system]
        averages = system_averages(system, documents, settings)
        for tag in settings.metric_tags():
            lines += metric_block(system, tag, {e: doc[tag] for e, doc in documents.items()}, settings, averages[tag])
    return "".join(line + "\n" for line in lines)
