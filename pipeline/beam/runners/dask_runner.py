"""Beam's DaskRunner (apache-beam 2.77) with the fixes this pipeline needs, each
named after the Beam defect it works around.  `--runner DaskRunner` runs this class
(pipeline.beam.runners.options maps the name here).

Beam translates a pipeline into dask bags: Create -> a bag, ParDo -> map_partitions
(one partition is one bundle), GroupByKey -> bag.groupby, Flatten -> concat.  Its
defects, found in its source (apache_beam/runners/dask) or in runs of this
pipeline, each covered by a test in tests/pipeline/beam/runners/test_dask_runner.py
that fails without its fix:

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
* DOFN_SHARED_BY_BUNDLES: every bundle of a ParDo runs the one DoFn object of the
  graph, so two bundles that run at once in one worker process (worker threads,
  or a cluster in the driver's process) share its state: a DoFn that holds rows
  between `process` and `finish_bundle` (this pipeline's spill writers) mixed and
  lost them (500 of 4,000 rows, twice with the counts balanced).  Here a bundle
  unpickles a DoFn of its own, as Beam's own workers do.
* SHUFFLE_TASKS: GroupByKey is `bag.groupby`, whose task-based shuffle makes about
  (partitions)^2 tasks per GroupByKey: 1,486 of the 2,001 tasks of a run of 8 files
  on 2 workers, for a graph whose groupings carry only small things (spill files'
  places, accumulators), at a millisecond or more of scheduler and worker time
  each.  Here a GroupByKey is one task per input partition (its pairs split by a
  hash of the key that every process computes alike) and one per output partition.
* GRAPH_REOPTIMISED: the graph is optimised twice (`dask.optimize`, then again by
  `client.compute`), and each side input's on its own (`bag.to_delayed()` optimises
  by default): each optimisation renames the tasks it fuses, so the copies no longer
  share names and every reader of a stage computes its own copy of the whole
  upstream (every pair of a run was scored 12 times, every file read twice).  Here
  the side inputs are taken as built and the whole graph is optimised once, by
  `client.compute`: each task once.
* OPTIONS_NOT_ON_WORKERS: the workers never get the pipeline's options, so Beam's
  filesystems there ignore what configures them (`--s3_endpoint_url`, `--s3_region_name`,
  `--no_auth`): only the driver's own file calls used them.  Here each bundle gives
  Beam's FileSystems the run's options first, as Beam's own workers have them.
* COMBINE_NOT_LIFTED: CombinePerKey runs as GroupByKey + CombineValues, every value
  shuffled.  Here it is Beam's LiftedCombinePerKey (what the DirectRunner runs): each
  bundle combines its values per key first, and only accumulators are shuffled.
* ONE_PARTITION_OF_FILES: Create puts up to 128 elements in one partition, so every
  input file is read by one task, on one worker, and so is every later stage (a
  stage keeps its input's partitions).  Here a Create's elements (the input files,
  for this pipeline's readers) are spread over one partition per worker thread of
  the cluster, unless --dask_npartitions or --dask_partition_size says otherwise.
  (One partition per file was tried: 9,723 tasks for 8 files, whose scheduling
  cost more than the work; two per thread: more tasks, more CPU.)

Beyond Beam's runner: the run fails, saying so, when no worker has been connected
for run.cluster_wait_seconds, or when the scheduler is lost (a run whose tasks did
not all finish is never taken for a finished one); and the workers hand their
progress counters to the driver as Dask events (pipeline.beam.progress), which
the driver writes to the run's progress folder, as local workers do.

Beam's internals that this module reads are declared in `INTERNALS` and checked
before a run (pipeline.beam.runners.patches).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import re
import time
import uuid

from apache_beam import DoFn, pvalue
from apache_beam.internal import pickler
from apache_beam.pipeline import PipelineVisitor, PTransformOverride
from apache_beam.runners import common
from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, _OutputHandler
from apache_beam.runners.dask import dask_runner as beam_dask
from apache_beam.runners.dask import transform_evaluator as te
from apache_beam.runners.dask.overrides import dask_overrides
from apache_beam.runners.runner import PipelineState
from apache_beam.transforms import core
from apache_beam.transforms.combiners import LiftedCombinePerKey
from apache_beam.transforms.sideinputs import SideInputMap

from pipeline.beam import progress
from pipeline.beam.runners.patches import Internals
from pipeline.progress import write_counts

DaskOptions = beam_dask.DaskOptions  # registers --dask_client_address etc.

LOOK_SECONDS = 0.5  # between two looks at the run's tasks (in this process)
WORKERS_SECONDS = 2.0  # between two questions to the scheduler: how many workers?
PARTITIONS_PER_THREAD = 1  # a Create's partitions (so every later stage's), per worker thread


def _used():
    translations = ("Receiver", "get_windowed_value", "defenestrate", "DaskBagOp", "TRANSLATIONS", "ParDo", "NoOp",
                    "Flatten", "Create", "GroupByKey")
    return [(te, name) for name in translations] + [
        (common, "_OutputHandler"), (common, "DoFnInvoker"), (common, "DoFnSignature"), (common, "DoFnContext"),
        (beam_dask, "DaskRunnerResult"), (DaskOptions, "_extract_bag_kwargs"), (pvalue.AsSideInput, "_view_options"),
        (pvalue.AsSideInput.__init__.__code__, "_window_mapping_fn"),
    ]


INTERNALS = Internals("the Dask runner's fixes (pipeline/beam/runners/dask_runner.py)", uses=_used)


class ClusterLost(Exception):
    """The Dask cluster went away (no worker, or no scheduler) before the run ended."""


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


class _Publish:
    """A worker's progress counters, handed to the driver as a Dask event of `topic`."""

    def __init__(self, topic: str):
        self.topic = topic

    def __call__(self, name: str, counts: dict) -> None:
        from distributed import get_worker

        try:
            get_worker().log_event(self.topic, {"name": name, "counts": counts})
        except ValueError:  # not on a worker (a task run by the client itself)
            pass


