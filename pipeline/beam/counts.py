"""The run's counts, for `input = scored + errors` and run.json."""

from __future__ import annotations

from collections import Counter

import apache_beam as beam

from pipeline.io.tables import run_counts, write_counts


class RunCounts(beam.CombineFn):
    """Every count of the run in one combine: (name, small value) in, made where the
    elements are (a batch's size, a batch's documents per system), out the keyword
    arguments of `pipeline.io.tables.run_counts`.  The accumulator holds sums and
    tallies per reason, system and text check, never a row, so the combine is lifted
    before the shuffle; every total is a sum, a count or a minimum, so the result
    does not depend on how the input is split or ordered."""

    def __init__(self, with_reuse: bool, references=None):
        self.with_reuse = with_reuse
        self.references = references  # (fewest, most) or None -> the run's (systems carried: pipeline.reuse)

    def create_accumulator(self):
        return {"rows_read": 0, "read_errors": Counter(), "errors_by_reason": Counter(), "errors_by_system": Counter(),
                "reference_rows": 0, "reference_rows_unused": 0, "documents": 0, "human_documents": 0,
                "documents_by_system": Counter(), "text_checks": {}, "references_per_document": [], "reuse": Counter(),
                "refused": []}

    def add_input(self, acc, item):
        name, value = item
        if name == "read_counts":
            acc["rows_read"] += value[0]
            acc["read_errors"].update(value[1])
        elif name == "error":
            reason, system = value
            acc["errors_by_reason"][reason] += 1
            if system is not None and reason != "duplicate_reference":  # a rejected candidate row
                acc["errors_by_system"][system] += 1
        elif name == "documents":
            acc["documents"] += value[0]
            acc["documents_by_system"].update(value[1])
        elif name == "text_check":
            key, doc_id = value
            n, example = acc["text_checks"].get(key, (0, doc_id))
            acc["text_checks"][key] = (n + 1, min(example, doc_id))
        elif name == "references_per_document":
            acc["references_per_document"].append(value)
        elif name == "reuse":
            if value[0] == "refused":
                acc["refused"].append(value[1])
            else:
                acc["reuse"][value[0]] += value[1]
        else:  # reference_rows, reference_rows_unused, human_documents
            acc[name] += value
        return acc

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators)
        for acc in accumulators:
            for name, value in acc.items():
                if name == "text_checks":
                    for key, (n, example) in value.items():
                        had, first = total[name].get(key, (0, example))
                        total[name][key] = (had + n, min(first, example))
                elif isinstance(value, Counter):
                    total[name].update(value)
                else:  # numbers and lists
                    total[name] += value
        return total

    def extract_output(self, acc):
        found = [r for r in acc["references_per_document"] if r is not None]
        fewest_and_most = (min(r[0] for r in found), max(r[1] for r in found)) if found else None
        human = acc["human_documents"]
        return {
            "read_counts": (acc["rows_read"], dict(acc["read_errors"])),
            # scored input rows: the first profile's documents less its human pseudo-documents
            "scored": sum(acc["documents_by_system"].values()) - human,
            "errors_by_reason": sorted(acc["errors_by_reason"].items()),
            "reference_rows": acc["reference_rows"],
            "reference_rows_unused": acc["reference_rows_unused"],
            "human_documents": human,
            "documents": acc["documents"],
            "documents_by_system": sorted(acc["documents_by_system"].items()),
            "errors_by_system": sorted(acc["errors_by_system"].items()),
            "text_checks": sorted(acc["text_checks"].items()),
            # the fewest and the most of every scored batch's (the signature's nrefs), or the carried systems'
            "references_per_document": self.references(fewest_and_most) if self.references else fewest_and_most,
            "reuse": (sorted(acc["reuse"].items()) + [("refused", r) for r in sorted(acc["refused"])]
                      if self.with_reuse else None),
        }


def _documents(batch, first: str) -> tuple[int, dict]:
    """A scored batch's documents and rows per system, in the first profile (a
    document's rows are all in one batch, so its doc_id is counted once per batch)."""
    profile, rows = batch
    if profile != first:
        return 0, {}
    return len({row[1] for row in rows}), Counter(row[0] for row in rows)


class CountRows(beam.PTransform):
    """A dict of the graph's PCollections in ("read_counts", "references" (reference
    row batches), "unused", "human" (numbers of human pseudo-documents), "documents"
    (scored batches), "errors", "text_checks" ((kind, owner, doc_id), optional),
    "references_per_document" ((fewest, most) references of a document, per scored
    batch; `references` makes the run's of them, with systems carried) and with a
    previous run "reuse", its (name, value) counts: pipeline.reuse.REUSE_COUNTS); out a
    dict: "counts", the run's counts (one dict, `pipeline.io.tables.run_counts`,
    whence the per-system table's documents had, rejected share and references per
    document), also written to `staging` as `_counts.json`, and "error_rows", the
    number of "errors" (the readers' own error rows are in the counts, not in
    it).  Scored documents are counted once, in the first profile; the human
    pseudo-system is counted apart (it is not an input row).

    Each input becomes (name, small value) where it is, and one combine sums them
    all (`RunCounts`): a graph of a few transforms, not a combine per count."""

    def __init__(self, staging: str, first_profile: str, references=None):
        super().__init__()
        self.staging, self.first, self.references = staging, first_profile, references

    def expand(self, c):
        first = self.first
        tags = {
            "read_counts": lambda n: ("read_counts", n),
            "errors": lambda e: ("error", (e.reason, e.system)),
            "references": lambda batch: ("reference_rows", len(batch[1])),
            "unused": lambda n: ("reference_rows_unused", n),
            "documents": lambda batch: ("documents", _documents(batch, first)),
            "human": lambda n: ("human_documents", n),
            "text_checks": lambda t: ("text_check", ((t[1], t[0]), t[2])),  # (owner, kind), doc_id
            "references_per_document": lambda r: ("references_per_document", r),
            "reuse": lambda item: ("reuse", item),
        }
        tagged = [c[name] | f"Tag{name.title().replace('_', '')}" >> beam.Map(tag) for name, tag in tags.items()
                  if c.get(name) is not None]
        summed = (
            tagged
            | "AllCounts" >> beam.Flatten()
            | "Sum" >> beam.CombineGlobally(RunCounts("reuse" in c, self.references))
        )
        run = summed | "Counts" >> beam.Map(lambda counts: run_counts(None, **counts))
        run | "WriteCounts" >> beam.Map(write_counts, self.staging)
        rows = summed | "ErrorRows" >> beam.Map(lambda counts: sum(n for _, n in counts["errors_by_reason"]))
        return {"counts": run, "error_rows": rows}
