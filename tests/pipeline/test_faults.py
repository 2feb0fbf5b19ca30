"""Faults and safety: a run killed at any moment never leaves a folder that looks
complete, reruns succeed, and ids from the input cannot steer where files go."""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq

from tests.conftest import GOLDEN, markdown_cells, read_jsonl
from tests.pipeline.runs import run_pipeline, write_jsonl

CASES = read_jsonl(GOLDEN / "cases.jsonl")


def check_complete(folder):
    """A published folder holds every table, a valid run record and the marker."""
    record = json.loads((folder / "run.json").read_text())
    assert (folder / "_SUCCESS").exists()
    assert record["counts"]["balanced"]
    for name in ("system_scores.parquet", "errors/part-00000-of-00001.parquet", "per_document"):
        pq.read_table(folder / name)
    report = (folder / "rouge155.txt").read_text()
    assert report.count("Average_F") == 8 * 4  # systems x (ROUGE-1, ROUGE-2, ROUGE-L, ROUGE-W)
    assert (folder / "report.html").read_text().rstrip().endswith("</html>")
    return record


def test_a_run_killed_at_random_moments_leaves_nothing_half_written(tmp_path):
    """Random kill times (replay with ROUGE_KILL_SEED); the kills inside each publish
    step, on purpose, are in test_output_safety.py."""
    seed = int(os.environ.get("ROUGE_KILL_SEED", random.randrange(1 << 30)))
    print(f"kill seed {seed} (replay with ROUGE_KILL_SEED={seed})")
    rng = random.Random(seed)
    for i in range(4):
        write_jsonl(tmp_path / "in" / f"{i}.jsonl", CASES[i::4])
    config = tmp_path / "run.toml"
    config.write_text(
        f'[input]\ncandidates = ["{tmp_path}/in/*.jsonl"]\n[rouge]\nargs = "-n 2 -w 1.2 -m -r 300"\n'
        f'[output]\nfolder = "{tmp_path}/out"\noverwrite = true\n'
        '[run]\nbeam_args = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]\n'
    )
    command = [sys.executable, "-m", "pipeline", "run", "--config", str(config)]
    outcomes = []
    for _ in range(5):
        if rng.random() < 0.6:  # kill a first run as well as a run replacing a finished one
            shutil.rmtree(tmp_path / "out", ignore_errors=True)
        out = tmp_path / "out"
        had = json.loads((out / "run.json").read_text())["run_id"] if out.exists() else None
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        time.sleep(rng.uniform(0.3, 8.0))
        finished = process.poll() is not None
        if not finished:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if had is not None:  # a finished folder stood here: the old or the new one must remain
            assert out.exists(), f"seed {seed}: the previous result folder was lost"
        if out.exists():
            record = check_complete(out)
            state = "old" if record["run_id"] == had else "new"
        else:
            state = "absent"
        outcomes.append(("finished" if finished else "killed", state))
        assert not (finished and state != "new"), f"seed {seed}: a finished run did not publish"
    print(f"seed {seed}: after each attempt the folder was {outcomes}")
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rows read 200, scored 200, errors 0" in done.stdout
    check_complete(tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out", "run.toml"]


def test_ids_from_the_input_never_become_paths_and_markdown_is_escaped(tmp_path):
    rows = [
        dict(c, system="../../escape|<b>*x*</b>", doc_id="/etc/" + c["doc_id"])
        for c in CASES
        if c["system"] == "11"
    ]
    rows += [c for c in CASES if c["system"] == "12"]
    record = run_pipeline(tmp_path / "out", [write_jsonl(tmp_path / "in.jsonl", rows)], flags="-n 1 -r 10")
    assert record["counts"]["scored"] == 50
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    documents = [name for name in written if name.startswith("out/per_document/")]
    # one file per system, named by 16 hex digits of a hash, never by the system's own name
    assert len(documents) == 2 and all(re.fullmatch(r"out/per_document/part-[0-9a-f]{16}-00000-of-00001\.parquet", d) for d in documents)
    assert [name for name in written if name not in documents] == [
        "in.jsonl",
        "out/_ROUGE_PIPELINE",
        "out/_SUCCESS",
        "out/errors/part-00000-of-00001.parquet",
        "out/report.html",
        "out/rouge155.txt",
        "out/run.json",
        "out/significance.csv",
        "out/significance.md",
        "out/significance.parquet",
        "out/system_scores.csv",
        "out/system_scores.md",
        "out/system_scores.parquet",
    ]
    markdown = (tmp_path / "out" / "system_scores.md").read_text()
    assert [r"../../escape\|\<b\>\*x\*\</b\>", "25/25"] in [row[1:3] for row in markdown_cells(markdown)]
    assert "<b>" not in markdown
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<b>" not in page and "../../escape|&lt;b&gt;*x*&lt;/b&gt;" in page
