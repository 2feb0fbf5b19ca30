"""The run's counts, for `input = scored + errors` and run.json."""

from __future__ import annotations

import apache_beam as beam

from pipeline.io.tables import merge_read_counts, run_counts, write_counts


def _sum(pcoll, label: str, size):
    return pcoll | f"{label}Sizes" >> beam.Map(size) | f"Sum{label}" >> beam.CombineGlobally(sum)


def _per(pcoll, label: str, key):
    return pcoll | f"{label}Of" >> beam.Map(key) | f"CountPer{label}" >> beam.combiners.Count.PerElement() | f"{label}ToList" >> beam.combiners.ToList()


class DocumentsPerSystem(beam.CombineFn):
    """Scored batches (human pseudo-documents among them) of one profile, counted per
    system in one pass: [(system, n)], sorted.  The accumulator holds one count per
    system (never a document), so the combine is lifted before the shuffle."""

    def __init__(self, profile: str):
        self.profile = profile

    def create_accumulator(self):
        return {}

    def add_input(self, acc, batch):
        profile, rows = batch
        if profile == self.profile:
            for row in rows:
                acc[row[0]] = acc.get(row[0], 0) + 1
        return acc

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators)
        for acc in accumulators:
            for system, n in acc.items():
                total[system] = total.get(system, 0) + n
        return total

    def extract_output(self, acc):
        return sorted(acc.items())


class CountRows(beam.PTransform):
    """A dict of the graph's PCollections in ("read_counts", "references" (reference
    row batches), "unused", "human" (numbers of human pseudo-documents), "documents"
    (scored batches), "errors", "text_checks", "references_per_document", and with
    a previous run "reuse", its (name, value) counts: pipeline.reuse.REUSE_COUNTS);
    out, the run's counts (one dict, `pipeline.io.tables.run_counts`, whence the
    per-system table's documents had, rejected share and references per document),
    also written to `staging` as `_counts.json`.  Scored documents are counted once, in
    the first profile; the human pseudo-system is counted apart (it is not an input
    row).  A document's rows are all in one batch, so its doc_id is counted once by
    counting it per batch."""

    def __init__(self, staging: str, first_profile: str):
        super().__init__()
        self.staging, self.first = staging, first_profile

    def expand(self, c):
        first = self.first
        # Texts the settings read badly, (kind, owner, doc_id) (optional: none when not given).
        text_checks = c.get("text_checks") or (c["read_counts"].pipeline | "NoTextChecks" >> beam.Create([]))
        # The fewest and the most references of a scored document (optional: null when not given).
        references = c.get("references_per_document") or (c["read_counts"].pipeline | "NoReferenceCounts" >> beam.Create([None]))
        counts = {
            "read_counts": c["read_counts"] | "SumReadCounts" >> beam.CombineGlobally(merge_read_counts),

            "errors_by_reason": _per(c["errors"], "Reason", lambda e: e.reason),
            "reference_rows": _sum(c["references"], "ReferenceRows", lambda batch: len(batch[1])),
            "reference_rows_unused": c["unused"] | "SumUnusedReferences" >> beam.CombineGlobally(sum),
            "documents": _sum(
                c["documents"], "Documents", lambda batch: len({row[1] for row in batch[1]}) if batch[0] == first else 0
            ),
            "human_documents": c["human"] | "SumHuman" >> beam.CombineGlobally(sum),
            "documents_by_system": c["documents"] | "CountPerSystem" >> beam.CombineGlobally(DocumentsPerSystem(first)),
            # Rejected candidate rows per system, for "scored/had" and the rejected share.
            "errors_by_system": _per(
                c["errors"] | "CandidateErrors" >> beam.Filter(lambda e: e.system is not None and e.reason != "duplicate_reference"),
                "ErrorSystem", lambda e: e.system,
            ),
            "text_checks": text_checks
            | "KeyTextCheck" >> beam.Map(lambda t: ((t[1], t[0]), (1, t[2])))  # (kind, owner, doc_id) in
            | "TallyTextChecks" >> beam.CombinePerKey(lambda found: (sum(n for n, _ in found), min(d for _, d in found)))
            | "TextChecksToList" >> beam.combiners.ToList(),
            "references_per_document": references,
        }
        if "reuse" in c:
            counts["reuse"] = c["reuse"] | "ReuseToList" >> beam.combiners.ToList()
        # Scored input rows: the first profile's documents less its human pseudo-documents
        # (documents = scored + human), so no pass over the scored documents of their own.
        counts["scored"] = (
            counts["documents_by_system"]
            | "ScoredRows"
            >> beam.Map(lambda by_system, human: sum(n for _, n in by_system) - human,
                        beam.pvalue.AsSingleton(counts["human_documents"]))
        )
        run = (
            c["read_counts"].pipeline
            | "Once" >> beam.Create([None])
            | "Counts" >> beam.Map(run_counts, **{name: beam.pvalue.AsSingleton(pc) for name, pc in counts.items()})
        )
        run | "WriteCounts" >> beam.Map(write_counts, self.staging)
        return run
