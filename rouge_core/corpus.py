"""Corpus-level scores in one call: `corpus_score(candidates, references, settings=...)`.

The shape of sacreBLEU's `corpus_score`: texts in, one result per metric out,
with the signature that says how it was made.  Per metric:

* `recall`, `precision`, `f_measure`: the mean of the per-document scores;
* `rouge155`: ROUGE-1.5.5's printed averages with their `-c` confidence
  intervals, as its report prints them (`Average_R: 0.45123 (95%-conf.int.
  0.44901 - 0.45340)`, the strings of `rouge_core.report`; rouge155 preset, not
  under `-t 2`);
* `micro`: R, P, F from the counts pooled over the corpus (as `-t 1` forms them);
* `bootstrap_f`: a Poisson-bootstrap interval of the F mean and `jackknife_se`
  the delete-a-group jackknife standard errors of R, P, F;

all computed by `rouge_core.aggregate.SystemSums`, the accumulator the Beam
pipeline combines with, so these are the numbers of its `system_scores` table.

Example:
    >>> from rouge_core import corpus_score
    >>> result = corpus_score(
    ...     ["the cat sat on the mat", "a dog barked"],
    ...     [["the cat was on the mat"], ["the dog barked loudly", "a dog barked"]],
    ...     settings="-n 2 -m",
    ... )
    >>> rouge2 = result["ROUGE-2"]   # R: 3/5 and (1+2)/(3+2) (-f A pools the references)
    >>> rouge2.documents, rouge2.recall, rouge2.f_measure
    (2, 0.6, 0.633335)
    >>> print(rouge2.format())
    ROUGE-2 F 0.63333 (0.60000 - 0.66667), 2 documents
    >>> result.signature.format(short=True)
    'rouge155|n:2|L:yes|W:no|S:no|m:porter155+wn2.0|s:no|l:none|sp:newline|f:average|p:0.5|t:0|c:95%@1000|#:1-2|v:0.1.0'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from rouge_core.aggregate import SystemStats, SystemSums, stats_array, stats_bytes
from rouge_core.errors import RougeConfigError, RougeInputError
from rouge_core.report import averages_of_values, evaluation_ids
from rouge_core.resampling import Interval
from rouge_core.scoring import RougeScorer
from rouge_core.settings import RougeSettings
from rouge_core.signature import Signature, nrefs_of
from rouge_core.text import Text


class PrintedAverages(NamedTuple):
    """ROUGE-1.5.5's printed R, P and F averages with their intervals (strings, as printed)."""

    recall: Interval
    precision: Interval
    f_measure: Interval


@dataclass(frozen=True)
class MetricScore:
    """One metric over the corpus."""

    metric: str
    documents: int
    recall: float  # mean over documents
    precision: float
    f_measure: float
    rouge155: PrintedAverages | None  # ROUGE-1.5.5's printed averages; None outside rouge155 and under -t 2
    micro: tuple[float, float, float]  # R, P, F from the pooled counts
    bootstrap_f: tuple[float | None, float | None]  # Poisson-bootstrap interval of the F mean
    jackknife_se: tuple[float, float, float]  # R, P, F

    def row(self) -> dict:
        """The pipeline's per-system table row (`system_scores`) for this metric,
        without its profile and system columns."""
        row = {"metric": self.metric, "documents": self.documents}
        printed = self.rouge155 or [(None, None, None)] * 3
        for k, name in enumerate(("recall", "precision", "f_measure")):
            row[name] = getattr(self, name)
            row[f"rouge155_{name}"], row[f"rouge155_{name}_low"], row[f"rouge155_{name}_high"] = (
                None if v is None else float(v) for v in printed[k]
            )
        for k, name in enumerate(("recall", "precision", "f_measure")):
            row[f"micro_{name}"] = self.micro[k]
        row["bootstrap_f_measure_low"], row["bootstrap_f_measure_high"] = self.bootstrap_f
        for k, name in enumerate(("recall", "precision", "f_measure")):
            row[f"jackknife_se_{name}"] = self.jackknife_se[k]
        return row

    def format(self) -> str:
        """One line, ROUGE-1.5.5's printed F average and interval when there is one.

        Example: `ROUGE-2 F 0.21300 (0.20900 - 0.21700), 11490 documents`; without
        printed averages, the mean: `rouge2 F 0.21302 (mean), 11490 documents`.
        """
        if self.rouge155 is not None:
            f = self.rouge155.f_measure
            return f"{self.metric} F {f.average} ({f.low} - {f.high}), {self.documents} documents"
        return f"{self.metric} F {self.f_measure:.5f} (mean), {self.documents} documents"


@dataclass(frozen=True)
class CorpusScore(Mapping):
    """`corpus_score`'s result: a read-only mapping of metric tag -> `MetricScore`,
    in the settings' print order, and the signature."""

    metrics: dict[str, MetricScore]
    signature: Signature

    def __getitem__(self, tag: str) -> MetricScore:
        return self.metrics[tag]

    def __iter__(self):
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def rows(self, system: str = "system") -> list[dict]:
        """The pipeline's `system_scores` rows (without `profile`), one per metric."""
        signature = self.signature.format()
        return [{"system": system, **score.row(), "signature": signature} for score in self.metrics.values()]

    def __str__(self) -> str:
        return "\n".join([*(score.format() for score in self.metrics.values()), str(self.signature)])


