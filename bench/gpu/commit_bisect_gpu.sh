#!/usr/bin/env bash
# The GPU proof of issue #41 (docs/builds.md): on one GPU with the image's torch, a mirror made from
# that torch's own torch/_inductor files, sixteen commits of which the eleventh is planted
# (max_fusion_size = 64 -> 1 in torch/_inductor/config.py: kernels stop fusing, real models slow
# down) and fifteen harmless, the build and an overlay at the last commit measured, then bisected over
# commits on overlay builds the in-process worker makes from the mirror (bench/commit_bisect_real.py,
# the quick start's path: SQLite, no broker). First the overlay's cost and the simulated steps
# (bench/commit_bisect.py). Everything lands in OUT.
#   bench/gpu/commit_bisect_gpu.sh OUT
# On a lent GPU host (device tool, carry [".whl"] made by bench/gpu/gpu_wheels.sh):
#   pip install --no-index --no-deps --target /tmp/site .whl/*.whl && PYTHONPATH=/tmp/site bench/gpu/commit_bisect_gpu.sh "$OUT"
# Settings: PYTHON (the build's interpreter, default python3: the image's torch), WORKLOAD (default
# masked_attention; a family model such as hf:GPT2ForSequenceClassification takes longer a run),
# SIZE (full), DTYPE (float32), METRIC (speedup), ATTEMPTS (1), CULPRIT (11), SECONDS_LIMIT (560: the
# bisection's limit).
set -u
out=${1:?OUT}; python=${PYTHON:-python3}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1 || true
"$python" -c "import torch; print(torch.__version__, torch.version.git_version)" >"$out/torch.txt" 2>&1
"$python" -m bench.commit_bisect --trials 200 --out "$out/overlay-cost-and-steps.txt" >"$out/overlay-cost-and-steps.log" 2>&1
timeout "${SECONDS_LIMIT:-560}" "$python" -m bench.commit_bisect_real --python "$python" --plant inductor-fusion \
  --commits 16 --culprit "${CULPRIT:-11}" --workload "${WORKLOAD:-masked_attention}" --size "${SIZE:-full}" \
  --backend inductor --dtype "${DTYPE:-float32}" --metric "${METRIC:-speedup}" --attempts "${ATTEMPTS:-1}" \
  --out "$out/commit-bisect.txt" >"$out/commit-bisect.log" 2>&1
echo "exit $?" >>"$out/commit-bisect.log"
tail -30 "$out/commit-bisect.log"
