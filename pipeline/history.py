"""`rouge-pipeline history RUN... --output DIR`: a benchmark's results across runs.

history.csv (and .parquet) hold, for every run in order, its run id and start time
and then its own system_scores.csv row by row, every value as that run wrote it
(the CSV's cells copied as text, the Parquet's values as typed).  report.html draws,
per metric, every system's score across the runs with its interval, and marks each
system's last significant change: between two consecutive runs, the paired test
`compare` makes on the documents both scored (pipeline.compare.compare_runs, Holm
across the pairs of the two runs).  Runs whose signatures differ are never one
line: they are grouped by signature (consecutive runs of one signature), each
group's settings named against the group before it (pipeline.compare's
settings_differences, through rouge_core.signature).

Runs are read through pipeline.io.result_folder.ResultFolder (complete, as its
manifest lists it, each file checked as it is read).  The command line is
pipeline/cli/history.py; the page, pipeline/render/history.py.
"""

from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass, field
from typing import Callable, Optional

from pipeline.compare import ComparedRun, UsageError, compare_runs, settings_differences
from pipeline.config import DEFAULT_PROFILE
from pipeline.io.result_folder import ResultFolder, ResultFolderError
from pipeline.io.tables import SIGNATURE_BYTES, SYSTEM_COLUMNS
from rouge_core.signature import RUN_FIELDS

log = logging.getLogger("rouge-pipeline")
RUN_COLUMNS = [("run_id", "string"), ("started", "string")]
HISTORY_COLUMNS = RUN_COLUMNS + SYSTEM_COLUMNS


@dataclass
class Run:
    """One run of the history: where it is, its record, and its system_scores table
    as its CSV says it (header and rows of text) and as its Parquet holds it."""

    path: str
    folder: ResultFolder
    header: list
    cells: list  # rows of system_scores.csv, each a list of text cells
    rows: list  # rows of system_scores.parquet, as dicts

    @property
    def run_id(self) -> str:
        return self.folder.run_id

    @property
    def started(self) -> str:
        return str(self.folder.record.get("started") or "")

    @property
    def signature(self) -> str:
        return self.folder.record["signature"]


@dataclass
class Group:
    """Consecutive runs of one signature's settings (`signature`: its first run's);
    `differences` from the group before it, as (setting, before, now)."""

    signature: str
    runs: list = field(default_factory=list)
    differences: list = field(default_factory=list)


def read_runs(paths: list[str], by_start: bool = False) -> list[Run]:
    """The runs at `paths` (local folders or URLs), in the order given or, with
    `by_start`, by their start time (ties in the order given).  A run given twice
    (the same run id: one folder named twice, through a link or a copy) is taken
    once, where it first appears, and said: a night drawn twice would be a change of
    nothing tested against itself."""
    runs, seen = [], {}
    for path in paths:
        try:
            folder = ResultFolder.open(path)
            if folder.run_id in seen:
                log.warning("run %s is given twice (%s, %s): taken once", folder.run_id, seen[folder.run_id], path)
                continue
            seen[folder.run_id] = path
            header, *cells = list(csv.reader(io.StringIO(folder.read_bytes("system_scores.csv").decode("utf-8")))) or [[]]
            rows = folder.table("system_scores.parquet", max_cell_bytes=SIGNATURE_BYTES).to_pylist()
        except ResultFolderError as err:
            raise UsageError(str(err)) from None
        except (ValueError, UnicodeDecodeError, csv.Error) as err:
            raise UsageError(f"{path}: system_scores cannot be read ({err})") from None
        if not header or any(name not in header for name in ("profile", "system", "metric")):
            raise UsageError(f"{path}: system_scores.csv has no profile, system and metric columns")
        problem = _disagreement(header, cells, rows)
        if problem:  # (one run writes both from the same rows: a folder edited and resealed)
            raise UsageError(f"{path}: system_scores.csv and system_scores.parquet disagree: {problem}")
        runs.append(Run(path, folder, header, cells, rows))
    if by_start:
        runs.sort(key=lambda r: r.started)
    return runs


