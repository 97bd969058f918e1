#!/usr/bin/env bash
# The families' GPU run (bench/results/families/README.md): several runner processes at once, one per
# stream, each writing its run document after every case, so that a stream cut off by the time limit
# keeps what it finished. Usage: bench/families_gpu.sh OUTDIR SECONDS 'NAME|ARGS' ...
# e.g. 'hf-static|--workloads hf:BertForMaskedLM,hf:T5Small --regimes static'
set -u
out=$1; seconds=$2; shift 2
mkdir -p "$out"
export PYTHONUNBUFFERED=1
for stream in "$@"; do
  name=${stream%%|*}; args=${stream#*|}
  # shellcheck disable=SC2086
  timeout -s INT "$seconds" python3 -m runner run --device cuda --modes default --dtypes bfloat16 --no-warm \
    --timeout 300 $args --out "$out/$name.json" >"$out/$name.log" 2>&1 &
done
wait
tail -n 25 "$out"/*.log