def corpus_score(
    candidates: Sequence[Text],
    references: Sequence[Sequence[Text] | Text],
    *,
    settings: RougeSettings | str,
    doc_ids: Sequence[str] | None = None,
    eval_ids: str = "doc_id",
    system: str = "system",
    bootstrap_replicates: int = 1000,
    bootstrap_seed: int = 0,
    jackknife_buckets: int = 20,
    scorer: RougeScorer | None = None,
) -> CorpusScore:
    """Score a corpus: one system's candidates against their references.

    Args:
        candidates: one text per document (a string, one sentence per line, or a
            list of sentences).
        references: per document, its references (a list of texts; one string
            is one reference).  Unlike sacreBLEU, which takes reference
            *streams*, this is one list per document, in candidate order.
        settings: a `RougeSettings`, or ROUGE-1.5.5 flags such as "-n 2 -m".
        doc_ids: the documents' ids (default "1", "2", ... in order): ROUGE-1.5.5's
            printed averages depend on their order (see `report.evaluation_ids`).
        eval_ids: "doc_id" (the ids themselves) or "index" (1..N in sorted doc_id
            order, as pyrouge numbers its files).
        system: the system's name (ROUGE-1.5.5's bootstrap orders "<eval id>.<system>").
        bootstrap_replicates, bootstrap_seed, jackknife_buckets: the order-free
            bootstrap and jackknife of the pipeline (its `statistics` settings).
        scorer: a scorer of `settings` to reuse (its kernel and caches).

    Raises:
        RougeConfigError: inconsistent arguments.
        RougeInputError: a document cannot be scored, naming which.
    """
    if isinstance(settings, str):
        settings = RougeSettings.from_flags(settings)
    if isinstance(candidates, str) or isinstance(references, str):
        raise RougeConfigError("candidates and references are lists with one entry per document, not one text")
    candidates, references = list(candidates), [[r] if isinstance(r, str) else list(r) for r in references]
    if len(candidates) != len(references):
        raise RougeConfigError(
            f"{len(candidates)} candidates but {len(references)} reference lists: give one list of "
            "references per candidate"
        )
    if not candidates:
        raise RougeConfigError("no documents to score")
    doc_ids = [str(i) for i in range(1, len(candidates) + 1)] if doc_ids is None else [str(d) for d in doc_ids]
    if len(doc_ids) != len(candidates):
        raise RougeConfigError(f"{len(doc_ids)} doc_ids for {len(candidates)} documents")
    if len(set(doc_ids)) != len(doc_ids):
        raise RougeConfigError("doc_ids must be distinct: each names one document")
    if scorer is None:
        scorer = RougeScorer(settings)
    elif scorer.settings != settings:
        raise RougeConfigError("scorer was made with other settings than `settings`")

    tags = settings.metric_tags()
    sums = SystemSums(bootstrap_replicates, jackknife_buckets)
    results = scorer.score_batch(list(zip(candidates, references)))
    values = []
    for position, (doc_id, result) in enumerate(zip(doc_ids, results)):
        if isinstance(result, RougeInputError):
            raise RougeInputError(f"document {doc_id!r} (position {position}): {result}", reason=result.reason)
        values.append(stats_bytes(result, tags))
        sums.add(doc_id, values[-1], bootstrap_seed)
    sums.flush(bootstrap_seed)

    printed = _printed_averages(dict(zip(doc_ids, values)), settings, system, evaluation_ids(doc_ids, eval_ids))
    metrics = {
        tag: _metric_score(tag, sums.metric(m), printed[m], settings) for m, tag in enumerate(tags)
    }
    signature = Signature.from_settings(
        settings,
        eval_ids=eval_ids,
        nrefs=nrefs_of(map(len, references)),
        resampling=(bootstrap_replicates, bootstrap_seed, jackknife_buckets),
    )
    return CorpusScore(metrics, signature)


def _printed_averages(values: dict, settings: RougeSettings, system: str, ids: dict) -> list:
    """ROUGE-1.5.5's averages of every metric, as the pipeline forms them (rouge155
    only), from the documents' values ({doc_id: stats_bytes}): the script's
    bootstrap needs every document in evaluation-id order, so they come from the
    documents at hand, not from the accumulator, which keeps none."""
    if settings.preset != "rouge155":
        return [None] * len(settings.metric_tags())
    averages = averages_of_values(system, {ids[d]: stats_array(v) for d, v in values.items()}, settings)
    return [None] * len(settings.metric_tags()) if averages is None else [PrintedAverages(*a) for a in averages]


def _metric_score(tag: str, stats: SystemStats, printed, settings: RougeSettings) -> MetricScore:
    return MetricScore(
        metric=tag,
        documents=stats.documents,
        recall=stats.means[0],
        precision=stats.means[1],
        f_measure=stats.means[2],
        rouge155=printed,
        micro=stats.micro(settings.alpha_value),
        bootstrap_f=stats.bootstrap_interval(float(settings.confidence)),
        jackknife_se=stats.jackknife_se,
    )
