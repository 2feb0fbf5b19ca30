"""Paired significance between systems, as a Beam transform (DESIGN.md section 7).

    scored batches (every metric's stats of each (system, doc_id), a document's
      systems together: the join's bucket holds all of them)
      -> per (profile, metric) and batch: a Block (its documents' R/P/F units as arrays)
      -> CombinePerKey: one rouge_core.significance.PairSums per measure (exact
         integer sums per system and per pair of systems), documents added a block
         at a time
      -> per (profile, metric): every pair's paired test, Holm (or
         Benjamini-Hochberg) across the pairs of each measure: one block of rows
      -> each block in a Parquet part file of the staging folder; the part files'
         paths gathered and streamed, in table order, into significance.{parquet,csv,md}

The statistics are the pure functions of `rouge_core.significance`; the
CombineFn only accumulates.  Every sum is an integer, so the table is the same
on every runner, sharding and order.

Cost: (batches) x (metrics) elements, combined in the stage that makes them (not
D x S(S-1)/2 pair elements, and no shuffle by document); an accumulator
holds 3 x 8 S^2 bytes (every system scored every document) or 3 x 32 S^2 bytes
(some did not), plus up to 20 documents for the exact test and a pending block
of 256 documents: 24 MB at 1,000 systems, whatever the number of documents.
What is gathered on one worker is the path of one part file per (profile, metric);
the writer reads them one at a time (a block is S(S-1)/2 x 3 rows: 1.5 million,
about 200 MB, at 1,000 systems).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Sequence
from itertools import combinations
from typing import NamedTuple

import apache_beam as beam
import numpy as np

from pipeline.beam.combiners import Gathered
from pipeline.beam.progress import tally
from pipeline.io import files
from pipeline.io.result_folder import ResultFolderError
from pipeline.io.rows import TableBoundError
from pipeline.io.tables import (
    DOCUMENTS_PER_ROW_GROUP,
    SIGNIFICANCE_COLUMNS,
    arrow_schema,
    column_key,
    csv_cell,
    document_batches,
    names,
)
from pipeline.render.significance import PADDED_ROWS, markdown_header, markdown_rows, markdown_table
from pipeline.reuse import REUSE_COUNTS
from rouge_core.aggregate import one_blas_thread, stack, units
from rouge_core.errors import RougeConfigError
from rouge_core.resampling import units_of
from rouge_core.significance import (
    ADJUSTMENT_ARRAYS,
    EXACT_MAX_DOCUMENTS,
    RESULT_FIELDS,
    PairSums,
    check_confidence,
    paired_tests,
)
from rouge_core.types import MEASURES

_BLOCK = 256  # documents per PairSums.add
# Every pair of S systems needs 4 S x S matrices of sums per measure of each metric
# (24 at pyrouge's 8 metrics: 768 MB at 1,000 systems, 19 GB at 5,000) and a table of
# S(S-1)/2 rows per measure: past this many systems only a baseline is tested.
MAX_ALL_PAIRS_SYSTEMS = 1_000


class TooManySystemsError(Exception):
    """Significance of every pair of systems, asked of more than MAX_ALL_PAIRS_SYSTEMS."""


def _check_all_pairs(systems: int) -> None:
    if systems > MAX_ALL_PAIRS_SYSTEMS:
        raise TooManySystemsError(
            f"significance of every pair of systems is bounded to {MAX_ALL_PAIRS_SYSTEMS:,} systems (its memory "
            f"and its table grow with the square of their number); this run has more than "
            f"{MAX_ALL_PAIRS_SYSTEMS:,}: name a baseline to test each system against it (--baseline NAME, or "
            "significance.baseline in the config), or set significance.enabled = false"
        )


class Block(NamedTuple):
    """Some documents of one metric, as arrays: `units` (documents, systems, R/P/F)
    in score units, `present` (documents, systems) true where the system scored the
    document."""

    doc_ids: list
    systems: list
    units: np.ndarray
    present: np.ndarray


class MetricSums:
    """SignificanceCombineFn's accumulator: one PairSums per measure (recall,
    precision, F) of one metric, and the blocks of documents waiting to enter them
    (until _BLOCK documents: PairSums.add costs S^2 per call, so a batch of a few
    documents of 1,000 systems waits for others)."""

    def __init__(self, against: str | None = None):
        self.against = against  # a baseline: only the pairs against it are kept (linear in the systems)
        self.sums = [PairSums(against=against) for _ in MEASURES]
        self.pending: list[Block] = []
        self.documents = 0  # in `pending`

    def add(self, block: Block) -> MetricSums:
        self.pending.append(block)
        self.documents += len(block.doc_ids)
        return self.flush() if self.documents >= _BLOCK else self

    def flush(self) -> MetricSums:
        if self.pending:
            systems = sorted({s for block in self.pending for s in block.systems})
            if self.against is None:  # (before any matrix of every pair grows past the bound)
                _check_all_pairs(len(set(systems).union(self.sums[0].systems)))
            x = np.zeros((self.documents, len(systems), len(MEASURES)), dtype=np.int64)
            present = np.zeros(x.shape[:2], dtype=bool)
            ids, start = [], 0
            for block in self.pending:
                where = np.searchsorted(systems, block.systems)
                rows = slice(start, start + len(block.doc_ids))
                x[rows, where] = block.units
                present[rows, where] = block.present
                ids += block.doc_ids
                start = rows.stop
            self.pending, self.documents = [], 0
            with one_blas_thread():
                for k, sums in enumerate(self.sums):
                    sums.add(ids, systems, x[:, :, k], present)
        return self

    def merge(self, other: MetricSums) -> MetricSums:
        other.flush()
        if self.against is None:
            _check_all_pairs(len(set(self.sums[0].systems).union(other.sums[0].systems)))
        for mine, theirs in zip(self.sums, other.sums):
            mine.merge(theirs)
        return self


class SignificanceCombineFn(beam.CombineFn):
    """Blocks of one metric in (a scored batch's documents, `Block`); out, a
    MetricSums with nothing pending (the sums of all the metric's documents):
    of every pair (up to MAX_ALL_PAIRS_SYSTEMS systems), or against `against`."""

    def __init__(self, against: str | None = None):
        self.against = against

    def create_accumulator(self):
        return MetricSums(self.against)

    def add_input(self, acc, block):
        return acc.add(block)

    def compact(self, acc):
        return acc.flush()

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators).flush()
        for acc in accumulators:
            total.merge(acc)
        return total

    def extract_output(self, acc):
        return acc.flush()


def metric_documents(batch, tags: dict[str, list[str]]):
    """A scored batch (profile, [(system, doc_id, values, digest), ...]) -> ((profile, metric),
    Block of the batch's documents) per metric: every system of a document is in its
    batch (the bucket of the join), so no shuffle by document is needed."""
    profile, rows = batch
    if not rows:
        return
    rpf = units(stack([row[2] for row in rows]))  # rows x metrics x 3
    systems = sorted({row[0] for row in rows})
    column = {system: k for k, system in enumerate(systems)}
    numbered: dict = {}
    document = np.array([numbered.setdefault(row[1], len(numbered)) for row in rows], dtype=np.intp)
    where = np.array([column[row[0]] for row in rows], dtype=np.intp)
    present = np.zeros((len(numbered), len(systems)), dtype=bool)
    present[document, where] = True
    if present.sum() < len(rows):
        cells = document * len(systems) + where
        twice = np.flatnonzero(np.bincount(cells) > 1)[0]
        doc_id = next(d for d, k in numbered.items() if k == twice // len(systems))
        raise ValueError(f"a system scored document {doc_id!r} twice: {systems[twice % len(systems)]!r}")
    x = np.zeros((len(numbered), len(systems), rpf.shape[1], 3), dtype=np.int64)
    x[document, where] = rpf
    doc_ids = list(numbered)
    for m, tag in enumerate(tags[profile]):
        yield (profile, tag), Block(doc_ids, systems, x[:, :, m, :], present)


def system_pairs(systems: Sequence[str], pairs_mode: str) -> list[tuple[str, str]]:
    """The (system_a, system_b) pairs to test among the sorted `systems`.

    "all": every pair, system_a < system_b by name.  A baseline's name: every
    other system against it, system_b = the baseline, so a positive difference
    means better than the baseline.

    Example:
        >>> system_pairs(["a", "b", "c"], "all")
        [('a', 'b'), ('a', 'c'), ('b', 'c')]
        >>> system_pairs(["a", "b", "c"], "b")
        [('a', 'b'), ('c', 'b')]
    """
    if pairs_mode == "all":
        return list(combinations(systems, 2))
    if pairs_mode not in systems:
        return []
    return [(s, pairs_mode) for s in systems if s != pairs_mode]


def significance_block(element, pairs_mode: str, confidence: float, adjust: str, known=None) -> tuple:
    """((profile, metric), MetricSums) -> ((profile, metric), block): the rows of this
    metric's table as columns (SIGNIFICANCE_COLUMNS' names -> a numpy array: floats
    with NaN for a missing cell, text as objects), measures in MEASURES order, pairs
    in `system_pairs` order, p_adjusted across the pairs of each measure.  Arrays,
    not rows: 1,000 systems give 1.5 million rows per metric.  `known(measure,
    system_a, system_b, result)` may put results known already (a reused run's,
    `CopiedPairs`) in place of some pairs' before p is adjusted across them all."""
    (profile, metric), acc = element
    columns = {name: [] for name in names(SIGNIFICANCE_COLUMNS)}
    for measure, sums in zip(MEASURES, acc.sums):
        pairs = system_pairs(sums.systems, pairs_mode)
        if not pairs:
            continue
        position = {system: k for k, system in enumerate(sums.systems)}
        a = np.array([position[x] for x, _ in pairs], dtype=np.intp)
        b = np.array([position[y] for _, y in pairs], dtype=np.intp)
        result = paired_tests(sums, a, b, confidence)
        systems = np.array(sums.systems, dtype=object)
        if known is not None:
            known(measure, systems[a], systems[b], result)
        result["p_adjusted"] = ADJUSTMENT_ARRAYS[adjust](result["p_value"])
        result.update(
            profile=np.full(len(pairs), profile, dtype=object),
            metric=np.full(len(pairs), metric, dtype=object),
            measure=np.full(len(pairs), measure, dtype=object),
            system_a=systems[a],
            system_b=systems[b],
        )
        for name, parts in columns.items():
            parts.append(result[name])
    block = {
        name: np.concatenate(parts) if parts else np.zeros(0, dtype=object if kind == "string" else kind)
        for (name, kind), parts in zip(SIGNIFICANCE_COLUMNS, columns.values())
    }
    tally("significance", "metrics")  # (the stall watch sees the tests progress, a metric at a time)
    return (profile, metric), block


def block_rows(block: dict, start: int, stop: int) -> list[dict]:
    """Rows start..stop-1 of a block as dicts (NaN -> None)."""
    columns = {}
    for name, values in block.items():
        values = values[start:stop].tolist()
        if block[name].dtype.kind == "f":
            values = [None if math.isnan(v) else v for v in values]
        columns[name] = values
    return [dict(zip(columns, row)) for row in zip(*columns.values())]


class PairedSignificance(beam.PTransform):
    """Scored batches in; one (profile, metric) -> block of rows out per metric of
    each profile (the columns of SIGNIFICANCE_COLUMNS), every pair tested on the
    documents both systems scored.

    Args:
        tags: profile -> its metric tags, in order (the columns of the values).
        pairs_mode: "all" (every pair of systems) or the name of a baseline system.
        confidence: of the t interval of the difference, in percent.
        adjust: "holm" (family-wise error) or "bh" (Benjamini-Hochberg, false
            discovery rate), applied to p_value across the pairs of each
            (metric, measure).
    """

    def __init__(
        self,
        tags: dict[str, list[str]],
        pairs_mode: str = "all",
        confidence: float = 95.0,
        adjust: str = "holm",
    ):
        super().__init__()
        if adjust not in ADJUSTMENT_ARRAYS:
            raise RougeConfigError(f"adjust must be one of {sorted(ADJUSTMENT_ARRAYS)}, got {adjust!r}")
        if not pairs_mode:
            raise RougeConfigError('pairs_mode must be "all" or the name of a baseline system')
        self.tags = dict(tags)
        self.pairs_mode = pairs_mode
        self.adjust = adjust
        self.confidence = check_confidence(confidence)

    def describe(self) -> str:
        family = "Holm" if self.adjust == "holm" else "Benjamini-Hochberg"
        return (
            "Paired sign-flip test on the documents both systems scored: exact (all 2^n sign "
            f"patterns) for n <= {EXACT_MAX_DOCUMENTS} documents, Student's t with n - 1 degrees of "
            "freedom beyond; p is never below 2^(1-n), the smallest p any data can give on n "
            f"documents (p floor). {self.confidence:g}% t interval of the difference; effect size "
            f"d_z = mean difference / its standard deviation. p adjusted: {family} across the pairs "
            "of each metric and measure."
        )

    def expand(self, documents):
        return (
            documents
            | "PerMetric" >> beam.FlatMap(metric_documents, self.tags)
            | "PairSums" >> beam.CombinePerKey(
                SignificanceCombineFn(None if self.pairs_mode == "all" else self.pairs_mode))
            | "PairedTests" >> beam.Map(significance_block, self.pairs_mode, self.confidence, self.adjust)
        )


class CopiedPairs:
    """The results of the pairs of two systems carried whole (pipeline.reuse), copied
    from the previous run's significance table: `known` of `significance_block`
    for one (profile, metric).  The same sums, hence the same results, as long as
    the exact test keeps (or drops) the documents as the previous run did
    (`pipeline.reuse.ReusePlan.pairs_copied`)."""

    def __init__(self, table, carried: set, where: str):
        self.carried, self.where = carried, where
        self.columns = {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}
        keys = zip(self.columns["measure"].tolist(), self.columns["system_a"].tolist(), self.columns["system_b"].tolist())
        self.row = {key: i for i, key in enumerate(keys)}
        if len(self.row) != table.num_rows:
            raise ResultFolderError(f"{where}: a pair's row more than once")

    def __call__(self, measure: str, system_a, system_b, result: dict) -> None:
        carried = self.carried
        mask = np.array([a in carried and b in carried for a, b in zip(system_a.tolist(), system_b.tolist())], dtype=bool)
        if not mask.any():
            return
        pairs = list(zip(system_a[mask].tolist(), system_b[mask].tolist()))
        missing = next(((a, b) for a, b in pairs if (measure, a, b) not in self.row), None)
        if missing is not None:  # (its sums were not made: the pair cannot be left out)
            raise ResultFolderError(f"{self.where}: no row of the pair {missing[0]!r}, {missing[1]!r} ({measure})")
        rows = np.array([self.row[measure, a, b] for a, b in pairs], dtype=np.intp)
        for name in RESULT_FIELDS:
            result[name][mask] = self.columns[name][rows]


def copied_pairs(reuse, profile: str) -> dict:
    """{metric: CopiedPairs} of a profile from the previous run's significance table."""
    import pyarrow.compute as pc  # noqa: PLC0415

    table = reuse.folder.table("significance.parquet", written_as=SIGNIFICANCE_COLUMNS)
    table = table.filter(pc.equal(table.column("profile"), profile))
    carried, where = set(reuse.carried), reuse.folder.location("significance.parquet")
    return {metric: CopiedPairs(table.filter(pc.equal(table.column("metric"), metric)), carried, f"{where} ({metric})")
            for metric in reuse.tags[profile]}


# Documents x systems read side by side by `_aligned` (every system's values of a
# chunk of documents: 65,536 x 3 metrics x 6 float64 = 9 MB, and as much again while
# converted), and the fewest documents a chunk.  A row group of every system was read
# before: 16,384 documents x 1,000 systems held 2.4 GB.
ALIGNED_VALUES = 1 << 16
MIN_CHUNK = 64


def profile_blocks(element, tags: dict, pairs_mode: str, confidence: float, adjust: str, reuse=None) -> list:
    """(profile, [(system, one of its per-document Parquet files), ...]) ->
    ((profile, metric), block) per metric: every pair's paired test on their shared
    documents, from the files' R/P/F as integers (`units`, as the scored batches
    give them), through the same PairSums and `significance_block` as the graph's
    own significance: the same sums, so the same rows (the documents' order does not
    matter to a sum; their ids only to the exact test, kept up to
    EXACT_MAX_DOCUMENTS).  With `reuse` (a pipeline.reuse.ReusePlan whose pairs are
    copied), the pairs of two systems carried whole are the previous run's
    (`CopiedPairs`) and only the pairs with a system read again are summed
    (PairSums(pairs_of=...): S x k per document, not S x S).

    When every system has the same documents (each (profile, system)'s files hold
    them sorted), they are read side by side, ALIGNED_VALUES // S documents at a
    time (`document_chunks`; memory: about ALIGNED_VALUES documents' values, however
    many systems); else every system's
    are held and lined up by Arrow (`_gathered`)."""
    profile, found = element
    metrics = tags[profile]
    paths: dict = {}
    for system, path in sorted(found):
        paths.setdefault(system, []).append(path)
    systems = sorted(paths)
    keys = {s: [column_key(p, "doc_id") for p in paths[s]] for s in systems}
    rows = {s: sum(r for r, _ in keys[s]) for s in systems}
    carried = [s for s in systems if reuse is not None and s in set(reuse.carried)]
    short = next((s for s in carried if rows[s] != reuse.document_rows(s, profile)), None)
    if short is not None:  # (a full run's pairs with it would be over every one of its documents)
        raise ResultFolderError(f"the per-document files of carried system {short!r} (profile {profile}) hold "
                                f"{rows[short]} rows where its run recorded {reuse.document_rows(short, profile)}")
    counts = {s: rows[s] // len(metrics) for s in systems}
    aligned = len(set(counts.values())) == 1
    documents = counts[systems[0]] if aligned else None
    sums = None
    if aligned:
        copied, read_again = _copied(reuse, profile, systems, documents)
        same = _same_documents(keys, [s for s in systems if s not in carried])
        sums = _aligned(paths, systems, len(metrics), read_again, documents, same)
    if sums is None:  # (documents that differ between systems)
        doc_ids, x, present = _gathered(paths, systems, len(metrics))
        copied, read_again = _copied(reuse, profile, systems, len(doc_ids))
        names = doc_ids.to_pylist() if len(doc_ids) <= EXACT_MAX_DOCUMENTS else range(len(doc_ids))
        sums = [MetricSums() for _ in metrics]
        for m, acc in enumerate(sums):
            for j, column in enumerate(acc.sums):
                column.add(names, systems, x[:, :, m, j].astype(np.int64), present, pairs_of=read_again)
    return [significance_block(((profile, metric), acc), pairs_mode, confidence, adjust, copied.get(metric))
            for metric, acc in zip(metrics, sums)]


def _copied(reuse, profile: str, systems: list, documents: int) -> tuple[dict, object]:
    """({metric: CopiedPairs}, the systems whose pairs are summed: None for all)."""
    if reuse is None or not reuse.pairs_copied(documents):
        return {}, None
    return copied_pairs(reuse, profile), [s for s in systems if s not in set(reuse.carried)]


def _same_documents(keys: dict, written: list) -> bool:
    """Whether every system's per-document files hold the doc_ids of the first of
    `written` (systems whose files this run wrote), in the same order, by their
    files' doc_id `column_key`s ({system: [(rows, key), ...]}): False when that
    cannot be told so (the ids are then compared, decoded)."""
    if not written or any(key is None for found in keys.values() for _, key in found):
        return False
    return all(found == keys[written[0]] for found in keys.values())


def _aligned(paths: dict, systems: list, metrics: int, read_again, documents: int, same: bool = False):
    """Per metric a MetricSums of every system's `documents` documents read side by
    side, or None when the systems turn out to have different documents (their
    doc_id columns, row for row; with `same`, the files' bytes showed them equal
    (`_same_documents`): the ids are not read, but the exact test's)."""
    sums = [MetricSums() for _ in range(metrics)]
    chunk = max(MIN_CHUNK, ALIGNED_VALUES // len(systems))
    exact = documents <= EXACT_MAX_DOCUMENTS  # (a document's id matters only to the exact test)
    streams = [document_chunks(paths[s], metrics, chunk, ids=not same or (exact and k == 0)) for k, s in enumerate(systems)]
    while True:
        parts = [next(stream, None) for stream in streams]
        if all(part is None for part in parts):
            return sums
        if any(part is None for part in parts) or not (same or all(part[0].equals(parts[0][0]) for part in parts)):
            return None
        x = np.stack([part[1] for part in parts], axis=1)  # documents x systems x metrics x 3
        names = _document_ids(parts[0][0], metrics).to_pylist() if exact else range(len(x))
        for m, acc in enumerate(sums):
            for j, column in enumerate(acc.sums):
                column.add(names, systems, np.ascontiguousarray(x[:, :, m, j]), pairs_of=read_again)


def document_chunks(paths: list, metrics: int, documents: int = DOCUMENTS_PER_ROW_GROUP, ids: bool = True):
    """A (profile, system)'s per-document files, in order, as (the doc_id column, a
    row per metric (an Arrow array; None unless `ids`), R/P/F units (documents x
    metrics x 3, int64)), `documents` documents at a time (`document_batches`: a
    batch of a row group at a time, within the bounds of an untrusted table: a
    carried file is a previous run's)."""
    for path in paths:
        for table in document_batches(path, metrics, ["doc_id", *MEASURES] if ids else list(MEASURES), documents):
            values = np.stack([table.column(name).to_numpy() for name in MEASURES], axis=1)
            yield table.column("doc_id") if ids else None, units_of(values).reshape(-1, metrics, len(MEASURES))


def _document_ids(column, metrics: int):
    """A doc_id column of `metrics` rows a document -> each document's id once (Arrow)."""
    import pyarrow as pa  # noqa: PLC0415

    return column.take(pa.array(np.arange(0, len(column), metrics))).combine_chunks()


def _gathered(paths: dict, systems: list, metrics: int):
    """(every document (Arrow), R/P/F units documents x systems x metrics x 3 int32,
    presence documents x systems) of systems whose documents differ, lined up by
    Arrow (no Python object per document)."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    parts = {s: [(_document_ids(column, metrics), u.astype(np.int32)) for column, u in document_chunks(paths[s], metrics)]
             for s in systems}
    ids = {s: pa.chunked_array([p[0] for p in parts[s]], pa.string()).combine_chunks() for s in systems}
    doc_ids = pc.unique(pa.chunked_array([ids[s] for s in systems], pa.string()))
    x = np.zeros((len(doc_ids), len(systems), metrics, 3), dtype=np.int32)
    present = np.zeros((len(doc_ids), len(systems)), dtype=bool)
    for k, system in enumerate(systems):
        rows = pc.index_in(ids.pop(system), value_set=doc_ids).to_numpy()
        x[rows, k] = np.concatenate([p[1] for p in parts.pop(system)])
        present[rows, k] = True
    return doc_ids, x, present


class SignificanceFromTables(beam.PTransform):
    """(profile, (system, per-document Parquet file)) of every file of the run in,
    once all are written; out a dict: "blocks", the ((profile, metric), block)s of
    PairedSignificance (`test`), a profile a worker (`profile_blocks`; `reuse`: the
    pairs it copies), and "reuse": a carried file that is no table of this tool
    (pipeline.io.rows.bounded_batches) is "refused" (REUSE_COUNTS: the run is done
    again reusing nothing), not a failure of the run."""

    def __init__(self, test, tags: dict, reuse=None):
        super().__init__()
        self.test, self.tags, self.reuse = test, tags, reuse

    def expand(self, document_files):
        test = self.test
        found = (
            document_files
            | "ByProfile" >> beam.GroupByKey()
            | "PairedTests" >> beam.FlatMap(_blocks_or_refused, self.tags, test.pairs_mode, test.confidence,
                                            test.adjust, self.reuse).with_outputs(REUSE_COUNTS, main="blocks")
        )
        return {"blocks": found.blocks, "reuse": found[REUSE_COUNTS]}


def _blocks_or_refused(element, *args):
    try:
        yield from profile_blocks(element, *args)
    except (TableBoundError, ResultFolderError) as err:
        yield beam.pvalue.TaggedOutput(REUSE_COUNTS, ("refused", f"the significance tests of profile {element[0]}: {err}"))


PART_PREFIX = "_significance-part-"


def write_block_part(element, folder: str) -> tuple:
    """((profile, metric), block) -> ((profile, metric), the path of a Parquet file in
    `folder` holding the block): what is gathered to the one worker that writes the
    tables is a path per metric, not 1.5 million rows per metric (at 1,000 systems)."""
    import pyarrow.parquet as pq

    key, block = element
    name = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:16]
    path = files.join(folder, f"{PART_PREFIX}{name}.parquet")
    with files.create(path) as fh:
        pq.write_table(block_table(block), fh)
    return key, path


def block_table(block: dict):
    """A block as an Arrow table of SIGNIFICANCE_COLUMNS (NaN floats as nulls)."""
    import pyarrow as pa

    schema = arrow_schema(SIGNIFICANCE_COLUMNS)
    arrays = [pa.array(block[n], type=schema.field(n).type, from_pandas=True) for n in names(SIGNIFICANCE_COLUMNS)]
    return pa.Table.from_arrays(arrays, schema=schema)


def _read_block_part(path: str) -> dict:
    """A block written by `write_block_part`, as `significance_block` made it (null
    floats as NaN)."""
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(files.read_bytes(path)))
    return {name: table[name].to_numpy(zero_copy_only=False) for name in table.column_names}


def _take_block(block):
    """A block as `significance_block` made it: a part file's is read and the file deleted."""
    if not isinstance(block, str):
        return block
    read = _read_block_part(block)
    files.delete([block])
    return read


def _read_while_small(blocks: list[tuple]) -> tuple[list[tuple], int]:
    """The blocks with part files read (and deleted) in order while the rows so far are
    at most PADDED_ROWS (a table that small is laid out whole), and those rows' number
    (past PADDED_ROWS: some number over it); later parts stay paths, read in turn."""
    read, total = [], 0
    for key, block in blocks:
        if total <= PADDED_ROWS:
            block = _take_block(block)
        if not isinstance(block, str):
            total += len(block["documents"])
        read.append((key, block))
    return read, total


def write_significance_tables(
    blocks: list[tuple], folder: str, tags: dict[str, list[str]], description: str = ""
) -> None:
    """significance.{parquet,csv,md} in `folder` (any Beam filesystem), a block at a
    time: blocks ((profile, metric), columns, or the path of a part file that
    `write_block_part` wrote, read when its turn comes and then deleted) in the order
    of `tags` (profile -> metric tags, in order), rows within a block as
    `significance_block` made them (measure, then the pair).  Parquet gets one row
    group per block."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    order = {(p, tag): i for i, (p, tag) in enumerate((p, t) for p, ts in tags.items() for t in ts)}
    blocks = sorted(blocks, key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
    several = len({profile for (profile, _), _ in blocks}) > 1
    columns = names(SIGNIFICANCE_COLUMNS)
    schema = arrow_schema(SIGNIFICANCE_COLUMNS)
    with (
        files.create(files.join(folder, "significance.parquet")) as parquet,
        files.create(files.join(folder, "significance.csv")) as csv_file,
        files.create(files.join(folder, "significance.md")) as markdown,
    ):
        writer = pq.ParquetWriter(parquet, schema)
        csv_file.write((",".join(columns) + "\n").encode("utf-8"))
        blocks, total = _read_while_small(blocks)
        padded = total <= PADDED_ROWS
        if padded:  # small enough to lay out whole (aligned columns); else a block at a time
            markdown.write(markdown_table(
                [row for _, block in blocks for row in block_rows(block, 0, len(block["documents"]))], description
            ).encode("utf-8"))
        else:
            markdown.write(markdown_header(description).encode("utf-8"))
        written = 0
        for _, block in blocks:
            block = _take_block(block)
            rows = len(block["documents"])
            if not rows:
                continue
            writer.write_table(block_table(block))
            written += rows
            for start in range(0, rows, 10_000):
                chunk = block_rows(block, start, min(start + 10_000, rows))
                csv_file.write(_csv_lines(chunk, columns).encode("utf-8"))
                if not padded:
                    markdown.write(markdown_rows(chunk, several).encode("utf-8"))
        if not written:
            writer.write_table(pa.Table.from_pylist([], schema=schema))
        writer.close()


def _csv_lines(rows: list[dict], columns: list[str]) -> str:
    """Rows as CSV lines (floats in full: p-values), text cells neutralised against
    formulas (`csv_cell`); numbers formatted a column at a time."""
    cells = []
    for name in columns:
        values = [r[name] for r in rows]
        if all(v is None or isinstance(v, (int, float)) for v in values):
            cells.append(["" if v is None else repr(v) for v in values])
        else:
            cells.append([csv_cell(v, None) for v in values])
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(zip(*cells))
    return text.getvalue()


class SignificanceTables(beam.PTransform):
    """Scored batches (or, `from_tables`, the per-document files' (profile, path): a
    run that carries systems whole, SignificanceFromTables) in;
    significance.{parquet,csv,md} written to `staging`, with the run's
    [significance] settings (`config`)."""

    def __init__(self, config, profiles, staging: str, from_tables: bool = False, reuse=None):
        super().__init__()
        self.from_tables, self.reuse = from_tables, reuse
        self.tags = {profile.name: profile.tags for profile in profiles}  # the values' order
        self.order = {profile.name: profile.metric_order for profile in profiles}  # the tables'
        self.staging = staging
        self.test = PairedSignificance(
            self.tags,
            config.baseline or "all",
            float(profiles[0].settings[0].confidence),
            config.adjust,
        )

    def expand(self, documents):
        """Out the written tables' PCollection and, from tables, REUSE_COUNTS ("reuse")."""
        refused = None
        if self.from_tables:
            found = documents | "PairedSignificance" >> SignificanceFromTables(self.test, self.tags, self.reuse)
            blocks, refused = found["blocks"], found["reuse"]
        else:
            blocks = documents | "PairedSignificance" >> self.test
        written = (
            blocks
            | "WriteBlockParts" >> beam.Map(write_block_part, self.staging)
            | "GatherBlocks" >> Gathered()
            | "WriteSignificance"
            >> beam.Map(write_significance_tables, self.staging, self.order, self.test.describe())
        )
        return {"written": written, **({"reuse": refused} if refused is not None else {})}
