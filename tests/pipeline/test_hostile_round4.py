"""Unattended safety, round 4 (issue 31): every class of defect found by a fourth
round of hostile use, with its neighbours.  Each test asserts what is always true:
a clear error (exit 2 for what is refused before any work) or the right result,
and, where memory is the defect, the peak resident memory of the process that did
the work (os.wait4 of that child) against a bound that does not grow with the input.

Classes here: streams (stdin, line-aligned files, error rows, a closed pipe);
names and settings (the id rule, one column in two roles, a baseline naming no
system, control characters in a sep: rule, Beam's options); user regexes (bounded
in time); stalls (the rules, look by look); a failed strict run on a full disk.
The Parquet, judgments, references and many-systems classes are in
test_hostile_round4_memory.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.config import HumanConfig, InputConfig, RunConfig, SignificanceConfig
from rouge_core import RougeConfigError
from tests.pipeline.runs import seal, write_jsonl

PYTHON = sys.executable
ROW = {"system": "a", "doc_id": "d1", "candidate": "the cat sat on the mat", "references": ["the cat sat"]}


# The command, run so that it writes its own peak resident memory (VmHWM) to the file
# ROUGE_TEST_PEAK_FILE names as it exits: the peak of the process that did the work,
# never its parent's (a forked child's ru_maxrss starts at the parent's size).
COMMAND = """
import os
_exit = os._exit
def _exit_reporting(code):
    path = os.environ.get("ROUGE_TEST_PEAK_FILE")
    if path:
        with open("/proc/self/status") as fh:
            peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))
        with open(path, "w") as out:
            out.write(str(peak))
    _exit(code)
os._exit = _exit_reporting
from pipeline.cli import entry
entry()
"""


def pipeline_command(*args) -> list[str]:
    return [PYTHON, "-c", COMMAND, *args]


def shell_command(*args) -> str:
    """`pipeline_command` as a shell word list (for pipelines in bash)."""
    import shlex

    return " ".join(shlex.quote(word) for word in pipeline_command(*args))


def measured(args, *, stdin=None, timeout=300, cwd=None):
    """(exit status, stdout, stderr, peak MiB) of a command: the peak resident memory the
    `pipeline_command` in it reported (0 when it reported none)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".peak") as peak:
        env = dict(os.environ, ROUGE_TEST_PEAK_FILE=peak.name)
        process = subprocess.Popen(args, stdin=stdin, stdout=out, stderr=err, cwd=cwd, env=env,
                                   start_new_session=True)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out.seek(0)
        err.seek(0)
        reported = Path(peak.name).read_text()
        return process.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"), \
            int(reported) / 1024 if reported else 0.0


# --------------------------------------------------------------------------- streams


def test_stdin_that_is_a_device_is_refused_at_once(tmp_path):
    """`score - < /dev/zero` ran at full CPU until killed; now '-' on a device is
    refused before anything is read (as `score /dev/zero` is), for every way stdin
    is named: JSON Lines, line-aligned candidates or references, --candidates."""
    reference = tmp_path / "ref.txt"
    reference.write_text("".join(f"the cat sat {i}\n" for i in range(10)))
    for args in (["-"], ["-", str(reference)], [str(reference), "-"], ["--candidates", "-", "--references",
                                                                        str(reference)]):
        with open("/dev/zero", "rb") as zero:
            code, _, err, _ = measured(pipeline_command("score", *args), stdin=zero, timeout=120)
        assert code == 2, (args, err)
        assert "stdin ('-') is a character device, not a file or a pipe" in err, err


def test_an_endless_stdin_against_a_short_reference_stops_at_the_first_extra_line(tmp_path):
    """`yes "the cat sat" | score - ref.txt` with a 10-line reference read every line
    before comparing the lengths (1.5 GB in 2 s); the files are now read in step."""
    reference = tmp_path / "ref.txt"
    reference.write_text("".join(f"the cat sat {i}\n" for i in range(10)))
    command = f"yes 'the cat sat' | {shell_command('score', '-', str(reference))}"
    code, _, err, peak = measured(["bash", "-c", f"{command}; exit ${{PIPESTATUS[1]}}"], timeout=120)
    assert code == 2, err
    assert "line-aligned files must have the same number of lines: " + str(reference) + \
        " ends after 10 lines, but - (stdin) has more" in err, err
    assert 0 < peak < 400, peak


