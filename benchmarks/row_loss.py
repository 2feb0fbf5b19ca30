"""Where Beam 2.77's worker-process runner loses rows of one large file
(docs/many_systems.md: a race in the runner's data plane, fixed by
pipeline/beam/runners/fn_runner_fixes.py; --fixed applies the fix, as every run with worker processes does).

    python benchmarks/make_scale_corpus.py --out /tmp/s1m --systems 10 --documents 100000 --shards 1
    (for f in /tmp/s1m/*.gz; do zcat $f; done) > /tmp/one1m.jsonl
    python benchmarks/row_loss.py /tmp/one1m.jsonl [--mode multi_processing|in_memory] [--fixed]

Reads the file with the project's reader (ReadSummaries), keys the candidates by
doc_id and groups them (CoGroupByKey, as GroupDocuments does), and counts three
times: rows the reading stage emitted (a Beam counter in that stage), elements the
runner's GroupByKey buffer received (a wrapper around the FnApiRunner's
GroupingBuffer.append, in this process), and candidates the grouped documents
hold (a counter in the next stage).  The loss shows (in about 5 of 7 runs of
1,000,000 rows on a loaded 2-core machine, never in process) as emitted >
received = grouped.  Not a test: it takes minutes and depends on the load
(tests/pipeline/beam/runners/test_fn_runner_fixes.py reproduces it in small, forced).
The elements the GroupByKey buffer misses were lost on the way into the Flatten
stage before it (GroupDocuments' CoGroupByKey), whose input the runner sends to a
worker as many 10 MB chunks.
"""

from __future__ import annotations

import argparse
import collections
import logging
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="one joined-form JSONL file")
    ap.add_argument("--mode", default="multi_processing", choices=["multi_processing", "in_memory", "multi_threading"])
    ap.add_argument("--log", help="Beam's log (INFO) goes here (default: a temporary file)")
    ap.add_argument("--fixed", action="store_true", help="apply pipeline.beam.runners.fn_runner_fixes first")
    args = ap.parse_args()

    import contextlib

    import apache_beam as beam
    from apache_beam.metrics import Metrics
    from apache_beam.metrics.metric import MetricsFilter
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.portability.fn_api_runner import execution

    from pipeline.beam.read import ReadSummaries
    from pipeline.config import InputConfig

    received = collections.Counter()
    append = execution.GroupingBuffer.append

    def counting_append(self, data):  # the runner's GroupByKey buffer, in this process
        before = sum(map(len, self._table.values()))
        append(self, data)
        received["elements"] += sum(map(len, self._table.values())) - before
        received["chunks"] += 1

    execution.GroupingBuffer.append = counting_append
    log = args.log or tempfile.mkstemp(prefix="row-loss-", suffix=".log")[1]
    logging.basicConfig(level=logging.INFO, filename=log)

    def emitted(pair, counter=Metrics.counter("row_loss", "emitted")):
        counter.inc()
        return pair

    def grouped(element, counter=Metrics.counter("row_loss", "grouped")):
        counter.inc(len(list(element[1]["candidates"])))

    config = InputConfig(candidates=(args.file,))
    options = PipelineOptions(["--runner=FnApiRunner", f"--direct_running_mode={args.mode}", "--direct_num_workers=2"])
    p = beam.Pipeline(options=options)
    read = p | ReadSummaries(config, [args.file], [], tempfile.mkdtemp(prefix="row-loss-"), 30)
    # one element per row, as the pipeline sent them before rows travelled in batches
    rows = read["candidates"] | "Rows" >> beam.FlatMap(lambda batch: batch[1])
    keyed = rows | "Key" >> beam.Map(lambda c: (c[1], c)) | "Emitted" >> beam.Map(emitted)
    references = read["references"] | "ReferenceRows" >> beam.FlatMap(lambda batch: batch[1]) | "KeyReferences" >> beam.Map(lambda r: (r[0], r))
    {"candidates": keyed, "references": references} | beam.CoGroupByKey() | "Grouped" >> beam.Map(grouped)
    from pipeline.beam.runners import fn_runner_fixes

    with fn_runner_fixes.fixed(options) if args.fixed else contextlib.nullcontext():
        result = p.run()
        result.wait_until_finish()
    counters = {m.key.metric.name: m.committed for m in result.metrics().query(MetricsFilter())["counters"]}
    print(
        f"rows read {counters.get('reading_rows', 0):,}; emitted by the reading stage {counters.get('emitted', 0):,}; "
        f"received by the runner's GroupByKey buffer {received['elements']:,} (in {received['chunks']} chunks); "
        f"grouped {counters.get('grouped', 0):,}; Beam's log: {log}"
    )


if __name__ == "__main__":
    main()
