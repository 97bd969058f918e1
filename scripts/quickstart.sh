#!/usr/bin/env bash
# The README's first command: install into .venv, create the SQLite database, measure the tiny CPU
# suite against the installed torch (each case in its own subprocess), and serve the dashboard on
# http://127.0.0.1:8000/. Set QUICKSTART_RUN_ARGS to measure something else (e.g. "--workloads mlp_loop").
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh
. .venv/bin/activate
python manage.py migrate --noinput -v 0
# shellcheck disable=SC2086
python -m runner run --suite tiny ${QUICKSTART_RUN_ARGS:-}
echo "== set up and measured in $(( $(date +%s) - start )) s; dashboard at http://127.0.0.1:8000/ (Ctrl-C stops it)"
exec python manage.py runserver 127.0.0.1:8000
