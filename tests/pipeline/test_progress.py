"""Progress: what a person sees while a long command works (pipeline/progress.py),
the input rows counted ahead for its totals (pipeline/io/row_counts.py), the
workers' counters handed to the driver (pipeline/beam/progress.py), and `run` and
`score` showing stages with a total on a non-terminal."""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pipeline
from pipeline import progress as shown
from pipeline.io.row_counts import count_all, count_rows
from pipeline.progress import Progress, read_counts

SAMPLE = Path(pipeline.__file__).parent / "sample"
ROOT = Path(__file__).resolve().parents[2]


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_line_has_the_total_the_percentage_a_rate_and_the_time_left():
    out = io.StringIO()
    with Progress(stream=out, interval=0).stage("scoring", 4, "summaries") as stage:
        stage.update(1)
    first, last = out.getvalue().splitlines()
    assert re.fullmatch(
        r"rouge-pipeline: scoring: 1 of 4 summaries \(25%\), [\d.,]+/s, (about [\w ]+|under a second) left \(under a second so far\)", first
    ), first
    assert re.fullmatch(r"rouge-pipeline: scoring: 1 of 4 summaries in [\d.]+ s \([\d.,]+/s\)", last), last


def test_a_stage_nobody_waited_for_shows_nothing_and_quiet_shows_nothing():
    out = io.StringIO()
    with Progress(stream=out).stage("reading", 10, "rows") as stage:
        stage.update(10)
    with Progress(stream=out, quiet=True, interval=0).stage("reading", 10, "rows") as stage:
        stage.update(3)
    assert out.getvalue() == ""


def test_on_a_terminal_tqdm_draws_a_bar_that_stays(monkeypatch):
    monkeypatch.setattr(shown, "SHOW_AFTER", 0)
    out = Terminal()
    assert Progress(stream=out).terminal
    with Progress(stream=out).stage("scoring", 4, "summaries") as stage:
        stage.update(2)
        stage.set(4)
    text = out.getvalue()
    assert "scoring: 100%" in text and "4/4" in text
    assert text.endswith("\n")  # the bar is left on screen