def _disagreement(header: list[str], cells: list[list[str]], rows: list[dict]) -> Optional[str]:
    """How a run's system_scores.csv (`header`, `cells`) and .parquet (`rows`) differ
    in their rows (as many, each (profile, system, metric) in the same order, every
    CSV row as long as its header), or None."""
    short = next((k for k, row in enumerate(cells, 1) if len(row) != len(header)), None)
    if short is not None:
        return f"row {short} of the CSV has {len(cells[short - 1])} cells, its header {len(header)}"
    if len(cells) != len(rows):
        return f"{len(cells)} rows in the CSV, {len(rows)} in the Parquet"
    where = [header.index(name) for name in ("profile", "system", "metric")]
    for k, (row, record) in enumerate(zip(cells, rows), 1):
        if [row[i] for i in where] != [str(record.get(name) or "") for name in ("profile", "system", "metric")]:
            return f"row {k} of the CSV is not the Parquet's (its profile, system and metric)"
    return None


def history_table(runs: list[Run]) -> tuple[list[str], list[list[str]], list[dict]]:
    """(CSV header, CSV rows, Parquet rows): every run's system_scores rows after its
    run id and start time, each cell as its run wrote it; the CSV's columns are every
    run's, in the order they first appear (a run without one leaves it empty)."""
    header = [name for name, _ in RUN_COLUMNS]
    for run in runs:
        header += [name for name in run.header if name not in header]
    csv_rows, parquet_rows = [], []
    known = {name for name, _ in HISTORY_COLUMNS}
    for run in runs:
        where = {name: k for k, name in enumerate(run.header)}
        for cells in run.cells:
            values = {"run_id": run.run_id, "started": run.started}
            csv_rows.append([values[n] if n in values else (cells[where[n]] if n in where and where[n] < len(cells) else "")
                             for n in header])
        parquet_rows += [{**{k: v for k, v in row.items() if k in known}, "run_id": run.run_id, "started": run.started}
                         for row in run.rows]
    return header, csv_rows, parquet_rows


def csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    """CSV as system_scores.csv is written (minimal quoting, "\\n" line ends)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return text.getvalue().encode("utf-8")


def signature_groups(runs: list[Run]) -> list[Group]:
    """Consecutive runs of one signature's settings, each group with its settings'
    differences from the group before it.  The fields a run adds about its data
    (RUN_FIELDS: references per document, evaluation ids, bootstrap) do not part
    runs: a night with a document of three references scores as the night before."""
    groups: list[Group] = []
    for run in runs:
        differences = settings_differences(groups[-1].signature, run.signature, RUN_FIELDS) if groups else []
        if not groups or differences:
            groups.append(Group(run.signature, differences=differences))
        groups[-1].runs.append(run)
    return groups


def metric_label(profile: Optional[str], metric: str) -> str:
    """A metric as `compare` labels it: "<profile> <metric>", or the metric alone in
    the default profile."""
    return metric if profile in (None, "", DEFAULT_PROFILE) else f"{profile} {metric}"


def last_changes(group: Group, measure: str, confidence: float,
                 on_pair: Callable[[], None] = lambda: None) -> dict[tuple[str, str], dict]:
    """{(system, metric label): the last significant change}: between each two
    consecutive runs of the group, `compare`'s paired test on the documents both
    scored (pipeline.compare.compare_runs: Holm across the pairs of the two runs, a
    change counts below its level); the latest one per (system, metric), with the
    run it came in (its index in the group), the change in points and its p."""
    found: dict = {}
    previous = None
    for index, run in enumerate(group.runs):
        current = ComparedRun(run.path, measure)
        if previous is not None:
            rows, _ = compare_runs(previous, current, measure=measure, fail_on_drop=100.0, confidence=confidence,
                                   on_pair=on_pair)
            for row in rows:
                if row["verdict"] in ("better", "worse"):
                    found[row["system"], row["metric"]] = {
                        "run": index, "verdict": row["verdict"], "delta_points": row["delta_points"],
                        "p_adjusted": row["p_adjusted"], "documents": row["documents"],
                    }
        previous = current
    return found
