"""Per-system summaries, without Beam: a system's accumulated statistics
(`rouge_core.aggregate.SystemSums`) -> its `system_scores` rows, and its
documents -> ROUGE-1.5.5's printed averages and report lines.  `run`
(pipeline.beam.aggregate) and `score` (pipeline.score) both call these, so their
tables have the same columns and digits.

The two are apart because they need different things: the rows need only the
accumulator's sums (O(1) in documents); the printed averages need every document
of the system in evaluation-id order (the script's bootstrap walks them so), which
the pipeline gathers per system in a stage of its own."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pipeline.config import Profile
from rouge_core import MetricStats, RougeSettings
from rouge_core.aggregate import stack
from rouge_core.report import averages_of_stacked, instance_order, metric_block
from rouge_core.types import MEASURES


def report_block(system: str, documents: Mapping[str, bytes], profile: Profile, lines: bool = True):
    """(printed averages, report lines) of one system: `documents` maps evaluation ids
    to the document's values (every metric of the profile, as
    `rouge_core.aggregate.stats_bytes` packs them).  The averages are one entry
    per metric of the profile (None where the script prints none: `-t 2`); the lines
    are every metric's block of the ROUGE-1.5.5 report, `-d` lines included (none
    when `lines` is false)."""
    instances = instance_order(system, documents)
    stacked = stack([documents[e] for e in instances]) if instances else np.zeros((0, len(profile.tags), 6))
    averages, out = [], []
    first = 0  # a profile's settings hold consecutive metrics
    for settings in profile.settings:
        tags = settings.metric_tags()
        part = slice(first, first + len(tags))
        found = averages_of_stacked(stacked[:, part], settings)
        found = [None] * len(tags) if found is None else found
        averages += found
        first += len(tags)
        if not lines:
            continue
        # Each document's MetricStats only where the report prints them (-d) or sums them (-t 2).
        by_eval_id = {}
        if settings.per_document or settings.counting == 2:
            by_eval_id = {e: dict(zip(tags, map(MetricStats._make, v.tolist()))) for e, v in zip(instances, stacked[:, part])}
        for tag, average in zip(tags, found):
            out += metric_block(system, tag, {e: scores[tag] for e, scores in by_eval_id.items()}, settings, average)
    return averages, out


def table_rows(name: str, system: str, metrics: list, profile: Profile, averages: list, facts: dict) -> list[tuple]:
    """Per metric of the profile (profile, system, metric, table row), from the
    accumulator's statistics (`SystemSums.metric`, one per metric) and the printed
    averages of `report_block`; `facts`: what the run adds to the signature
    (`RunConfig.facts`)."""
    out, first = [], 0
    for settings in profile.settings:
        tags = settings.metric_tags()
        signature = settings.signature(**facts)
        for k, tag in enumerate(tags, first):
            out.append((name, system, tag, system_row(name, system, tag, metrics[k], settings, averages[k], signature)))
        first += len(tags)
    return out


def system_row(profile: str, system: str, tag: str, stats, settings: RougeSettings, averages, signature: str) -> dict:
    row = {"profile": profile, "system": system, "metric": tag, "documents": stats.documents}
    # The script's printed averages exist only in its own convention (and not under -t 2).
    printed = averages if settings.preset == "rouge155" and averages else [(None, None, None)] * 3
    for name, mean, micro, se, interval in zip(MEASURES, stats.means, stats.micro(settings.alpha_value), stats.jackknife_se, printed):
        row[name], row[f"micro_{name}"], row[f"jackknife_se_{name}"] = mean, micro, se
        row[f"rouge155_{name}"], row[f"rouge155_{name}_low"], row[f"rouge155_{name}_high"] = (
            None if v is None else float(v) for v in interval
        )
    row["bootstrap_f_measure_low"], row["bootstrap_f_measure_high"] = stats.bootstrap_interval(float(settings.confidence))
    row["signature"] = signature
    return row