@dataclasses.dataclass(frozen=True)
class _Run:
    """What every bundle of a run gets besides its ParDo: the run's pipeline options
    and its progress topic ("": none)."""

    options: object = None
    topic: str = ""

    def enter(self) -> None:
        """This worker set up for the run: its Beam filesystems configured by the run's
        options (OPTIONS_NOT_ON_WORKERS), its progress counters published."""
        from apache_beam.io.filesystems import FileSystems

        if self.options is not None:
            FileSystems.set_options(self.options)
        progress.publish_to(_Publish(self.topic) if self.topic else None)


def _bundle(items, pickled_fn, label, args, kwargs, window_fn, run, side_specs, *side_values):
    """One partition through one ParDo (SIDE_INPUT_RECOMPUTED, FINISH_BUNDLE_OUTPUT_DROPPED,
    DOFN_SHARED_BY_BUNDLES)."""
    run.enter()
    fn = pickler.loads(pickled_fn)
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

    run = _Run()  # (set by DaskRunner.run_pipeline)

    def apply(self, input_bag, side_inputs=None):
        import dask

        main_input = next(iter(self.applied.main_inputs.values()))
        window_fn = main_input.windowing.windowfn if hasattr(main_input, "windowing") else None
        specs, values = [], []
        for view, bag in side_inputs or []:
            specs.append((type(view), view._view_options(), view._window_mapping_fn))
            # GRAPH_REOPTIMISED: the side input's own tasks, not an optimised copy of them
            values.append(dask.delayed(_concat)(*bag.to_delayed(optimize_graph=False)))
        args, kwargs = self.transform.raw_side_inputs
        fn, label = pickler.dumps(self.transform.fn), self.transform.label  # DOFN_SHARED_BY_BUNDLES
        return input_bag.map_partitions(_bundle, fn, label, list(args), kwargs, window_fn, self.run, specs, *values)


