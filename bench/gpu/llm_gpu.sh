#!/usr/bin/env bash
# Issue #43's GPU call (docs/llms.md): the harness's LLMs and Llama-2 7B on one H200 (bfloat16, random
# weights from their published configs), prefill and decode, default and reduce-overhead (decode),
# static + backed + unbacked tokens, and a few whole training steps beside the model-only ones, in one
# call that stops by SECONDS (default 500) and tars what it measured into OUT/llm.tar.gz.
#   bench/gpu/llm_gpu.sh OUT [SECONDS] [DONE_DIR]
# Six streams of runner processes share the GPU (bench/gpu/families_gpu.sh: one case times at a time,
# the others compile meanwhile), each a list of runs in priority order: the small models first (each
# run writes its document after every case, so a run cut off by SECONDS keeps what it finished).
# Not all of it fits one call: DONE_DIR (an earlier call's documents, unpacked into the working tree
# so that they travel) makes each run skip the workloads measured there (bench/gpu/gpu_pending.py).
# Memory: a case holds its model twice (eager and compiled sides); the 7B models and gpt-oss-20b
# (about 42 GB in bfloat16, 84 GB for both sides) share one stream, so at most one of them is resident.
# The hosts lack jsonschema: carry the wheels of bench/gpu/gpu_wheels.sh (`carry: [".whl"]`); this
# script installs them into /tmp/site when .whl/ is there.
set -u
cd "$(dirname "$0")/../.."
out=$1; seconds=${2:-500}
[ -n "${3:-}" ] && export PTBENCH_DONE_DIR=$3
start=$(date +%s)
work=/tmp/ptb/llm; mkdir -p "$work" "$out"
if [ -d .whl ] && ! python3 -c "import jsonschema" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name())"
common="--artifact-max-bytes 0 --timeout 240 --regimes static,backed,unbacked"
llm() {  # MODEL STEP [MODES]: one run of the three regimes
  echo "$common --modes ${3:-default} --workloads hf:$1@$2"
}
runs() {  # RUN ...: ' ;; '-joined
  local joined="" run
  for run in "$@"; do joined="${joined:+$joined ;; }$run"; done
  echo "$joined"
}
prefill=(); decode=(); overhead=(); gemma=()
for model in Qwen/Qwen3-0.6B meta-llama/Llama-3.2-1B openai/whisper-tiny; do
  prefill+=("$(llm "$model" prefill)"); decode+=("$(llm "$model" decode)"); overhead+=("$(llm "$model" decode reduce-overhead)")
done
for model in google/gemma-2-2b google/gemma-3-4b-it; do
  gemma+=("$(llm "$model" prefill)" "$(llm "$model" decode default,reduce-overhead)")
done
# The 7B models and gpt-oss: the background reading's Llama-2 7B prefill (1 x 512) first.
big=("$(llm meta-llama/Llama-2-7b-hf prefill)" "$(llm meta-llama/Llama-2-7b-hf decode default,reduce-overhead)"
     "$(llm mistralai/Mistral-7B-Instruct-v0.3 prefill)" "$(llm mistralai/Mistral-7B-Instruct-v0.3 decode default,reduce-overhead)"
     "$(llm openai/gpt-oss-20b prefill)" "$(llm openai/gpt-oss-20b decode default,reduce-overhead)")
# Whole training steps beside the model-only ones (AMP, static): a model of each family.
train="--artifact-max-bytes 0 --timeout 240 --dtypes amp --regimes static --workloads"
steps=("$train hf:BertForMaskedLM@train,hf:BertForMaskedLM@train_step,torchvision:resnet50@train,torchvision:resnet50@train_step"
       "$train timm:resnet50@train,timm:resnet50@train_step,hf:T5Small@train,hf:T5Small@train_step")
# families_gpu.sh passes --dtypes bfloat16 first; a run's own --dtypes amp comes later and wins.
bench/gpu/families_gpu.sh "$work" "$(( seconds - ($(date +%s) - start) - 25 ))" \
  "prefill|$(runs "${prefill[@]}")" "decode|$(runs "${decode[@]}")" "reduce-overhead|$(runs "${overhead[@]}")" \
  "gemma|$(runs "${gemma[@]}")" "big|$(runs "${big[@]}")" "train-steps|$(runs "${steps[@]}")"
echo "streams ended after $(( $(date +%s) - start )) s"
python3 -m bench.llm_table "$work"/*.json >"$work/table.txt" 2>&1; cat "$work/table.txt"
tar -czf "$out/llm.tar.gz" -C "$work" .
echo "done after $(( $(date +%s) - start )) s: $out/llm.tar.gz"
