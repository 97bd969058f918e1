#!/usr/bin/env bash
# Issue #44 items 5-6: do the timing cores keep a shared GPU's speedups steady? Runs the night's
# 12-model sample (bench/gpu/night_gpu.sh) as a sequence of runs on one GPU, each one of
#   on    4 cases at once, PTBENCH_TIMING_CPUS=auto: the lock holder times on the cores kept for it
#         (2026-11-29's runs had it as the worker's default; it is opt-in since they showed no gain)
#   off   4 cases at once, every case on every core (the worker's default)
#   alone one case at a time, forked from the warm process, on ALONE's models
# and leaves each run's document as OUT/<step>-<n>.json (bundled in OUT/timing-cores.tgz), for
#   python -m bench.timing_cores --group on OUT/on-*.json --group off OUT/off-*.json --group alone OUT/alone-*.json
#   bench/gpu/timing_cores_gpu.sh OUT SECONDS on off [on ...]     (SECONDS: each run's wait)
# On the nvidia-h200 kind, carrying .whl312 (without plotly and narwhals: 64 MiB) and .redis:
#   run(kind="nvidia-h200", carry=[".whl312", ".redis"], command="bench/gpu/timing_cores_gpu.sh $OUT 250 on off")
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1; seconds=$2; shift 2
ALONE=${ALONE:-hf:BertForMaskedLM,hf:LayoutLMForMaskedLM,timm:resnet50,timm:mobilenetv2_100,torchvision:resnet50,torchvision:mobilenet_v2}
mkdir -p "$out"
n=0
for step in "$@"; do
  n=$((n + 1)); dir=/tmp/timing-cores/$step-$n
  case $step in
    on) (export PTBENCH_TIMING_CPUS=auto; GPUS=1 bench/gpu/night_gpu.sh "$dir" after "$seconds") ;;
    off) (unset PTBENCH_TIMING_CPUS; GPUS=1 bench/gpu/night_gpu.sh "$dir" after "$seconds") ;;
    alone) GPUS=1 bench/gpu/night_gpu.sh "$dir" alone "$seconds" "$ALONE" ;;
    *) echo "step: on, off or alone, not '$step'" >&2; exit 2 ;;
  esac > "$out/$step-$n.log" 2>&1
  tail -n 40 "$out/$step-$n.log"
  for doc in "$dir"/*/night-*.json; do [ -f "$doc" ] && cp "$doc" "$out/$step-$n.json"; done
  rm -rf /tmp/ptbench-workers.*  # the next run's workers log afresh
done
tar -C "$out" -czf /tmp/timing-cores.tgz . && rm -f "$out"/*.log "$out"/*.json && mv /tmp/timing-cores.tgz "$out/"