class Create(te.Create):
    """A Create in `partitions` partitions at most (ONE_PARTITION_OF_FILES); Beam's own
    sizing when the user set one."""

    partitions = 1  # (set by DaskRunner.run_pipeline)

    def apply(self, input_bag, side_inputs=None):
        if self.bag_kwargs.get("npartitions") or self.bag_kwargs.get("partition_size"):
            return super().apply(input_bag, side_inputs)
        import dask.bag as db

        items = self.transform.values
        return db.from_sequence(items, partition_size=max(1, math.ceil(len(items) / self.partitions)))


def _split(items, parts: int) -> list:
    """A partition's (key, windowed value) pairs in `parts` lists, by a hash of the key
    that is the same in every process (dask's tokenize)."""
    from dask.base import tokenize

    out = [[] for _ in range(parts)]
    for item in items:
        out[int(tokenize(item[0]), 16) % parts if parts > 1 else 0].append(item)
    return out


def _join(part: int, *splits) -> list:
    """Output partition `part` of a GroupByKey: its pairs from every split, grouped
    (key, [values]) as Beam's Dask GroupByKey gives them."""
    groups: dict = {}
    for split in splits:
        for key, value in split[part]:
            groups.setdefault(key, []).append(te.defenestrate(value))
    return list(groups.items())


class GroupByKey(te.DaskBagOp):
    """A GroupByKey as one split task per input partition and one join task per output
    partition (SHUFFLE_TASKS); at most `partitions` output partitions."""

    partitions = 1  # (set by DaskRunner.run_pipeline)

    def apply(self, input_bag, side_inputs=None):
        import dask
        import dask.bag as db

        parts = max(1, min(input_bag.npartitions, self.partitions))
        # (a bag's step: the split is fused into the task that makes the partition)
        splits = input_bag.map_partitions(_split, parts).to_delayed(optimize_graph=False)
        return db.from_delayed([dask.delayed(_join)(j, *splits) for j in range(parts)])


class _LiftCombinePerKey(PTransformOverride):
    """COMBINE_NOT_LIFTED: CombinePerKey as Beam's LiftedCombinePerKey (as the
    DirectRunner does, in the default windowing)."""

    def matches(self, applied) -> bool:
        return isinstance(applied.transform, core.CombinePerKey) and applied.inputs[0].windowing.is_default()

    def get_replacement_transform_for_applied_ptransform(self, applied):
        transform = applied.transform
        try:
            return LiftedCombinePerKey(transform.fn, transform.args, transform.kwargs)
        except NotImplementedError:  # (ten side inputs or more)
            return transform


def _select(pairs, tag) -> list:
    """The values of one output of a ParDo's partition of (tag, value) pairs."""
    return [value for t, value in pairs if t == tag]


class _ProgressToFolder:
    """The driver's side of the workers' progress events: each worker's latest
    counts, as the file a local worker would have written in `folder`."""

    def __init__(self, folder: str):
        self.folder = folder

    def __call__(self, event) -> None:
        _, message = event
        try:
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(message["name"]))[:200]
            write_counts(self.folder, name, message["counts"])
        except (KeyError, TypeError):  # not ours
            pass


