"""What Beam's local runner costs per element, without the project's code: the
marginal CPU per element (between 20,000 and 80,000 elements, so start-up cancels)
of a pipeline that only moves small (key, (str, str, 336 bytes)) tuples through 10
fused identity Maps, or through 2 GroupByKeys, beside the same pipeline with
neither.  The floor under the pipeline's per-pair cost (docs/performance.md).

    python benchmarks/bench_beam_elements.py
"""

from __future__ import annotations

import time

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions


def cpu_seconds(n: int, maps: int, groups: int) -> float:
    options = PipelineOptions(["--runner=FnApiRunner", "--direct_running_mode=in_memory"])
    start = time.process_time()
    with beam.Pipeline(options=options) as p:
        pcoll = p | beam.Create([0]) | beam.FlatMap(
            lambda _: ((i % 1000, ("sys", f"doc{i}", b"x" * 336)) for i in range(n))
        )
        for k in range(maps):
            pcoll = pcoll | f"Map{k}" >> beam.Map(lambda x: x)
        for k in range(groups):
            pcoll = (
                pcoll
                | f"Group{k}" >> beam.GroupByKey()
                | f"Ungroup{k}" >> beam.FlatMap(lambda kv: ((kv[0], v) for v in kv[1]))
            )
        pcoll | beam.combiners.Count.Globally()
    return time.process_time() - start


def main() -> None:
    for maps, groups in [(0, 0), (10, 0), (0, 2)]:
        small, large = cpu_seconds(20_000, maps, groups), cpu_seconds(80_000, maps, groups)
        print(f"{maps} Maps, {groups} GroupByKeys: {(large - small) / 60_000 * 1e6:.1f} us per element", flush=True)


if __name__ == "__main__":
    main()
