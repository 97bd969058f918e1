#!/usr/bin/env bash
# The README's first command: install into .venv, create the SQLite database, measure the tiny CPU
# suite against the installed torch (each case in its own subprocess), and serve the dashboard on
# http://127.0.0.1:8000/. By default three quick workloads x static/backed/unbacked (9 cases, a few
# minutes on 2 cores); QUICKSTART_RUN_ARGS="" measures the whole tiny suite (27 cases).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh
. .venv/bin/activate
python manage.py migrate --noinput -v 0
# Real measurements brought back from an H100 (bench/results): the gpu-h100 machine class's pages.
python manage.py ingest bench/results/h100-torch2.11-*.json
# shellcheck disable=SC2086
python -m runner run --suite tiny ${QUICKSTART_RUN_ARGS---workloads mlp_loop,positional_graph_break,masked_attention}
echo "== set up and measured in $(( $(date +%s) - start )) s; dashboard at http://127.0.0.1:8000/ (Ctrl-C stops it)"
exec python manage.py runserver 127.0.0.1:8000
