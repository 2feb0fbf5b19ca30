"""What every run pays for the graph, whatever its input: on the local runner a
CombineGlobally (9 transforms, 3 stages, its default for an empty input) costs
about 0.09 CPU-s a run, a Map 0.01 (docs/nightly.md, "A fixed part").  The graph
gathers with side inputs (`Gathered`) and counts in one combine; this keeps it so."""

import apache_beam as beam
from apache_beam.pipeline import PipelineVisitor

from pipeline.beam.combiners import Gathered
from pipeline.beam.graph import build_pipeline
from pipeline.beam.run import resolve_inputs
from pipeline.config import InputConfig, RougeConfig, RunConfig
from tests.pipeline.runs import write_jsonl


def _transforms(p) -> list:
    found = []

    class Visitor(PipelineVisitor):
        def enter_composite_transform(self, node):
            found.append(node)

        def visit_transform(self, node):
            found.append(node)

    p.visit(Visitor())
    return found


def test_the_graph_has_one_global_combine_and_no_reshuffle_for_one_file(tmp_path):
    rows = [{"system": s, "doc_id": f"d{i}", "candidate": "a b c", "references": ["a b d"]}
            for s in ("x", "y") for i in range(3)]
    config = RunConfig(input=InputConfig(candidates=(str(write_jsonl(tmp_path / "in.jsonl", rows)),)),
                       rouge=RougeConfig(args="-n 2 -m -c 95 -r 20")).validate()
    p = beam.Pipeline()
    build_pipeline(p, config, resolve_inputs(config), str(tmp_path / "staging"))
    nodes = _transforms(p)
    combines = [n.full_label for n in nodes if isinstance(n.transform, beam.CombineGlobally)]
    assert combines == ["CountRows/Sum"], combines  # (the run's counts: one combine, lifted)
    reshuffles = [n.full_label for n in nodes if type(n.transform).__name__ == "Reshuffle"]
    assert reshuffles == [], reshuffles  # (one input file: no Create of more than one element)
    gathers = sorted(n.full_label for n in nodes if isinstance(n.transform, Gathered))
    assert gathers == ["AggregatePerSystem/GatherSummaries", "Significance/GatherBlocks"], gathers
