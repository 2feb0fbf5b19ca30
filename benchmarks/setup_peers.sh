#!/usr/bin/env bash
# The peers the benchmark runs side by side with rouge_core, in a venv of their own
# (they are not project dependencies): Google's rouge-score (pure Python, nltk) and
# rouge-score-rs (a Rust port with rouge-score's semantics).
#
#   benchmarks/setup_peers.sh [VENV_DIR]      # default: benchmarks/.venv-peers
#
# The official ROUGE-1.5.5 Perl script comes from scripts/install_oracle.sh (or
# ROUGE155_HOME).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-$here/.venv-peers}"
python="${PYTHON:-python3}"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet "rouge-score==0.1.2" "rouge-score-rs==0.2.1"
"$venv/bin/python" -c "import rouge_score, rouge_score_rs; print('peers installed in $venv')"
