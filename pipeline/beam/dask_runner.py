"""Beam's DaskRunner (apache-beam 2.77) with the fixes this pipeline needs, each
named after the Beam defect it works around.  `--runner DaskRunner` runs this class
(pipeline.beam.options maps the name here).

Beam translates a pipeline into dask bags: Create -> a bag, ParDo -> map_partitions
(one partition is one bundle), GroupByKey -> bag.groupby, Flatten -> concat.  Its
defects, found in its source (apache_beam/runners/dask) and each covered by a test
in tests/pipeline/beam/test_dask_runner.py that fails on the stock runner:

* TAGGED_OUTPUTS_MIXED: a multi-output ParDo returns one bag holding every output
  with its tag dropped, and every consumer reads that bag, whatever tag it asked
  for.  Here a ParDo's bag holds (tag, value) pairs and each consumer filters its
  own tag.
* ONLY_LAST_SINK_COMPUTED: `run_pipeline` computes only the bag of the last
  transform visited, so every other sink (a pipeline that writes several tables)
  never runs.  Here every bag that no transform consumes is computed.
* SIDE_INPUT_RECOMPUTED: a side input is read with `list(bag)`, a nested
  synchronous compute of the side input's whole upstream graph inside every task
  that reads it.  Here each side input is one delayed list, a dependency of the
  tasks that read it: computed once, by the cluster.
* FINISH_BUNDLE_OUTPUT_DROPPED: the outputs of a bundle are collected before
  `finish_bundle` runs, and into a receiver list shared by every bundle of the
  task graph.  Here each bundle collects into its own list, after finish_bundle.

What it still lacks (not defects of a result, but of cost): no combiner lifting
(CombinePerKey runs as GroupByKey + CombineValues) and one task per partition.
"""

from __future__ import annotations

import collections
import dataclasses

from apache_beam import pvalue
from apache_beam.pipeline import PipelineVisitor
from apache_beam.runners.dask import dask_runner as beam_dask
from apache_beam.runners.dask import transform_evaluator as te
from apache_beam.runners.dask.overrides import dask_overrides
from apache_beam.transforms.sideinputs import SideInputMap

DaskOptions = beam_dask.DaskOptions  # registers --dask_client_address etc.


class _Receiver(te.Receiver):
    def __init__(self, tag, values: list):
        self.tag, self.values = tag, values

    def receive(self, windowed_value):
        self.values.append((self.tag, windowed_value))


class _Collect(dict):
    """A Beam receiver map for one bundle: every output as (tag, windowed value);
    tag None is the main output."""

    def __init__(self):
        super().__init__()
        self.values: list = []

    def __missing__(self, tag):
        self[tag] = receiver = _Receiver(tag, self.values)
        return receiver


class _SideInput:
    """What a DoFn invoker iterates for a side input: the values of a computed list
    (passed in by dask as a task dependency), each in its window."""

    def __init__(self, values, window_fn):
        self.values, self.window_fn = values, window_fn

    def __iter__(self):
        for value in self.values:
            yield te.get_windowed_value(value, self.window_fn)


def _bundle(items, fn, label, args, kwargs, window_fn, side_specs, *side_values):
    """One partition through one ParDo (SIDE_INPUT_RECOMPUTED, FINISH_BUNDLE_OUTPUT_DROPPED)."""
    from apache_beam import DoFn  # noqa: PLC0415
    from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, _OutputHandler  # noqa: PLC0415

    collect = _Collect()
    side_inputs = [
        SideInputMap(kind, options, _SideInput(values, mapping))
        for (kind, options, mapping), values in zip(side_specs, side_values)
    ]
    invoker = DoFnInvoker.create_invoker(
        DoFnSignature(fn),
        _OutputHandler(
            window_fn=window_fn,
            main_receivers=collect[None],
            tagged_receivers=collect,
            per_element_output_counter=None,
            output_batch_converter=None,
            process_yields_batches=False,
            process_batch_yields_elements=False,
        ),
        context=DoFnContext(label, state=None),
        side_inputs=side_inputs,
        input_args=args,
        input_kwargs=kwargs,
        user_state_context=None,
        bundle_finalizer_param=DoFn.BundleFinalizerParam(),
    )
    invoker.invoke_setup()
    invoker.invoke_start_bundle()
    for item in items:
        invoker.invoke_process(te.get_windowed_value(item, window_fn))
    invoker.invoke_finish_bundle()
    invoker.invoke_teardown()
    return [(tag, wv.value) for tag, wv in collect.values]