class _Result(beam_dask.DaskRunnerResult):
    """Beam's result, waiting for the run's tasks while it watches the cluster: no
    worker connected for `wait_seconds`, or the scheduler gone, is ClusterLost; a
    run whose tasks did not all finish is never DONE.  The client is closed once
    the run ended (Beam's is left open, trying to reach a scheduler that may be gone)."""

    def __init__(self, client, futures, address: str, wait_seconds: float):
        super().__init__(client, futures)
        self.address, self.wait_seconds = address, wait_seconds

    def wait_until_finish(self, duration=None) -> str:
        try:
            self._wait()
            self._state = PipelineState.DONE
        except BaseException:
            self._state = PipelineState.FAILED
            try:
                self.client.cancel(self.futures)
            except Exception:  # noqa: BLE001 (the cluster may be gone already)
                pass
            raise
        finally:
            if self.state in (PipelineState.DONE, PipelineState.FAILED, PipelineState.CANCELLED):
                self.client.close()
        return self.state

    def _wait(self) -> None:
        seen = looked = time.monotonic()
        while True:
            statuses = [f.status for f in self.futures]
            for future, status in zip(self.futures, statuses):
                if status == "error":
                    future.result()  # raises the task's error
            if all(status == "finished" for status in statuses):
                return
            if any(status in ("cancelled", "lost") for status in statuses) or self.client.status != "running":
                raise ClusterLost(
                    f"the connection to the Dask scheduler at {self.address} was lost before the run ended "
                    "(the scheduler stopped, or the network failed); the run was stopped, nothing was published"
                )
            now = time.monotonic()
            if now - looked >= WORKERS_SECONDS:
                looked = now
                if self._workers():
                    seen = now
            if self.wait_seconds and now - seen >= self.wait_seconds:
                raise ClusterLost(
                    f"no Dask worker has been connected to the scheduler at {self.address} for "
                    f"{now - seen:.0f} s (run.cluster_wait_seconds = {self.wait_seconds:g}); the run was "
                    "stopped, nothing was published"
                )
            time.sleep(LOOK_SECONDS)

    def _workers(self) -> int:
        try:
            return len(self.client.nthreads())
        except Exception:  # noqa: BLE001 (the scheduler is gone: the next look says so)
            return 0


class DaskRunner(beam_dask.DaskRunner):
    """Beam's DaskRunner with the fixes above.  `cluster_wait_seconds`: how long the
    run waits for a scheduler to answer and for a worker to be connected;
    `progress_folder`: where the workers' counters go (pipeline.run_progress)."""

    def __init__(self, cluster_wait_seconds: float = 0, progress_folder: str | None = None):
        super().__init__()
        self.cluster_wait_seconds, self.progress_folder = cluster_wait_seconds, progress_folder

    @staticmethod
    def to_dask_bag_visitor(bag_kwargs=None, run: _Run = _Run(), partitions: int = 1) -> PipelineVisitor:
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
                    bag = bag.map_partitions(_select, pcoll.tag)
                return bag

            def visit_transform(self, node) -> None:
                if not hasattr(self, "ops"):
                    self.ops = {}
                op_class = te.TRANSLATIONS.get(node.transform.__class__, te.NoOp)
                op_class = {te.ParDo: ParDo, te.Create: Create, te.GroupByKey: GroupByKey}.get(op_class, op_class)
                op = op_class(node, bag_kwargs=bag_kwargs)
                if isinstance(op, ParDo):
                    op.run = run
                if isinstance(op, (Create, GroupByKey)):
                    op.partitions = partitions
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
        import dask.distributed as ddist

        INTERNALS.check()
        dask_options = options.view_as(DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = DaskOptions._extract_bag_kwargs(dask_options)
        if self.cluster_wait_seconds and dask_options.get("timeout") is None:
            dask_options["timeout"] = self.cluster_wait_seconds  # for the scheduler to answer
        address = dask_options.get("address") or dask_options.get("scheduler_file") or "(a local cluster)"
        try:
            client = ddist.Client(**dask_options)
        except OSError as err:
            raise ClusterLost(
                f"no Dask scheduler answered at {address} (run.cluster_wait_seconds = {self.cluster_wait_seconds:g}): "
                f"start it, or correct --dask_client_address ({err})"
            ) from None
        topic = ""
        if self.progress_folder:
            topic = f"rouge-progress-{uuid.uuid4().hex}"
            client.subscribe_topic(topic, _ProgressToFolder(self.progress_folder))
        pipeline.replace_all([_LiftCombinePerKey()] + dask_overrides())
        threads = sum(client.nthreads().values())
        visitor = self.to_dask_bag_visitor(bag_kwargs, _Run(options, topic), max(1, PARTITIONS_PER_THREAD * threads))
        pipeline.visit(visitor)
        # GRAPH_REOPTIMISED: optimised once, here, as one graph
        futures = client.compute(visitor.sinks(), optimize_graph=True)
        return _Result(client, futures, address, self.cluster_wait_seconds)
