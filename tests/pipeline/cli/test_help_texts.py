"""Help texts, configs and printed lines say what the program does: the runner
line's units agree, and nothing claims worker processes for an input that runs in
this process (the demo)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pipeline.beam.runners.options import choose_runner

ROOT = Path(__file__).resolve().parents[3]


def test_the_runner_line_uses_one_unit_and_names_the_runner_chosen():
    # 8.2 MB (decimal) is 7.82 MiB, said in MiB; every input runs in this process by default
    for size, shown in ((8_200_000, "7.8"), (80 << 20, "80.0")):
        args, line = choose_runner([], size)
        assert "--direct_running_mode=in_memory" in args
        assert line == (f"runner: in this process (the input, {shown} MiB; "
                        "--runner chooses another: run --help)")
    assert choose_runner(["--runner=DataflowRunner"], 1)[1] == "runner: as given"


def test_the_demo_is_said_to_run_in_this_process():
    config = (ROOT / "configs" / "demo.toml").read_text()
    assert "every local core" not in config and "in\n# this process" in config
    help_text = subprocess.run([sys.executable, "-m", "pipeline", "run", "--help"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout
    demo_example = help_text[help_text.index("configs/demo.toml"):].split("\n  rouge-pipeline")[0]
    assert "every local core" not in demo_example and "in this process" in demo_example
    assert "in this process, whatever the\ninput's size" in help_text
    assert "--quiet" in help_text


def test_a_bad_value_names_where_it_came_from_the_command_line_or_the_config():
    def dry_run(*args):
        done = subprocess.run([sys.executable, "-m", "pipeline", "run", "--config", "configs/demo.toml", "--dry-run",
                               *args], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        return done.stderr.strip().splitlines()[-1]

    # was "(from configs/demo.toml)", which holds no max_rejected and no -n
    assert dry_run("--max-rejected", "2") == ("rouge-pipeline: error: run.max_rejected must be between 0 and 1; "
                                              "got 2.0 (from the command line)")
    assert dry_run("--rouge-args", "-n 200").endswith(
        "got 200 (rouge settings from the command line over configs/demo.toml)")