def test_line_aligned_files_of_different_lengths_are_named(tmp_path):
    short, long = tmp_path / "short.txt", tmp_path / "long.txt"
    short.write_text("a b\nc d\n")
    long.write_text("a b\nc d\ne f\n")
    code, _, err, _ = measured(pipeline_command("score", str(long), str(short)))
    assert code == 2
    assert f"{short} ends after 2 lines, but {long} has more" in err, err
    code, _, err, _ = measured(pipeline_command("score", str(short), str(long), str(long)))
    assert code == 2
    assert f"{short} ends after 2 lines, but {long}, {long} have more" in err, err


def test_error_rows_are_counted_not_kept(tmp_path):
    """2,000,000 junk lines on stdin cost 455 MB (every error record kept, ten
    printed).  Now the counts and the first ten kinds of rows (each the first row
    and how many are like it): memory does not grow with them."""
    def junk(lines):
        command = f"{PYTHON} -c 'import sys; sys.stdout.write(\"junk\\n\" * {lines})'"
        return measured(["bash", "-c", f"{command} | {shell_command('score', '-', '--quiet')}; "
                         "exit ${PIPESTATUS[1]}"], timeout=600)

    code, _, err, small = junk(20_000)
    assert code == 1 and "rows read 20000, scored 0, errors 20000" in err and "(and 19,999 more rows like it)" in err, err
    code, _, err, large = junk(400_000)
    assert code == 1 and "rows read 400000, scored 0, errors 400000" in err and "(and 399,999 more rows like it)" in err, err
    assert err.count("invalid_json: not valid JSON") == 1, err  # (one kind of row: one line with its count)
    assert 0 < small and large < small + 40, (small, large)  # 400,000 kept records cost 90 MB more


def test_a_closed_stdout_ends_quietly_by_sigpipe(tmp_path):
    """`score ... | head -1` ended with `rouge-pipeline: error: BrokenPipeError`; as
    `seq 1 1000000 | head -1`, it ends quietly, and its status is SIGPIPE's (141)."""
    rows = [dict(ROW, system=s, doc_id=str(d)) for d in range(3000) for s in ("a", "b")]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    code, out, err, _ = measured(["bash", "-c", f"{PYTHON} -c 'from pipeline.cli import entry; entry()' score "
                                  f"{data} --format jsonl --quiet | head -1; echo ${{PIPESTATUS[0]}}; "
                                  "seq 1 1000000 | head -1 > /dev/null; echo ${PIPESTATUS[0]}"])
    assert code == 0
    first, status, seq_status = out.splitlines()
    assert json.loads(first)["system"] == "a"
    assert status == seq_status == "141", out
    assert "error" not in err and "Broken" not in err, err


# ------------------------------------------------------------------ names and settings


def config(**sections) -> RunConfig:
    return RunConfig(input=InputConfig(candidates=("x.jsonl",), **sections.get("input", {})),
                     human=HumanConfig(**sections.get("human", {})),
                     significance=SignificanceConfig(**sections.get("significance", {})))


@pytest.mark.parametrize("fields, message", [
    ({"candidate_field": "references"},
     "input.candidate_field must be a column of its own, not also input.references_field"),
    ({"system_field": "doc_id"}, "input.system_field must be a column of its own, not also input.doc_id_field"),
    ({"system_field": "candidate"}, "input.system_field must be a column of its own, not also input.candidate_field"),
    ({"doc_id_field": "text", "candidate_field": "text"},
     "input.doc_id_field must be a column of its own, not also input.candidate_field"),
    ({"doc_id_field": "reference_id"},
     "input.doc_id_field must be a column of its own, not also the reference rows' reference_id"),
])
def test_one_column_in_two_roles_is_refused(fields, message):
    """`candidate_field = "references"` scored every row against itself (100%);
    `system_field = "doc_id"` failed only after the run."""
    with pytest.raises(RougeConfigError, match="one column cannot be read in two roles") as raised:
        config(input=fields).validate()
    assert message in str(raised.value)