def _concat(*parts):
    return [value for part in parts for value in part]


class ParDo(te.DaskBagOp):
    """A ParDo as map_partitions; its bag holds (tag, value) pairs (TAGGED_OUTPUTS_MIXED)."""

    def apply(self, input_bag, side_inputs=None):
        import dask  # noqa: PLC0415

        main_input = next(iter(self.applied.main_inputs.values()))
        window_fn = main_input.windowing.windowfn if hasattr(main_input, "windowing") else None
        specs, values = [], []
        for view, bag in side_inputs or []:
            specs.append((type(view), view._view_options(), view._window_mapping_fn))
            values.append(dask.delayed(_concat)(*bag.to_delayed()))
        args, kwargs = self.transform.raw_side_inputs
        fn, label = self.transform.fn, self.transform.label
        return input_bag.map_partitions(_bundle, fn, label, list(args), kwargs, window_fn, specs, *values)


@dataclasses.dataclass(frozen=True)
class _TagIs:
    tag: object

    def __call__(self, pair) -> bool:
        return pair[0] == self.tag


def _value(pair):
    return pair[1]


class _Result(beam_dask.DaskRunnerResult):
    """Beam's result, closing its client once the run ended (Beam's leaves it open,
    and it keeps trying to reach a scheduler that may be gone)."""

    def wait_until_finish(self, duration=None) -> str:
        try:
            return super().wait_until_finish(duration)
        finally:
            if self.state in ("DONE", "FAILED", "CANCELLED"):
                self.client.close()


class DaskRunner(beam_dask.DaskRunner):
    """Beam's DaskRunner with the fixes above."""

    @staticmethod
    def to_dask_bag_visitor(bag_kwargs=None) -> PipelineVisitor:
        bag_kwargs = bag_kwargs or {}

        @dataclasses.dataclass
        class Visitor(PipelineVisitor):
            bags: dict = dataclasses.field(default_factory=collections.OrderedDict)
            consumed: set = dataclasses.field(default_factory=set)

            def bag_of(self, pcoll):
                """The bag of a PCollection: a ParDo's output filtered to its tag."""
                producer = pcoll.producer
                self.consumed.add(producer)
                bag = self.bags[producer]
                if isinstance(self.ops[producer], ParDo):
                    bag = bag.filter(_TagIs(pcoll.tag)).map(_value)
                return bag

            def visit_transform(self, node) -> None:
                if not hasattr(self, "ops"):
                    self.ops = {}
                op_class = te.TRANSLATIONS.get(node.transform.__class__, te.NoOp)
                op_class = ParDo if op_class is te.ParDo else op_class
                op = op_class(node, bag_kwargs=bag_kwargs)
                kws = {"input_bag": None, "side_inputs": None}
                inputs = [i for i in node.inputs if not isinstance(i, pvalue.PBegin)]
                if list(node.inputs):
                    bags = [self.bag_of(i) for i in inputs if i.producer in self.bags]
                    if any(isinstance(i, pvalue.PBegin) for i in node.inputs):
                        bags = [None] + bags
                    kws["input_bag"] = bags[0] if len(bags) == 1 and not isinstance(op, te.Flatten) else bags
                if node.side_inputs:
                    if not isinstance(op, ParDo):
                        raise NotImplementedError(f"side inputs of {node.full_label} on Dask")
                    kws["side_inputs"] = [(si, self.bag_of(si.pvalue)) for si in node.side_inputs]
                self.ops[node] = op
                self.bags[node] = op.apply(**kws)

            def sinks(self) -> list:
                """Every bag that no transform reads (ONLY_LAST_SINK_COMPUTED)."""
                return [bag for node, bag in self.bags.items() if node not in self.consumed and bag is not None]

        return Visitor()

    def run_pipeline(self, pipeline, options):
        import dask  # noqa: PLC0415
        import dask.distributed as ddist  # noqa: PLC0415

        dask_options = options.view_as(DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = DaskOptions._extract_bag_kwargs(dask_options)
        client = ddist.Client(**dask_options)
        pipeline.replace_all(dask_overrides())
        visitor = self.to_dask_bag_visitor(bag_kwargs)
        pipeline.visit(visitor)
        futures = client.compute(list(dask.optimize(*visitor.sinks())))
        return _Result(client, futures)
