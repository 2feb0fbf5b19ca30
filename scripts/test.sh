#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run them.
#   - a virtual environment in .venv with the project and its test extras
#   - the official ROUGE-1.5.5 Perl script in .oracle (the test oracle)
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k golden`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PYTHON" -m venv .venv
fi
echo "== installing the project with its test extras"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test,gcp]'
echo "== installing the ROUGE-1.5.5 oracle"
PYTHON=.venv/bin/python bash scripts/install_oracle.sh .oracle
echo "== installing Chromium (the report test opens report.html in it)"
bash scripts/install_chromium.sh
echo "== running the tests"
exec .venv/bin/python -m pytest "$@"