def test_a_candidate_and_a_reference_may_share_a_column_name():
    """Split form: candidate files and reference files are different files, so
    reading both texts from a column "text" is no clash; and a reference row's one
    column may hold a list of references or one text (--fields reference=references)."""
    config(input={"candidate_field": "text", "reference_field": "text"}).validate()
    config(input={"reference_field": "references"}).validate()


HOSTILE_NAMES = {
    "ESC": "human\x1b[2J",
    "newline": "human\nROUGE-1 Average_R: 1.00000",
    "C1 control": "human\x85",
    "bidi override": "human\u202e",
    "invisible only": "\u200b\u200c\u2060",
    "spaces only": "   ",
    "empty": "",
}


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
@pytest.mark.parametrize("key", ["human.name", "significance.baseline", "input.system_field"])
def test_every_name_a_config_gives_follows_the_id_rule(kind, key):
    """`human.name` accepted ESC and newlines: raw ESC reached rouge155.txt and
    report.html, and a forged `ROUGE-1 Average_R` line reached the report."""
    name = HOSTILE_NAMES[kind]
    section, field = key.split(".")
    if key == "significance.baseline" and not name:
        config(significance={"baseline": ""}).validate()  # empty: every pair, not a name
        return
    with pytest.raises(RougeConfigError, match=f"{key} must be a name that follows the id rule") as raised:
        config(**{section: {field: name}}).validate()
    assert "\x1b" not in str(raised.value) and "\n" not in str(raised.value)


def test_score_refuses_a_hostile_system_name(tmp_path):
    cand, ref = tmp_path / "c.txt", tmp_path / "r.txt"
    cand.write_text("a b\n")
    ref.write_text("a b\n")
    for name in ("x\x1b[31m", "\u200b\u2060", "a\nb"):
        code, _, err, _ = measured(pipeline_command("score", str(cand), str(ref), "--system", name))
        assert code == 2, err
        assert "--system" in err and "\x1b" not in err, err


@pytest.mark.parametrize("name", ["\u200b\u200c\u2060", "\u2060", " \u200b ", "\ufe0f"])
def test_a_system_made_only_of_invisible_characters_is_refused_like_an_empty_one(tmp_path, name):
    """Round 3: a system named U+200B U+200C U+2060 was published as a system; it is
    an `invalid_id` row now, in `score` and in `run`, from a row or from a path."""
    from pipeline.io.rows import parse_candidate
    from pipeline.io.patterns import SystemFromPath
    from pipeline.records import SourceRow

    c = InputConfig(candidates=("x",))
    error = parse_candidate(SourceRow("f.jsonl", 1, dict(ROW, system=name)), c, True, None)
    assert error.reason == "invalid_id" and "invisible characters or spaces" in error.message
    error = parse_candidate(SourceRow("f.jsonl", 1, dict(ROW, doc_id=name)), c, True, None)
    assert error.reason == "invalid_id"
    row = {k: v for k, v in ROW.items() if k != "system"}
    error = parse_candidate(SourceRow(f"out/{name}/x.jsonl", 1, row), c, True, SystemFromPath(r"out/(?P<system>[^/]+)/"))
    assert error.reason == "invalid_id", error
    data = write_jsonl(tmp_path / "in.jsonl", [ROW, dict(ROW, system=name)])
    code, out, err, _ = measured(pipeline_command("score", str(data), "--format", "csv"))
    assert code == 3, err  # one of two rows rejected: past the default 1%
    assert "invalid_id: 1" in err
    header, *rows = [line.split(",") for line in out.splitlines()]
    assert {row[header.index("system")] for row in rows} == {"a"}


@pytest.mark.parametrize("rule", ["sep:\x1b[2J", "sep:\x85", "sep:a\u2028b", "sep:\u202e"])
def test_a_sep_rule_with_a_control_character_is_refused(tmp_path, rule):
    """Control characters in a sep: rule reached stderr (the signature) and JSON raw."""
    data = write_jsonl(tmp_path / "in.jsonl", [ROW])
    code, out, err, _ = measured(pipeline_command("score", str(data), "--sentence-split", rule, "--format", "json"))
    assert code == 2, err
    assert "cannot hold a control character" in err
    assert not any(ch in err + out for ch in "\x1b\x85\u2028\u202e"), err


