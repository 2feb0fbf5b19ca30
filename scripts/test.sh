#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run them.
#   - a virtual environment in .venv with the project and its test extras
#   - the official ROUGE-1.5.5 Perl script in .oracle (the test oracle)
#   - Debian's Chromium (the report test opens report.html in it)
# then the whole suite (with the compiled kernel, built by `pip install -e .` when a
# C compiler is present) and the scoring tests again with the kernel disabled.
# Tests run in a worker process per CPU (pytest-xdist), a test file a worker
# (`--dist loadfile`: a file's module fixtures and its fixed paths stay in one
# process); TEST_WORKERS=1 runs them in this one process.
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
echo "== running the tests (compiled kernel: $(.venv/bin/python -c 'import rouge_core; print(rouge_core.kernel_info()["kernel"])'))"
# Both passes always run; the script fails if either failed, after both summaries.
summary=$(mktemp); trap 'rm -f "$summary"' EXIT
status=0
workers=(-n "${TEST_WORKERS:-auto}" --dist loadfile)
[ "${TEST_WORKERS:-auto}" = 1 ] && workers=(-p no:xdist)
.venv/bin/python -m pytest "${workers[@]}" "$@" | tee "$summary" || status=$?
first=$(tail -n 1 "$summary")
if [ $# -eq 0 ]; then
  # The pure-Python path is the reference and the fallback: every golden, differential,
  # parity and scoring test once more with the kernel switched off.
  echo "== the scoring tests again with the kernel disabled (ROUGE_CORE_KERNEL=python)"
  ROUGE_CORE_KERNEL=python .venv/bin/python -m pytest -q "${workers[@]}" tests/core tests/golden tests/test_differential.py \
    rouge_core -p no:cacheprovider -m "not slow" | tee "$summary" || status=$((status ? status : $?))
  echo "== summary"
  echo "with the compiled kernel:  $first"
  echo "with the kernel disabled:  $(tail -n 1 "$summary")"
fi
exit "$status"
