"""Help texts, configs and printed lines say what the program does: the runner
line's units agree, and nothing claims worker processes for an input that runs in
this process (the demo)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pipeline.beam.options import SMALL_INPUT_BYTES, choose_runner

ROOT = Path(__file__).resolve().parents[2]


def test_the_runner_line_uses_one_unit_and_names_the_runner_chosen():
    # 8.2 MB (decimal) is 7.82 MiB: under the 8 MiB line, said in MiB on both sides
    args, line = choose_runner([], 8_200_000)
    assert "--direct_running_mode=in_memory" in args
    assert line == "runner: in this process (the input, 7.8 MiB, is under 8 MiB; --runner overrides)"
    args, line = choose_runner([], SMALL_INPUT_BYTES)
    assert "--direct_running_mode=multi_processing" in args
    assert line == "runner: every local core, in worker processes (the input, 8.0 MiB, is 8 MiB or more)"
    assert choose_runner(["--runner=DataflowRunner"], 1)[1] == "runner: as given"


def test_the_demo_is_said_to_run_in_this_process():
    demo = sum(p.stat().st_size for p in (ROOT / "pipeline" / "sample").glob("*.jsonl"))
    assert demo < SMALL_INPUT_BYTES  # so it runs in this process
    config = (ROOT / "configs" / "demo.toml").read_text()
    assert "every local core" not in config and "in\n# this process" in config
    help_text = subprocess.run([sys.executable, "-m", "pipeline", "run", "--help"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout
    demo_example = help_text[help_text.index("configs/demo.toml"):].split("\n  rouge-pipeline")[0]
    assert "every local core" not in demo_example and "in this process" in demo_example
    assert "in this process for an input\nunder 8 MiB" in help_text
    assert "--quiet" in help_text