def test_a_baseline_that_names_no_system_fails_the_run_naming_the_systems(tmp_path):
    """It gave an empty significance table with no warning."""
    from pipeline.beam.run import RunFailed

    data = write_jsonl(tmp_path / "in.jsonl", [dict(ROW, system=s, doc_id=d) for s in ("lead", "bart") for d in "123"])
    with pytest.raises(RunFailed, match=r"significance.baseline 'pegasus' names no system of this run, so no pair "
                                        r"could be tested; its systems: 'bart', 'lead'"):
        run_pipeline_with_baseline(tmp_path / "out", data, "pegasus")
    assert not (tmp_path / "out").exists()
    record = run_pipeline_with_baseline(tmp_path / "ok", data, "lead")
    assert record["counts"]["scored"] == 6


def run_pipeline_with_baseline(output, data, baseline):
    from pipeline.beam.run import run
    from pipeline.config import OutputConfig, RougeConfig

    c = RunConfig(input=InputConfig(candidates=(str(data),)), rouge=RougeConfig(args="-n 1 -r 10"),
                  significance=SignificanceConfig(baseline=baseline), output=OutputConfig(folder=str(output)))
    return run(c.validate(), ["--runner=FnApiRunner", "--direct_running_mode=in_memory"])


# ------------------------------------------------------------------------ user regexes

CATASTROPHIC = r"(?P<system>(a|aa)+)$"  # Fibonacci(n) ways to match n a's: never ends on 60 a's and a b


def test_a_backtracking_system_pattern_is_refused_before_any_work(tmp_path):
    """A backtracking `input.system_from_path` hung the run at full CPU; it is tried
    on every input path, with a time bound, before anything is read."""
    folder = tmp_path / ("a" * 60 + "b")
    data = write_jsonl(folder / "in.jsonl", [{k: v for k, v in ROW.items() if k != "system"}])
    config_file = tmp_path / "c.toml"
    config_file.write_text(f"[input]\ncandidates = [{json.dumps(str(data))}]\nsystem_from_path = "
                           f"{json.dumps(CATASTROPHIC)}\n[rouge]\nargs = \"-n 1 -r 10\"\n")
    for command in (["score", "--config", str(config_file)], ["run", "--config", str(config_file), "--output",
                                                               str(tmp_path / "out")]):
        code, _, err, _ = measured(pipeline_command(*command), timeout=240)
        assert code == 2, err
        assert "took more than 1 s on" in err and "backtracks catastrophically" in err, err
    assert not (tmp_path / "out").exists()


def test_pyrouge_patterns_are_bounded_too(tmp_path):
    (tmp_path / "sys").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "sys" / ("a" * 60 + "b")).write_text("a b\n")
    (tmp_path / "models" / "m.A.1.txt").write_text("a b\n")
    code, _, err, _ = measured(pipeline_command(
        "score", "--system-dir", str(tmp_path / "sys"), "--model-dir", str(tmp_path / "models"),
        "--system-pattern", "((?:a|aa)+)$", "--model-pattern", "m.[A-Z].#ID#.txt"), timeout=240)
    assert code == 2, err
    assert "--system-pattern '((?:a|aa)+)$' took more than 1 s" in err, err


def test_a_system_pattern_is_matched_once_per_file_and_still_works(tmp_path):
    from pipeline.io.patterns import SystemFromPath

    pattern = SystemFromPath(r"runs/(?P<system>[^/]+)/")
    assert pattern.system("runs/lead-3/part-0.jsonl") == "lead-3"
    assert pattern.system("elsewhere/x.jsonl") is None
    assert pattern.known == {"runs/lead-3/part-0.jsonl": "lead-3", "elsewhere/x.jsonl": None}
    import pickle

    again = pickle.loads(pickle.dumps(pattern))  # (sent to Beam workers)
    assert again.system("runs/b/x") == "b" and again.known == {"runs/b/x": "b"}


# ---------------------------------------------------------------------------- stalls


