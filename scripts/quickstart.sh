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
# Quiet: a line per case, a summary, the URL (no Celery task lines, no detection chatter).
export DJANGO_LOG_LEVEL=WARNING
# Real measurements (bench/results, see its README): the tiny suite on this CPU class against four
# PyTorch releases (the cpu class's trend), the H100 runs (gpu-h100), the one-H200 noise runs and the two-H200
# worker runs (gpu-h200), the H100 history of one build and two variants of it (the A/B page), and the
# model families' H100 runs (hf, timm, torchvision; several cases sharing the GPU, with or without the timing
# lock: their run notes say so), the compile paths' H100 and H200 runs and the LLMs' H200 run (prefill,
# decode, whole training steps: bench/results/llm-h200-2026-11-28); last, the H100 "what changed"
# proof (bert_encoder on the A/B page's base build and two variants of it, each with its compile phases,
# kernel profile and kept kernel code): the A/B page's bert_encoder row links its kernel and code diff.
# Imported: their own builds, labelled "imported (host, day)" on every page, apart from the build
# measured below.
python manage.py ingest --imported -v 0 bench/results/releases/*.json bench/results/h100-torch2.11-*.json \
    bench/results/h200-torch2.11-*.json bench/results/h200x2/*.json bench/results/history/hist-*.json \
    bench/results/families/r1/*.json bench/results/families/r2/*.json bench/results/families/spread/*.json \
    bench/results/families/locked-static/*.json bench/results/families/locked-dynamic/*.json \
    bench/results/families/regimes-2026-11-27/*.json bench/results/compile-paths-gpu-2026-11-25/*.json \
    bench/results/compile-paths-gpu-2026-11-27/*.json bench/results/compile-paths-gpu-2026-11-28/*.json \
    bench/results/families/h100-2026-11-28/*.json bench/results/llm-h200-2026-11-28/*.json bench/results/distributed/nccl-*.json \
    bench/results/explain/h100-*.json
# This host is its own machine class, named from its CPU (e.g. cpu-amd-epyc-2c): the imported "cpu"
# series were measured on another host, and the same torch measured here is not a change of it
# (docs/machine-classes-and-verdicts.md).
class=$(python -c 'from runner.engine.environment import cpu_machine_class; print(cpu_machine_class())')
build=$(python manage.py register_build --python "$(command -v python)" --machine-class "$class")
# shellcheck disable=SC2086
run=$(python manage.py request_run --build "$build" --size tiny --machine-class "$class" ${QUICKSTART_RUN_ARGS---workloads mlp_loop,positional_graph_break,masked_attention})
echo "== run $run: http://127.0.0.1:8000/runs/$run/"
# Triage, Bisect and alerts need an account: a local superuser with a random password (data/local-admin.txt).
echo "== $(python manage.py local_admin)"
echo "== set up and measured in $(( $(date +%s) - start )) s; dashboard at http://127.0.0.1:8000/ (Ctrl-C stops it)"
exec python manage.py runserver 127.0.0.1:8000