class Clock:
    """time.monotonic for pipeline.progress, moved by hand."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now


def test_a_bar_drawn_late_counts_its_rate_and_time_left_from_the_stage_start(monkeypatch):
    """A bar is drawn once a stage has lasted SHOW_AFTER seconds, with what was done by
    then: 3,000 of 9,000 in 3 s is 1,000/s and 6 s left (not the one step after the
    wait, which made tqdm show '1.99 summaries/s, 2:38:52 left')."""
    clock = Clock()
    monkeypatch.setattr(shown, "time", clock)
    out = Terminal()
    stage = Progress(stream=out).stage("scoring", 9000, "summaries")
    stage.set(1000)
    assert out.getvalue() == ""  # 0 s: nobody has waited yet
    clock.now += 3
    stage.set(3000)
    drawn = out.getvalue()
    assert "3000/9000" in drawn, drawn
    rate = float(re.search(r"([\d.]+) summaries/s", drawn).group(1))
    assert 990 < rate <= 1000, drawn  # 3,000 in the 3 s of the stage (tqdm's own clock runs on by microseconds)
    assert "[00:03<00:06," in drawn, drawn
    stage.close()

    clock.now += 3  # a stage with nothing done yet is drawn too, with how long it has worked
    idle = Progress(stream=out).stage("aggregating", 5, "systems")
    clock.now += 3
    idle.set(0)
    assert "0/5 [00:03<?" in out.getvalue(), out.getvalue()
    idle.close()


def test_a_stage_with_nothing_done_yet_says_how_long_it_has_worked():
    out = io.StringIO()
    with Progress(stream=out, interval=0).stage("aggregating", 5, "systems") as stage:
        stage.set(0)
        stage.set(5)
    first = out.getvalue().splitlines()[0]
    assert re.fullmatch(r"rouge-pipeline: aggregating: 0 of 5 systems \(0%\), working \(under a second so far\)", first), first


def run_view(stream, terminal=False):
    from pipeline.run_progress import RunProgress

    view = RunProgress(Progress(stream=stream, interval=0, terminal=terminal), {}, env="UNUSED", profiles=2,
                       significance=True)
    view.totals = {"candidates": 40, "references": 0}  # as counted ahead
    return view


def test_a_run_stage_starts_when_the_one_before_it_ends():
    """The workers count a summary once scored, a system (a pair) only once it is
    aggregated: the time until the first is the stage's too, so scoring starts when
    every row is read, aggregating when every summary is scored, significance when
    every system is aggregated."""
    out = io.StringIO()
    view = run_view(out)
    read = {"reading_candidates": {"rows": 40}, "systems": {"a", "b", "c"}}
    view._show({"reading_candidates": {"rows": 39}})
    assert "scoring" not in view.stages
    view._show(read)
    assert view.stages["scoring"].total == 40 and view.stages["scoring"].done == 0
    view._show(dict(read, scoring={"scored": 39}))
    assert "aggregating" not in view.stages
    view._show(dict(read, scoring={"scored": 40}))
    aggregating = view.stages["aggregating"]
    assert (aggregating.done, aggregating.total, aggregating.closed) == (0, 6, False)  # 2 profiles x 3 systems
    assert re.search(r"aggregating: 0 of 6 systems \(0%\), working \(", out.getvalue()), out.getvalue()
    assert "significance" not in view.stages
    view._show(dict(read, scoring={"scored": 40}, aggregating={"systems": 6}))
    assert aggregating.closed and view.stages["significance"].total == 6  # 2 profiles x 3 pairs
    assert re.search(r"significance: 0 of 6 pairs \(0%\), working \(", out.getvalue()), out.getvalue()


def test_a_run_draws_its_stages_one_after_another_without_moving_the_cursor(monkeypatch):
    """Bars of stages that follow each other are drawn at the cursor's line, each left
    on screen when it ends: no cursor movement (a bar at a fixed line below was drawn
    again at the cursor when it closed, and stayed twice on screen)."""
    monkeypatch.setattr(shown, "SHOW_AFTER", 0)
    out = Terminal()
    view = run_view(out, terminal=True)
    read = {"reading_candidates": {"rows": 40}, "systems": {"a", "b", "c"}}
    view._show(dict(read, scoring={"scored": 40}))
    view._show(dict(read, scoring={"scored": 40}, aggregating={"systems": 6}))
    view._show(dict(read, scoring={"scored": 40}, aggregating={"systems": 6}, significance={"pairs": 6}))
    text = out.getvalue()
    assert "\x1b[A" not in text, repr(text)
    for name in ("starting Beam", "reading", "scoring", "aggregating", "significance"):
        assert f"{name}: 100%" in text, (name, text)


def test_a_total_known_late_and_absolute_counts():
    out = io.StringIO()
    stage = Progress(stream=out, interval=0).stage("reading", None, "rows")
    stage.set(5)
    stage.set(6, 12)
    assert stage.total == 12 and not stage.closed
    stage.set(12)  # reaching the total ends the stage
    assert stage.closed
    assert out.getvalue().splitlines()[-1].startswith("rouge-pipeline: reading: 12 rows in ")
    assert re.search(r"reading: 6 of 12 rows \(50%\)", out.getvalue())


def test_rows_are_counted_ahead_in_jsonl_gzip_and_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    plain = tmp_path / "a.jsonl"
    plain.write_text('{"a": 1}\n\n  \n{"a": 2}\r\n{"a": 3}')  # 3 rows, 2 blank lines, no final newline
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"a": 1}\n' * 2500))
    table = tmp_path / "c.parquet"
    pq.write_table(pa.table({"a": list(range(7))}), table)
    assert [count_rows(str(p)) for p in (plain, packed, table)] == [3, 2500, 7]
    assert count_all([str(plain), str(table)]) == 10
    assert count_rows("-") is None and count_rows("gs://bucket/x.jsonl") is None
    assert count_all([str(plain), str(tmp_path / "missing.jsonl")]) is None
    # the sample's shards: 8 systems x 25 documents
    assert count_all(sorted(map(str, SAMPLE.glob("*.jsonl")))) == 200


def test_the_row_count_is_the_non_blank_lines_whatever_the_chunks(monkeypatch):
    """The count, a chunk at a time, equals its definition on the whole bytes: the
    lines (split at newlines) holding anything but ASCII white space.  Random
    bytes of rows, blank and white-space lines, CRLF and lone CR, lines longer
    than a chunk, read in chunks of 1 to 9 bytes and of the real size."""
    import random

    from pipeline.io import row_counts

    rng = random.Random(18)
    pieces = [b"{}", b"x", b" ", b"\t", b"\r", b"\n", b"\n", b"\n", b"\x0b", b"\x0c", b"\r\n", b"\xc3\xa9"]
    for case in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))
        expected = sum(1 for line in data.split(b"\n") if line.strip())
        monkeypatch.setattr(row_counts, "CHUNK", 1 + case % 9 if case % 10 else 1 << 20)
        assert row_counts._lines(io.BytesIO(data), *row_counts._buffers()) == expected, (data, row_counts.CHUNK)


def test_workers_hand_on_their_counts_through_files_that_the_driver_sums(tmp_path, monkeypatch):
    from pipeline.beam import progress as worker

    monkeypatch.setenv(worker.PROGRESS_FOLDER_ENV, str(tmp_path))
    a, b = worker.Progress("scoring", 30), worker.Progress("scoring", 30)
    for p in (a, b):
        p.start()
    a.add("scored", system="s1")  # the first element is handed on at once: the stage has started
    assert read_counts(str(tmp_path)) == {"scoring": {"scored": 1}, "systems": {"s1"}}
    for i in range(99):
        b.add("scored", system=f"s{i % 3}")
    b.add("failed")
    b.flush(force=True)
    assert read_counts(str(tmp_path)) == {"scoring": {"scored": 100, "failed": 1}, "systems": {"s0", "s1", "s2"}}
    assert len(list(tmp_path.glob("*.json"))) == 2  # one file per worker, replaced, never appended


def test_a_tally_counts_every_call_from_many_threads_at_once(tmp_path, monkeypatch):
    """Beam's multi_threading mode runs a worker's bundles in threads of one process,
    and they share its tallies.  A tally seen by another thread before it was started
    failed a run ("'Progress' object has no attribute 'pending'"); here the start is
    slowed so that every thread arrives while the first is still making it."""
    import threading
    import time

    from pipeline.beam import progress as worker

    monkeypatch.setenv(worker.PROGRESS_FOLDER_ENV, str(tmp_path))
    monkeypatch.setattr(worker, "_TALLIES", {})
    start = worker.Progress.start

    def slow_start(self):
        time.sleep(0.05)
        start(self)

    monkeypatch.setattr(worker.Progress, "start", slow_start)
    threads, calls, failures = 8, 200, []
    barrier = threading.Barrier(threads)

    def count():
        barrier.wait()
        try:
            for _ in range(calls):
                worker.tally("significance", "metrics")
        except Exception as error:  # noqa: BLE001 - the test reports what a thread met
            failures.append(repr(error))

    pool = [threading.Thread(target=count) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert failures == []
    assert read_counts(str(tmp_path))["significance"] == {"metrics": threads * calls}


@pytest.fixture(scope="module")
def long_input(tmp_path_factory) -> Path:
    """40,000 short summaries (5 systems x 8,000 documents) in 4 shards: a run of
    this many rows reads and scores for seconds, in this process (5 MiB)."""
    import random

    folder = tmp_path_factory.mktemp("long")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(50)]
    rows = []
    for d in range(8000):
        reference = " ".join(rng.choice(words) for _ in range(8))
        rows += [{"system": f"s{s}", "doc_id": f"d{d:05d}", "candidate": " ".join(rng.choice(words) for _ in range(8)),
                  "references": [reference]} for s in range(5)]  # fmt: skip
    for i in range(4):
        with open(folder / f"part-{i}.jsonl", "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows[i::4])
    return folder


def test_a_long_run_shows_each_stage_with_its_total_on_a_non_terminal(long_input, tmp_path):
    config = tmp_path / "run.toml"
    config.write_text(
        f'[input]\ncandidates = ["{long_input}/*.jsonl"]\n[rouge]\nargs = "-n 4 -w 1.2 -2 -1 -U -m -c 95 -r 1000"\n'
        f'[output]\nfolder = "{tmp_path / "out"}"\n[run]\nprogress_seconds = 0.1\n'
    )
    done = subprocess.run([sys.executable, "-m", "pipeline", "run", "--config", str(config)],
                          cwd=ROOT, capture_output=True, text=True)  # stderr is a pipe: log lines
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("rouge-pipeline: ")]
    # While it works, a stage logs what is done of the total, the rate and the time
    # left: how many such lines a run shows depends on the machine's speed (the lines
    # themselves are tested with counters set by hand above), so here only their shape.
    for line in lines:
        if " so far)" in line:
            assert re.search(r": ([\d,]+ of [\d,]+ [a-z]+ \(\d+%\), ([\d.,]+/s|working)"
                             r"(, (about [\w ]+|under a second) left)? |working )\([\w ]+ so far\)$", line), line
    # every stage ends with a line, at the true numbers, however fast it was
    assert "rouge-pipeline: starting Beam: done in " in done.stderr
    assert "rouge-pipeline: reading: 40,000 rows in " in done.stderr
    assert "rouge-pipeline: scoring: 40,000 summaries in " in done.stderr
    assert re.search(r"rouge-pipeline: aggregating: 5 systems in ", done.stderr)
    # a stage that ended between two looks of the driver still ends with its line
    assert re.search(r"rouge-pipeline: significance: 10 pairs in ", done.stderr)
    assert re.search(r"rouge-pipeline: report: done in ", done.stderr)
    assert "rows read 40000, scored 40000, errors 0" in done.stdout  # stdout: the results only
    assert "rouge-pipeline:" not in done.stdout

    quiet = subprocess.run([sys.executable, "-m", "pipeline", "run", "--config", str(config), "--quiet",
                            "--output", str(tmp_path / "quiet")], cwd=ROOT, capture_output=True, text=True)
    assert quiet.returncode == 0, quiet.stderr
    assert not re.search(r"(reading|scoring|aggregating|significance|report): ", quiet.stderr)


def test_score_shows_reading_scoring_and_the_bootstrap_with_totals(long_input, monkeypatch, capsys):
    from pipeline import cli

    monkeypatch.setattr(shown, "INTERVAL", 0.05)
    code = cli.main(["score", str(long_input / "part-0.jsonl"), str(long_input / "part-1.jsonl"),
                     "--rouge-args", "-n 2 -c 95 -r 1000 -m", "--format", "csv"])
    assert code == 0
    err = capsys.readouterr().err
    assert re.search(r"rouge-pipeline: scoring: [\d,]+ of 20,000 summaries \(\d+%\), [\d.,]+/s", err), err
    assert "rouge-pipeline: reading: 20,000 rows in " in err
    assert "rouge-pipeline: scoring: 20,000 summaries in " in err
    assert re.search(r"rouge-pipeline: bootstrap: 5 systems in [\d.]+ s", err), err
    quiet = cli.main(["score", str(long_input / "part-0.jsonl"), "--rouge-args", "-n 2 -c 95 -r 1000 -m",
                      "--format", "csv", "--quiet"])
    assert quiet == 0
    assert "rouge-pipeline:" not in capsys.readouterr().err


def test_worker_processes_report_to_the_driver_not_to_the_terminal(long_input, tmp_path):
    """On the multi-processing runner the workers are other processes: their counts
    reach the driver's view (the aggregation's total of 8 systems comes from the
    scorers' files), and no worker prints a line of its own."""
    config = tmp_path / "run.toml"
    config.write_text(
        f'[input]\ncandidates = ["{long_input}/*.jsonl"]\n[rouge]\nargs = "-n 2 -c 95 -r 1000"\n'
        f'[output]\nfolder = "{tmp_path / "out"}"\n[run]\nprogress_seconds = 0.1\n'
    )
    done = subprocess.run([sys.executable, "-m", "pipeline", "run", "--config", str(config), "--runner=FnApiRunner",
                           "--direct_running_mode=multi_processing", "--direct_num_workers=2"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "rouge-pipeline: starting Beam: done in " in done.stderr  # the workers' start, seconds long
    assert "rouge-pipeline: aggregating: 5 systems in " in done.stderr
    assert "rouge-pipeline: worker " not in done.stderr
    assert "rows read 40000, scored 40000, errors 0" in done.stdout


def test_the_readme_shows_progress_lines_in_the_shapes_they_are_printed():
    """Every progress line the README and the manual show for run, score, compare and meta-eval has
    one of the shapes a stage prints (checked against its lines above): while it
    works, at its end, or a one-step stage's."""
    shapes = [
        r"[\d,]+ of [\d,]+ [\w (),]+ \(\d+%\), ([\d.,]+/s|working)(, (about [\w ]+|under a second) left)? \([\w ]+ so far\)",
        r"[\d,]+( of [\d,]+)? [\w (),]+ in [\d.]+ s( \([\d.,]+/s\))?",
        r"done in [\d.]+ s",
        r"working \([\w ]+ so far\)",
    ]
    stages = ("starting Beam", "reading", "scoring", "aggregating", "significance", "report", "bootstrap",
              "reading runs", "paired tests", "texts", "correlations with bootstrap", "permutation tests")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    shown_lines = re.findall(rf"^rouge-pipeline: ({'|'.join(stages)}): (.*)$", readme, flags=re.M)
    assert {stage for stage, _ in shown_lines} >= {"aggregating", "bootstrap", "paired tests",
                                                    "correlations with bootstrap"}
    for stage, text in shown_lines:
        assert any(re.fullmatch(shape, text) for shape in shapes), (stage, text)


def test_lines_are_counted_as_bytes_strip_sees_them():
    """The JSONL row count (progress totals) against a line-by-line count done here,
    on random texts of blank, white-space and real lines cut into small chunks."""
    import io
    import random

    import pipeline.io.row_counts as row_counts

    rng = random.Random(5)
    pieces = [b"", b" ", b"\t", b"\r", b"\x0b\x0c", b"{}", b' {"a": 1} ', b"x\r", b"\x85", b"\xa0"]
    for trial in range(200):
        data = b"\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.5:
            data += b"\n"
        expected = sum(1 for line in data.split(b"\n") if line.strip())
        for chunk in (1, 3, 7, 1 << 20):
            row_counts.CHUNK = chunk
            try:
                assert row_counts._lines(io.BytesIO(data), *row_counts._buffers()) == expected, (trial, chunk, data)
            finally:
                row_counts.CHUNK = 1 << 20


@pytest.mark.parametrize("quiet", [True, False])
def test_a_quiet_run_does_not_count_its_inputs_ahead(tmp_path, monkeypatch, quiet):
    # The totals are for lines nobody sees under --quiet: counting 1,000,000 gzip rows
    # costs about 4 CPU-s.  The workers still count (the stall watch reads them).
    import pipeline.run_progress as run_progress
    from pipeline.beam.run import run
    from pipeline.config import InputConfig, OutputConfig, RougeConfig, RunConfig
    from tests.pipeline.runs import IN_MEMORY, write_jsonl as write_rows

    counted = []
    monkeypatch.setattr(run_progress, "count_all", lambda paths: counted.append(list(paths)) or 0)
    source = write_rows(tmp_path / "in.jsonl", [{"system": "A", "doc_id": "d1", "candidate": "a cat sat",
                                                 "references": ["the cat sat"]}])
    config = RunConfig(input=InputConfig(candidates=(str(source),)), rouge=RougeConfig(args="-n 1"),
                       output=OutputConfig(folder=str(tmp_path / "out"))).validate()
    stream = io.StringIO()
    record = run(config, IN_MEMORY, progress=Progress(quiet=quiet, stream=stream, interval=0))
    assert record["counts"]["scored"] == 1
    assert counted == ([] if quiet else [[str(source)], []])
    assert (stream.getvalue() == "") == quiet
