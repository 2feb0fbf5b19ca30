"""Shuffles through files: rows written to the run's own spill files, and only
their places, (key, (path, offset, length)), sent through the runner's shuffle.

Why: Beam's local runner holds every PCollection that crosses a stage boundary in
its own memory (the GroupByKey buffer of Beam 2.77's FnApiRunner keeps the whole
table, decoded, and encodes it again), so a run whose texts or scores cross a
GroupByKey needs memory in proportion to its input: 4.3-4.7 GB for 1,000,000
CNN/DM pairs.  Spilled, what the runner holds is a few dozen bytes per key and
flush, and the rows are read back by the worker that needs them, a key at a time.
On a runner that shuffles to disk itself (Dataflow, Flink, Spark) the same graph
runs unchanged; the files are under the run's staging folder (so, with a `gs://`
output, in the bucket every worker reaches) and are removed before it is published.

A retried bundle writes new files (every name is random) and the runner discards
the failed attempt's output, so the places that reach the GroupByKey name only the
files of attempts that succeeded.  The files are the project's own, read back by
the run that wrote them: pickle is the fast encoding of plain tuples.
"""

from __future__ import annotations

import io
import itertools
import operator
import pickle
import shutil
import uuid
import zlib

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from pipeline.beam.batches import batched
from pipeline.io import files

SPILL = "_spill"  # under the staging folder; removed before the run is published
SPILL_ROWS = 50_000  # rows a worker holds before it writes them out
SPILL_BYTES = 64 << 20  # or pickled bytes, for rows of any size (`pickled`)


def dumps(rows: list) -> bytes:
    """Rows pickled without pickle's memo (`Pickler.fast`): the rows are plain tuples,
    lists, texts and numbers with no cycles, and a memo entry per object cost 1 us
    a row of scores (0.4 without; a text repeated in many rows is written each time)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(rows)
    return out.getvalue()


def place_hash(text: str) -> int:
    """Where a row goes (its reading bucket, its table partition): the CRC-32 of its
    UTF-8 bytes, the same in every process and on every machine.  It decides only
    which worker or part file holds a row, never a number (a 64-bit BLAKE2 hash,
    `stable_hash`, cost 1 us a row here)."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


class SpillFn(beam.DoFn):
    """(key, [rows]) in; (key, (path, offset, length)) out: a key's rows are held
    until `limit` rows in all are held, then written, every key's rows as pickled
    lists, to a new file under `folder`/_spill/`name`/ (and what is left at the end
    of the bundle).  `load` reads them back.

    Rows of a bounded size (scores, error rows) are held as they come, a key's
    rows pickled as one list when written.  Rows whose size the input decides
    (texts) are `pickled` as each element arrives, and written once SPILL_BYTES of
    them are held, whatever their number.

    With `split`, an element is anything `split(element)` turns into (key, [rows])
    pairs, here, in the DoFn: a batch cut into many keys (a table's partitions)
    makes no Beam element per key (an element costs more than a row).

    A file holds its keys' rows in `order(key)` order when given (so that the keys
    one reader takes lie next to each other: `load` reads places that touch as
    one run), else in the order they came."""

    def __init__(self, folder: str, name: str, limit: int = SPILL_ROWS, pickled: bool = False, split=None,
                 order=None):
        self.folder, self.name, self.limit, self.pickled, self.split = folder, name, limit, pickled, split
        self.order = order

    def start_bundle(self):
        self.held: dict = {}
        self.rows = self.bytes = 0

    def process(self, element):
        for key, rows in self.split(element) if self.split else (element,):
            if self.pickled:
                data = dumps(rows)
                self.held.setdefault(key, []).append(data)
                self.bytes += len(data)
            else:
                self.held.setdefault(key, []).extend(rows)
            self.rows += len(rows)
        if self.rows >= self.limit or self.bytes >= SPILL_BYTES:
            yield from self._flush()

    def finish_bundle(self):
        for place in self._flush():
            yield GlobalWindows.windowed_value(place)

    def _flush(self) -> list:
        if not self.held:
            return []
        path = files.join(self.folder, SPILL, self.name, f"{uuid.uuid4().hex}.pickle")
        places, offset = [], 0
        keys = sorted(self.held, key=self.order) if self.order else list(self.held)
        with files.create(path) as out:  # (a key at a time: a buffer of them all costs a page fault per 4 KB)
            for key in keys:
                held = self.held[key]
                size = 0
                for data in held if self.pickled else (dumps(held),):
                    out.write(data)
                    size += len(data)
                places.append((key, (path, offset, size)))
                offset += size
        self.held, self.rows, self.bytes = {}, 0, 0
        return places


def load(places) -> list:
    """The rows at these places, (path, offset, length) as SpillFn made them, in one
    list (in file and offset order: what reads them must not depend on an order)."""
    out: list = []
    for rows in _pickled_lists(places):
        out.extend(rows)
    return out


def iter_load(places):
    """The rows of `load`, in its order, one at a time: a row is let go once the
    caller has taken it (a document whose rows repeat large references holds one
    copy, not one per row, when the caller keeps one: pipeline.documents.share_references)."""
    for rows in _pickled_lists(places):
        for i in range(len(rows)):
            row, rows[i] = rows[i], None
            yield row


def _pickled_lists(places):
    """The pickled lists at these places, in file and offset order.  Places of a file
    that touch are read as one run (one seek), a pickle frame at a time (so no buffer
    of a whole run is made: fresh memory costs a page fault per 4 KB)."""
    for path, group in itertools.groupby(sorted(places), key=operator.itemgetter(0)):
        with files.open_read(path) as fh:
            for start, length in _runs(group):
                fh.seek(start)
                unpickler = pickle.Unpickler(fh)  # (one per run: it reads ahead of where a seek goes)
                while fh.tell() < start + length:  # pickled lists, one per place (or per element: `pickled`)
                    yield unpickler.load()


def _runs(places) -> list[tuple[int, int]]:
    """(start, length) of each run of places, in offset order, that touch."""
    runs: list = []
    for _, offset, length in places:
        if runs and runs[-1][0] + runs[-1][1] == offset:
            runs[-1][1] += length
        elif length:
            runs.append([offset, length])
    return [tuple(r) for r in runs]


class SpilledGroupByKey(beam.PTransform):
    """(key, [rows]) in; (key, [every row of the key]) out, like a GroupByKey of
    lists concatenated, with the rows through spill files, not the runner's
    shuffle.  With `then`, then((key, rows)) out instead: the rows are loaded in
    the call that uses them and are never an element (Beam's local runner kept the
    last such element alive for the rest of the run: tracemalloc found a system's
    documents, 29 MB at 100,000 of them, still held while the per-document table
    was written)."""

    def __init__(self, folder: str, name: str, limit: int = SPILL_ROWS, then=None):
        super().__init__()
        self.folder, self.name, self.limit, self.then = folder, name, limit, then

    def expand(self, pcoll):
        then = self.then or (lambda grouped: grouped)
        out = (
            pcoll
            | "Spill" >> beam.ParDo(SpillFn(self.folder, self.name, self.limit))
            | "GroupPlaces" >> beam.GroupByKey()
            | "Load" >> beam.MapTuple(lambda key, places: then((key, load(places))))
        )
        return out if self.then else batched(out)


def remove_spills(folder: str) -> None:
    """Remove the spill files under a run's staging folder (once the pipeline is done)."""
    root = files.join(folder, SPILL)
    if files.is_url(folder):
        found = sorted(files.match(files.join(root, "*", "*")))
        if found:
            files.delete(found)
    else:
        shutil.rmtree(root, ignore_errors=True)
