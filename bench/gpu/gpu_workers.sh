#!/usr/bin/env bash
# Issue #4 on a GPU machine that has only torch: the whole distributed path (Redis, the dashboard on
# SQLite, its Celery worker, one runner worker per GPU) through bench/worker_suite.py.
#   bench/gpu/gpu_workers.sh OUTDIR --gpus 2 --machine-class gpu-h200 --size full --workloads a,b --modes default
# Carries (git-ignored, made on the dev machine):
#   .whl312/  pip download -r <dashboard requirements without torch/numpy/test tools> --python-version 3.12
#             --only-binary=:all: --platform manylinux2014_x86_64 -d .whl312
#   .redis/   apt-get download redis-tools libjemalloc2 liblzf1   (Debian's redis-server is redis-check-rdb)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1; shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl312/*.whl || exit 1
export PYTHONPATH=/tmp/site
rm -rf /tmp/redis; for f in .redis/*.deb; do dpkg -x "$f" /tmp/redis; done
printf '#!/bin/bash\nLD_LIBRARY_PATH=/tmp/redis/usr/lib/x86_64-linux-gnu exec -a redis-server /tmp/redis/usr/bin/redis-check-rdb "$@"\n' > /tmp/redis/redis-server
chmod +x /tmp/redis/redis-server
/tmp/redis/redis-server --version || exit 1
nvidia-smi --query-gpu=index,name,clocks.sm,temperature.gpu --format=csv
python3 -m bench.worker_suite --out "$out" --redis-server /tmp/redis/redis-server "$@"
rc=$?
for log in /tmp/ptbench-workers.*/runner-*.log; do echo "== $log"; grep -E "ERROR|Traceback|succeeded|retry" "$log" | tail -n 20; done
exit $rc
