"""What `import rouge_core` loads: the metric without numpy, regex or the report
(they load on first use), so that the light commands start fast."""

import json
import subprocess
import sys

import pytest

from tests.conftest import require_kernel

PROBE = """
import json, sys
import rouge_core
loaded = {name: name in sys.modules for name in ("numpy", "regex", "importlib.metadata", "rouge_core.report")}
print(json.dumps(loaded))
"""


def loaded_after(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_import_rouge_core_loads_no_heavy_dependency():
    assert loaded_after(PROBE) == {
        "numpy": False, "regex": False, "importlib.metadata": False, "rouge_core.report": False,
    }


def test_scoring_with_the_kernel_loads_no_numpy():
    require_kernel("c")
    code = PROBE.replace(
        "loaded = ",
        "from rouge_core import RougeScorer, RougeSettings\n"
        "RougeScorer(RougeSettings.from_flags('-n 2 -2 4 -u'), kernel='c').score(candidate='a b c', references=['a c'])\n"
        "loaded = ",
    )
    assert loaded_after(code)["numpy"] is False


@pytest.mark.parametrize("name", ["corpus_score", "render_report", "CorpusScore", "MetricScore"])
def test_the_heavy_names_load_on_first_use(name):
    import rouge_core

    assert getattr(rouge_core, name).__name__ == name
    assert name in dir(rouge_core) and name in rouge_core.__all__
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        rouge_core.nothing  # noqa: B018
