#!/usr/bin/env bash
# The peers of benchmarks/bench_compat.py, in a venv of their own (they are not project
# dependencies): Google's rouge-score and its ports on PyPI, pinned to the versions
# the recorded table (docs/compat.md) used.
#
#   benchmarks/setup_compat_peers.sh [VENV_DIR]      # default: benchmarks/.venv-peers
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-$here/.venv-peers}"
python="${PYTHON:-python3}"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet "rouge-score==0.1.2" "rouge-score-rs==0.2.1" "rapidrouge==0.2.0" "rouge-rust==0.1.12"
"$venv/bin/python" -c "import rouge_score, rouge_score_rs, rapidrouge, fast_rouge; print('peers installed in $venv')"
