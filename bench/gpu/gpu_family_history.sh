#!/usr/bin/env bash
# A real family history for the verdict replay (issue #42): repeated runs of the stock build and runs of
# builds with a changed compiler setting, on one GPU, several runner streams at once (each case times
# under the runner's exclusive GPU lock, so the streams overlap compiles, never timings). Each stream is
# bench/gpu/gpu_history.sh with its own steps; every run writes OUT/hist-NAME-INDEX.json (+ .log), kept
# case by case, so a run cut off by SECONDS keeps the cases it finished. Then OUT comes back as a tar.
#   bench/gpu/gpu_family_history.sh OUT SECONDS 'STEPS' 'STEPS' ...     (one quoted list of steps a stream)
# e.g. bench/gpu/gpu_family_history.sh $OUT 560 'base:1 base:6' 'base:2 fusion:1' 'base:3 fusion:2' 'base:4 cdt:1' 'base:5 cdt:2'
# Env: WORKLOADS (default four family models below), VARIANTS (gpu_history.sh's; default fusion and cdt).
# Replay: python -m bench.real_verdicts --history OUT/hist-base-{1..6}.json --then OUT/hist-fusion-{1,2}.json
set -u
cd "$(dirname "$0")/../.."
out=$1; seconds=$2; shift 2
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHON=${PYTHON:-python3}
export WORKLOADS=${WORKLOADS:-hf:BertForMaskedLM,hf:LayoutLMForMaskedLM,timm:resnet50,torchvision:mobilenet_v2}
export VARIANTS=${VARIANTS:-fusion=--config inductor.max_fusion_size=1;cdt=--config inductor.coordinate_descent_tuning=true}
export EXTRA_ARGS=${EXTRA_ARGS:---dtypes bfloat16 --timeout 280 --artifact-max-bytes 0}
export DEADLINE_S=$seconds MIN_STEP_S=${MIN_STEP_S:-60}
threads=$(( $(nproc) / $# ))
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$(( threads > 1 ? threads : 1 ))}
echo "streams: $#, workloads: $WORKLOADS, TORCHINDUCTOR_COMPILE_THREADS=$TORCHINDUCTOR_COMPILE_THREADS"
n=0
for steps in "$@"; do
  n=$(( n + 1 ))
  bench/gpu/gpu_history.sh "$out" "$steps" > "$out/stream-$n.log" 2>&1 &
done
wait
cat "$out"/stream-*.log
