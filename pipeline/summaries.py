"""Per-system summaries, without Beam: a system's accumulated statistics
(`rouge_core.aggregate.SystemSums`) -> its `system_scores` rows and ROUGE-1.5.5
report lines.  `run` (pipeline.beam.aggregate) and `score` (pipeline.score) both
call these, so their tables have the same columns and digits."""

from __future__ import annotations

from pipeline.config import Profile
from rouge_core import MetricStats, RougeSettings
from rouge_core.report import averages_of, metric_block
from rouge_core.types import MEASURES


def system_summaries(element, profiles: dict[str, Profile], eval_ids: dict) -> list:
    """((profile, system), SystemCombineFn output) -> per metric (profile, system,
    metric, table row, ROUGE-1.5.5 report lines)."""
    (name, system), (metrics, documents) = element
    profile = profiles[name]
    out = []
    first = 0  # a profile's settings hold consecutive metrics
    for settings in profile.settings:
        tags = settings.metric_tags()
        part = slice(first, first + len(tags))
        # What the script averages: R, P, F (-t 0) or the counts (-t 1), straight from the values.
        averaged = slice(3, 6) if settings.counting == 0 else slice(0, 3)
        averages = averages_of(system, {eval_ids[d]: v[part, averaged] for d, v in documents}, len(tags), settings)
        averages = [None] * len(tags) if averages is None else averages
        # Each document's MetricStats only where the report prints them (-d) or sums them (-t 2).
        by_eval_id = {}
        if settings.per_document or settings.counting == 2:
            by_eval_id = {eval_ids[d]: dict(zip(tags, map(MetricStats._make, v[part].tolist()))) for d, v in documents}
        for k, (tag, stats) in enumerate(zip(tags, metrics[part])):
            block = metric_block(system, tag, {e: scores[tag] for e, scores in by_eval_id.items()}, settings, averages[k])
            out.append((name, system, tag, system_row(name, system, tag, stats, settings, averages[k]), block))
        first += len(tags)
    return out


def system_row(profile: str, system: str, tag: str, stats, settings: RougeSettings, averages) -> dict:
    row = {"profile": profile, "system": system, "metric": tag, "documents": stats.documents}
    # The script's printed averages exist only in its own convention (and not under -t 2).
    printed = averages if settings.preset == "rouge155" and averages else [(None, None, None)] * 3
    for name, mean, micro, se, interval in zip(MEASURES, stats.means, stats.micro(settings.alpha_value), stats.jackknife_se, printed):
        row[name], row[f"micro_{name}"], row[f"jackknife_se_{name}"] = mean, micro, se
        row[f"rouge155_{name}"], row[f"rouge155_{name}_low"], row[f"rouge155_{name}_high"] = (
            None if v is None else float(v) for v in interval
        )
    row["bootstrap_f_measure_low"], row["bootstrap_f_measure_high"] = stats.bootstrap_interval(float(settings.confidence))
    row["signature"] = settings.signature()
    return row
