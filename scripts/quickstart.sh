#!/usr/bin/env bash
# The README's first command: install into .venv, create the SQLite database, load the real sample
# data (bench/results), register the installed torch as a build, request a run of the tiny CPU
# suite on it (tasks run in this process: no broker needed; each case in its own subprocess), and
# serve the dashboard on http://127.0.0.1:8000/. By default three quick workloads x static/backed/
# unbacked (9 cases, a few minutes on 2 cores); QUICKSTART_RUN_ARGS="" requests the whole tiny suite.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh
. .venv/bin/activate
python manage.py migrate --noinput -v 0
# Real measurements (bench/results, see its README): the tiny suite on this CPU class against four
# PyTorch releases (the cpu class's trend), the H100 runs (gpu-h100), the one-H200 noise runs and the two-H200
# worker runs (gpu-h200).
python manage.py ingest bench/results/releases/*.json
python manage.py ingest bench/results/h100-torch2.11-*.json bench/results/h200-torch2.11-*.json bench/results/h200x2/*.json
build=$(python manage.py register_build --python "$(command -v python)" --machine-class cpu)
# shellcheck disable=SC2086
run=$(python manage.py request_run --build "$build" --suite tiny --machine-class cpu ${QUICKSTART_RUN_ARGS---workloads mlp_loop,positional_graph_break,masked_attention})
python manage.py run_status "$run" --cases
echo "== set up and measured in $(( $(date +%s) - start )) s; dashboard at http://127.0.0.1:8000/ (Ctrl-C stops it)"
exec python manage.py runserver 127.0.0.1:8000
