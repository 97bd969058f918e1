#!/usr/bin/env bash
# Issue #44 item 5, the night measured: the families' static bfloat16 default-mode cases requested as
# ONE run through Celery (Redis and the dashboard on SQLite on the GPU host, as bench/gpu/gpu_workers.sh
# does), one runner worker per GPU, "before" (one case at a time per GPU, each in a fresh interpreter)
# or "after" (PTBENCH_CASES_AT_ONCE from each GPU's share of cores and memory, cases forked from a
# warm process: docs/runner-processes.md sections 6-7). Prints the run's wall time, cases per GPU-hour,
# how its case processes started, then each case's cost outside the compile (bench/families_table.py).
#
#   bench/gpu/night_gpu.sh OUTDIR before|after|alone SECONDS [WORKLOADS]
#
# "alone": one case at a time, forked from the warm process (what issue #44 compares a shared run's
# speedups with). PTBENCH_TIMING_CPUS=auto in the environment turns the timing cores on for "after"
# (docs/runner-processes.md section 6; bench/gpu/timing_cores_gpu.sh alternates the two).
#
# WORKLOADS: comma-separated family names, or "all" (every hf, timm and torchvision model this image
# can build: python -m runner list --family all --names); default: SAMPLE below (12 models of the
# three families, which "before" measures within one call of the device's 10-minute limit).
# SECONDS bounds the wait for the run (cases not finished by then stay unmeasured; those finished are
# exported). On the nvidia-h200-x2 kind, carrying .whl312 and .redis (bench/gpu/gpu_workers.sh says how
# they are made), one call per variant:
#   run(kind="nvidia-h200-x2", timeout_s=600, carry=[".whl312", ".redis"],
#       command="bench/gpu/night_gpu.sh $OUT/night before 420")
#   run(..., command="bench/gpu/night_gpu.sh $OUT/night after 420")
# and, for the whole suite where a call may last (no device limit): bench/gpu/night_gpu.sh OUT after 7200 all
# GPUS=1 runs one worker on one GPU (the nvidia-h200 kind: the per-case figures without the second card).
# The carry must stay under the device's 64 MiB with the tracked files: move .whl312's plotly and narwhals
# wheels aside for the call (no Python module imports them; 2026-11-29 they took it past the limit).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1; variant=$2; seconds=$3; workloads=${4:-}
SAMPLE=hf:AlbertForMaskedLM,hf:BertForMaskedLM,hf:DistilBertForQuestionAnswering,hf:GPT2ForSequenceClassification,hf:T5Small,hf:LayoutLMForMaskedLM,timm:resnet50,timm:mobilenetv2_100,timm:deit_tiny_patch16_224.fb_in1k,torchvision:resnet50,torchvision:mobilenet_v2,torchvision:efficientnet_b0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # NVLink multicast off (issue #44)
case $variant in
  before) export PTBENCH_CASES_AT_ONCE=1 PTBENCH_WARM_START=off ;;
  after) unset PTBENCH_CASES_AT_ONCE; export PTBENCH_WARM_START=own ;;
  alone) export PTBENCH_CASES_AT_ONCE=1 PTBENCH_WARM_START=own ;;
  *) echo "variant: before, after or alone, not '$variant'" >&2; exit 2 ;;
esac
case ${workloads:-sample} in
  sample) workloads=$SAMPLE ;;
  all) workloads=$(python3 -m runner list --family all --names) || exit 1 ;;
esac
echo "night $variant: $(echo "$workloads" | tr ',' '\n' | wc -l) models, ${GPUS:-2} GPU(s), PTBENCH_CASES_AT_ONCE=${PTBENCH_CASES_AT_ONCE:-default} PTBENCH_WARM_START=$PTBENCH_WARM_START PTBENCH_TIMING_CPUS=${PTBENCH_TIMING_CPUS:-default}, $(nproc) cores"
mkdir -p "$out/$variant"
bench/gpu/gpu_workers.sh "$out/$variant" --gpus "${GPUS:-2}" --machine-class gpu-h200 --size full --workloads "$workloads" \
  --modes default --regimes static --dtypes bfloat16 --timeout 300 --deadline "$seconds" --label "night-$variant-"
rc=$?
grep -h "case(s) at once\|warm process" /tmp/ptbench-workers.*/runner-*.log | sort -u
for doc in "$out/$variant"/night-*.json; do [ -f "$doc" ] && PYTHONPATH=/tmp/site python3 -m bench.families_table --cost "$doc"; done
exit $rc