def _looks(watch, seconds, *, share=0.0, counters=lambda t: 0, waiting=0.0):
    """The rules look by look: three processes (the driver and two workers) idle at
    0.5% of a core (gRPC's wake-ups), process 2 using `share` of a core and waiting
    for a CPU `waiting` of the time."""
    from pipeline.beam.runners.faults import _TICKS

    waits = {}
    watch.waited = lambda pid: waits.get(pid, 0.0)
    for t in range(seconds + 1):
        ticks = {pid: int(t * _TICKS * (0.005 + (share if pid == 2 else 0))) for pid in (1, 2, 3)}
        waits[2] = t * waiting
        reason = watch.look(float(t), {pid: ("S", n) for pid, n in ticks.items()}, counters(t), True)
        if reason:
            return t, reason
    return None


def test_a_busy_worker_without_progress_is_a_stall():
    """A worker spinning (a backtracking regex) was never stopped: once the workers
    have counted, a process busy for the whole limit with no counter moving stops
    the run, and the message says what it cannot tell apart."""
    from pipeline.beam.runners.faults import StallWatch

    t, reason = _looks(StallWatch(10), 60, share=0.995, counters=lambda t: min(t, 5))
    assert t == 15
    assert reason == ("no progress counter moved for 10 s while a process of the run (2) kept 100% of a core "
                      "busy: a step that never ends (such as a regex that backtracks), or one slower than the "
                      "limit allows (raise it if the run is only slow)")
    # counters moving: busy is working
    assert _looks(StallWatch(10), 60, share=1.0, counters=lambda t: t // 3) is None
    # a spinning worker on a loaded machine (a quarter of a core) is still busy
    assert _looks(StallWatch(10), 60, share=0.25, counters=lambda t: min(t, 5))[0] == 15


def test_a_stopped_worker_is_named_though_its_peer_is_busy_without_progress():
    """Process 2 busy, no counter moving since t = 5; process 3 stopped (SIGSTOP) at
    t = 7.  The busy peer's window would close first (t = 15); the stopped worker is
    what wedges the run, and is named at its own limit (t = 17).  Once it goes on,
    its peer gets a whole window again."""
    from pipeline.beam.runners.faults import _TICKS, StallWatch

    def looks(watch, stop, cont=None):
        for t in range(61):
            ticks = {1: int(t * _TICKS * 0.005), 2: int(t * _TICKS), 3: int(t * _TICKS * 0.005)}
            stopped = stop <= t and (cont is None or t < cont)
            states = {pid: ("T" if pid == 3 and stopped else "S", n) for pid, n in ticks.items()}
            reason = watch.look(float(t), states, min(t, 5), True)
            if reason:
                return t, reason
        return None

    assert looks(StallWatch(10), stop=7) == (17, "a Beam worker process (3) has been stopped (state T: SIGSTOP or a "
                                                 "debugger) for 10 s")
    t, reason = looks(StallWatch(10), stop=7, cont=12)  # continued before its limit: the busy peer, a window later
    assert t == 21 and reason.startswith("no progress counter moved for 10 s while a process of the run (2)")


def test_a_slow_run_is_not_a_wedged_run():
    """A run on a starved CPU (every process held to 4% of a core) was stopped after
    67 s as "a wedged worker": start-up moves no counter and no process reached 5%
    of a core.  A process that uses a CPU, or waits for one, is working."""
    from pipeline.beam.runners.faults import StallWatch

    # start-up (no counter yet), busy: starting, not wedged, however long
    assert _looks(StallWatch(10), 120, share=1.0) is None
    # starved: 4% of a core, waiting for a CPU the rest of the time, before and after counting
    assert _looks(StallWatch(10), 120, share=0.04, waiting=0.96) is None
    assert _looks(StallWatch(10), 120, share=0.04, waiting=0.96, counters=lambda t: min(t, 5)) is None
    # starved harder (1%: less than an idle worker's share, but waiting): still not wedged
    assert _looks(StallWatch(10), 120, share=0.01, waiting=0.99, counters=lambda t: min(t, 5)) is None
    # idle (nothing used, nothing waited): wedged, and the message says only that
    t, reason = _looks(StallWatch(10), 60, counters=lambda t: min(t, 5))
    assert t == 15 and reason.startswith("no progress for 10 s: no counter moved, and no process of the run used "
                                         "2% of a core or waited for one")


def test_the_run_queue_wait_is_read_from_proc():
    from pipeline.beam.runners.faults import run_queue_wait

    assert run_queue_wait(os.getpid()) >= 0.0
    assert run_queue_wait(2**22 + 12345) == 0.0  # (no such process)


# --------------------------------------------------------------------- a failed strict run


def fill(folder: Path) -> None:
    """No block and no inode left in `folder`'s file system."""
    try:
        with open(folder / "filler", "wb") as fh:
            while True:
                fh.write(b"\0" * (1 << 16))
    except OSError:
        pass
    try:
        for i in range(1_000_000):
            (folder / f"f{i}").touch()
    except OSError:
        pass


def test_a_failed_strict_run_on_a_full_disk_removes_its_staging_and_says_strict(tmp_path):
    """It left its staging folder and lock, and never said "strict"."""
    from tests.pipeline.test_output_safety import mount_tmpfs

    disk = tmp_path / "disk"
    if not mount_tmpfs(disk, "32m,nr_inodes=400"):  # (a few hundred files fill it: the run needs fewer)
        (pytest.fail if os.environ.get("CI") else pytest.skip)("mounting a tmpfs needs root (CI runs as root)")
    try:
        data = write_jsonl(tmp_path / "in.jsonl", [ROW, dict(ROW, doc_id="d2", candidate=None)])
        resume = tmp_path / "resume"
        env = dict(os.environ, ROUGE_PIPELINE_TEST_PAUSE=f"before_checks:{resume}")
        process = subprocess.Popen(
            pipeline_command("run", "--input", str(data), "--output", str(disk / "out"), "--strict",
                             "--rouge-args", "-n 1 -r 10", "--runner", "FnApiRunner"),
            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        lines = []
        for line in process.stderr:
            lines.append(line)
            if "test pause at before_checks" in line:
                break
        fill(disk)
        resume.touch()
        err = "".join(lines) + process.stderr.read()
        assert process.wait(timeout=120) == 1, err
        assert "rouge-pipeline: run failed, nothing published: strict mode: 1 error rows" in err, err
        assert "the errors table could not be kept" in err and "No space left on device" in err, err
        left = {p.name for p in disk.iterdir()} - {"filler"}
        assert left and all(name[0] == "f" and name[1:].isdigit() for name in left), left  # (the run left nothing)
    finally:
        subprocess.run(["umount", str(disk)])


# ----------------------------------------------------------------------- settings


@pytest.mark.parametrize("option, message", [
    ("--direct_num_workers=-1", "Beam option --direct_num_workers must be from 0 to 256; got -1"),
    ("--direct_num_workers=100000", "Beam option --direct_num_workers must be from 0 to 256; got 100000"),
    ("--direct_num_workers=two", "Beam option --direct_num_workers: invalid int value: 'two'"),
    ("--direct_running_mode=fast", "Beam option --direct_running_mode: invalid choice: 'fast'"),
    ("--num_workers=-3", "Beam option --num_workers must be 0 or more; got -3"),
    ("--parallelism=-2", "Beam option --parallelism must be -1 or more; got -2"),
    ("--job_port=70000", "Beam option --job_port must be from 0 to 65535; got 70000"),
])
def test_out_of_range_beam_options_are_refused_with_a_sentence(tmp_path, option, message):
    """`--direct_num_workers=-1` ended in an IndexError inside Beam."""
    data = write_jsonl(tmp_path / "in.jsonl", [ROW])
    code, _, err, _ = measured(pipeline_command("run", "--input", str(data), "--output", str(tmp_path / "out"),
                                                "--runner", "FnApiRunner", option))
    assert code == 2, err
    assert message in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def test_beam_options_in_range_pass():
    from pipeline.beam.runners.options import check_beam_args

    check_beam_args(["--runner=FnApiRunner", "--direct_num_workers=0", "--direct_running_mode=multi_processing",
                     "--parallelism=-1"], [])


def test_sentencex_splitting_does_not_keep_every_line():
    """`sentencex` kept every line and its pieces (an lru_cache of 16,384 keys of up to
    max_text_bytes): 785 MB against 262 with `newline`.  Long lines are not kept, and
    the short ones kept are a bounded number."""
    import tracemalloc

    from rouge_core.sentence_split import CACHED_CHARS, CACHED_LINES, splitter

    split = splitter("sentencex")
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(60):
        line = f"Line {i} starts here. " + "It goes on and on, word after word. " * (CACHED_CHARS // 30)
        assert len(split(line)) > 1
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert held < 200_000, held  # 60 lines of 2 KB and their pieces: 250 KB when kept
    assert CACHED_LINES * CACHED_CHARS <= 8 << 20


# --------------------------------------------------------- rouge_core.compat, odd inputs

TEXTS = {
    "str": ("The quick brown fox.\nJumps over the dog", "The quick brown dog.\nJumps on the log"),
    "bytes": (b"The quick brown fox.\nJumps over the dog", b"The quick brown dog.\nJumps on the log"),
    "bytes target": (b"The quick brown fox", "the quick fox"),
    "utf-8 bytes": ("Caf\u00e9 \u212a ok".encode(), "caf\u00e9 k ok"),
    "latin-1 bytes": ("caf\u00e9 ok".encode("latin-1"), "caf ok"),
    "bytearray": (bytearray(b"a b"), "a b"),
    "None": (None, "a b"),
    "empty bytes": (b"", b""),
}
TYPES = {
    "list": lambda: ["rouge1", "rougeL"],
    "generator": lambda: (t for t in ["rouge1", "rougeL"]),
    "set": lambda: {"rouge1", "rouge2"},
    "set of one": lambda: {"rougeLsum"},
    "trailing newline": lambda: ["rouge1\n", "rougeL"],
    "bytes": lambda: [b"rouge1", b"rougeL"],
    "a bytes string": lambda: b"rouge1",
    "a string": lambda: "rougeL",
    "rouge0": lambda: ["rouge0"],
    "unknown": lambda: ["rougeX"],
    "Arabic digit": lambda: ["rouge\u0661"],
    "empty": lambda: [],
    "dict": lambda: {"rouge2": 0, "rougeLsum": 1},
}


def _outcome(module, types, target, prediction, method, stem):
    try:
        scorer = module.RougeScorer(types(), use_stemmer=stem)
        result = scorer.score(target, prediction) if method == "score" else scorer.score_multi([target], prediction)
        return {key: tuple(score) for key, score in result.items()}
    except Exception as err:  # noqa: BLE001 (the exception's type is what is compared)
        return err


@pytest.mark.parametrize("types", TYPES)
@pytest.mark.parametrize("texts", TEXTS)
def test_compat_reads_odd_inputs_as_rouge_score_does(types, texts):
    """Bytes inputs raised TypeError where rouge-score 0.1.2 decodes them (TensorFlow
    datasets yield bytes); odd rouge_types behaved differently.  Against rouge-score
    0.1.2 itself: the same values, or an exception of the same type."""
    from rouge_score import rouge_scorer as peer

    from rouge_core.compat import rouge_scorer as ours

    target, prediction = TEXTS[texts]
    for method in ("score", "score_multi"):
        for stem in (False, True):
            expected = _outcome(peer, TYPES[types], target, prediction, method, stem)
            got = _outcome(ours, TYPES[types], target, prediction, method, stem)
            if isinstance(expected, Exception):  # the same type (`except` it as for rouge-score), or a subclass
                assert isinstance(got, type(expected)), (method, stem, expected, got)
            else:
                assert got == expected, (method, stem)


# ------------------------------------------------------------- a hostile run.json

SIGNATURE = "rouge155|n:1|L:yes|W:no|S:no|stem:no|stop:no|limit:none|sent:newline|mref:average|alpha:0.5|t:0|ci:95%@10|v:0.1.0"


@pytest.fixture(scope="module")
def result_folder(tmp_path_factory):
    from tests.pipeline.runs import run_pipeline

    tmp = tmp_path_factory.mktemp("result")
    rows = [dict(ROW, system=s, doc_id=str(d), candidate=f"the cat {s} sat {d % 3}") for s in ("a", "b") for d in range(6)]
    run_pipeline(tmp / "out", [write_jsonl(tmp / "in.jsonl", rows)], flags="-n 1 -r 10")
    return tmp / "out"


def forged(folder: Path, target: Path, signature: str) -> Path:
    import shutil

    shutil.copytree(folder, target)
    record = json.loads((target / "run.json").read_text())
    record["signature"] = signature
    (target / "run.json").write_text(json.dumps(record))
    return seal(target)  # (a forged folder with a manifest that matches: what a forger would write)


@pytest.mark.parametrize("forgery", [
    "\n\n# All systems improved\x1b[2J",
    "` **FORGED** `\n## Heading\x1b]0;title\x07",
    "|x:\x1b[31mred\u202e",
])
def test_a_hostile_run_json_signature_is_shown_escaped(tmp_path, result_folder, forgery, capsys):
    """A run.json signature read by compare put raw escape sequences on the terminal
    and a forged heading into comparison.md and its page: every field read from a
    result folder is shown escaped, on the terminal, in Markdown and in HTML."""
    old = forged(result_folder, tmp_path / "old", SIGNATURE + forgery)
    new = forged(result_folder, tmp_path / "new", SIGNATURE + forgery)
    code = main(["compare", str(old), str(new), "--output", str(tmp_path / "cmp"), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    markdown = (tmp_path / "cmp" / "comparison.md").read_text()
    page = (tmp_path / "cmp" / "report.html").read_text()
    for text in (out, err, markdown, page):
        assert not any(ch in text for ch in "\x1b\x07\u202e"), text
    assert not any(line.startswith("#") for line in markdown.splitlines()), markdown
    signature_lines = [line for line in markdown.splitlines() if line.startswith("Signature:")]
    assert len(signature_lines) == 1 and "\\x1b" in signature_lines[0], markdown  # (escaped, on one line)
    # not comparable: the differing settings and both signatures, escaped, on the terminal
    other = forged(result_folder, tmp_path / "other", SIGNATURE.replace("n:1", "n:2" + forgery))
    code = main(["compare", str(old), str(other), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 3, err
    assert not any(ch in out + err for ch in "\x1b\x07\u202e"), out
    assert all(not line.startswith("#") for line in out.splitlines()), out


# ------------------------------------------------------- a file appended to after it was read


def test_a_file_appended_after_it_was_read_records_the_bytes_read_and_says_so(tmp_path, monkeypatch):
    """Round 3: run.json recorded the size and SHA-256 of the file at the end (567,882
    bytes), not of the bytes scored (547,245), and nothing said it changed: the
    reader hashed what was appended after it had reached the end.  Here the append
    comes exactly then: the moment the reader first sees the end of the file."""
    import hashlib
    import io

    from pipeline.io import rows as rows_module
    from pipeline.io.rows import iter_rows, used_fields

    path = write_jsonl(tmp_path / "in.jsonl", [dict(ROW, doc_id=str(d)) for d in range(2000)])
    original = path.read_bytes()
    extra = b"".join(json.dumps(dict(ROW, doc_id=f"late{d}")).encode() + b"\n" for d in range(500))

    class AppendedAtTheEnd(io.FileIO):
        appended = False

        def read(self, n=-1):
            data = super().read(n)
            if not data and not self.appended:
                self.appended = True
                with open(path, "ab") as fh:
                    fh.write(extra)
            return data

    monkeypatch.setattr(rows_module.files, "open_read", lambda p, pipe_ok=False: AppendedAtTheEnd(p, "rb"))
    digest: dict = {}
    read = list(iter_rows(str(path), InputConfig(candidates=("x",)), used_fields(InputConfig()), digest))
    assert len(read) == 2000
    assert digest["bytes"] == len(original)
    assert digest["sha256"] == hashlib.sha256(original).hexdigest()
    assert digest["changed"] == (f"it grew by {len(extra)} bytes after it was read; the {len(original)} bytes read "
                                 "are what was scored")


def test_an_unchanged_file_records_its_bytes_and_no_change(tmp_path):
    import hashlib

    from pipeline.io.rows import iter_rows, used_fields

    path = write_jsonl(tmp_path / "in.jsonl", [dict(ROW, doc_id=str(d)) for d in range(100)])
    digest: dict = {}
    assert len(list(iter_rows(str(path), InputConfig(candidates=("x",)), used_fields(InputConfig()), digest))) == 100
    assert digest == {"bytes": path.stat().st_size, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
