#!/usr/bin/env bash
# Install headless Chromium, which the report test uses to open report.html and
# take a screenshot (tests/pipeline/render/test_report.py).  Idempotent: does nothing
# when a chromium binary is already on PATH.
#
#   bash scripts/install_chromium.sh
#
# Needs root (Debian's `chromium` package through apt-get); as another user it
# prints the command to run and fails.
set -euo pipefail

say() { echo "install_chromium: $*"; }

for name in chromium chromium-browser; do
  if command -v "$name" >/dev/null 2>&1; then
    say "$name: present ($("$name" --version 2>/dev/null || echo "version unknown"))"
    exit 0
  fi
done

if [ "$(id -u)" != "0" ]; then
  say "ERROR: chromium is missing; as root run:" >&2
  say "  apt-get update && apt-get install -y --no-install-recommends chromium" >&2
  exit 1
fi

say "apt-get install chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium
say "ready: $(chromium --version)"
