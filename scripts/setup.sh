#!/usr/bin/env bash
# Creates .venv and installs requirements.txt into it; does nothing when both are up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements.sha256
want=$(cat requirements.txt requirements/*.txt | sha256sum | cut -d' ' -f1)  # every set requirements.txt includes
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "== installing requirements.txt into .venv (a line per package; a fresh .venv takes a few minutes)"
  .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off -r requirements.txt \
    | scripts/pip-progress.sh
  echo "$want" > "$stamp"
fi
