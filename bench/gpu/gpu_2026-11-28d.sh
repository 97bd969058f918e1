#!/usr/bin/env bash
# The sixth session's device calls on one H200 (2026-11-28, late): what issues #43 and #44 still lack.
#   bench/gpu/gpu_2026-11-28d.sh 1|2 OUT [SECONDS]        # carry [".whl"] (bench/gpu/gpu_wheels.sh)
# 1: #43's LLM cells that bench/results/llm-h200-2026-11-28 lacks, five streams under the timing lock
#    (bench/gpu/families_gpu.sh). Memory decides the streams: a case holds its model twice (eager and
#    compiled sides), so Mistral-7B's three streams (about 27 GiB each) and gemma-3-4b-it's two
#    (about 16 GiB each) fit together; gpt-oss-20b (about 78 GiB) waits for call 2.
# 2: gpt-oss-20b decode and its backed/unbacked prefill (one stream), #44 item 2's six compile-path
#    cells (bench/results/compile-paths-gpu-2026-11-28/README.md), #44 item 6's compile-to-compile
#    spread (timm:resnet50 and hf:BertForMaskedLM, three cold compiles each, with inductor's pointwise
#    autotuning as shipped and turned off), and gemma-3-4b-it's decode and unbacked prefill (call 1
#    ran out of time: its prefill compiles took 189 s beside four 7B streams).
# 3: the training steps call 4c lacked, Llama-2-7B decode and gemma-2-2b decode with unbacked tokens.
set -u
cd "$(dirname "$0")/../.."
phase=$1; out=$2; seconds=${3:-555}; start=$(date +%s)
work=/tmp/ptb/s6-$phase; mkdir -p "$work" "$out"
if [ -d .whl ] && ! python3 -c "import jsonschema" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name())"
llm="--artifact-max-bytes 0 --timeout 260"
left() { echo $(( seconds - ($(date +%s) - start) - 25 )); }
case $phase in
  1)
    mistral=mistralai/Mistral-7B-Instruct-v0.3; gemma3=google/gemma-3-4b-it
    bench/gpu/families_gpu.sh "$work" "$(left)" \
      "mistral-prefill|$llm --regimes static,backed,unbacked --workloads hf:$mistral@prefill ;; $llm --modes default,reduce-overhead --regimes unbacked --workloads hf:meta-llama/Llama-2-7b-hf@decode" \
      "mistral-decode|$llm --regimes static,backed,unbacked --workloads hf:$mistral@decode" \
      "mistral-decode-ro|$llm --modes reduce-overhead --regimes static,backed,unbacked --workloads hf:$mistral@decode" \
      "gemma3|$llm --regimes static,backed,unbacked --workloads hf:$gemma3@prefill ;; $llm --regimes static,backed,unbacked --workloads hf:$gemma3@decode" \
      "gemma3-ro|$llm --modes reduce-overhead --regimes static,backed,unbacked --workloads hf:$gemma3@decode ;; $llm --modes reduce-overhead --regimes unbacked --workloads hf:google/gemma-2-2b@decode" ;;
  2)
    paths="--artifact-max-bytes 0 --timeout 280 --dtypes float32 --regimes static"
    spread="--artifact-max-bytes 0 --timeout 200 --regimes static --workloads timm:resnet50,hf:BertForMaskedLM"
    off="--config inductor.triton.autotune_pointwise=false"
    bench/gpu/families_gpu.sh "$work" "$(left)" \
      "gpt-oss|$llm --regimes static,backed,unbacked --workloads hf:openai/gpt-oss-20b@decode ;; $llm --regimes backed,unbacked --workloads hf:openai/gpt-oss-20b@prefill ;; $llm --modes reduce-overhead --regimes static --workloads hf:openai/gpt-oss-20b@decode" \
      "ro|$paths --modes reduce-overhead --workloads bert_encoder,llama_decode,unet_diffusion,transformer_train_step" \
      "cppw|$paths --modes cpp_wrapper --workloads unet_diffusion ;; $paths --modes aot_inductor --workloads llama_decode" \
      "spread-shipped|$spread ;; $spread ;; $spread" \
      "spread-off|$spread $off ;; $spread $off ;; $spread $off" \
      "gemma3|$llm --regimes static,backed,unbacked --workloads hf:google/gemma-3-4b-it@decode ;; $llm --regimes unbacked --workloads hf:google/gemma-3-4b-it@prefill" ;;
  3)
    train="--artifact-max-bytes 0 --timeout 400 --dtypes amp --regimes static --workloads"
    bench/gpu/families_gpu.sh "$work" "$(left)" \
      "train-steps|$train hf:T5Small@train_step ;; $train torchvision:resnet50@train_step" \
      "llama2|$llm --modes default,reduce-overhead --regimes unbacked --workloads hf:meta-llama/Llama-2-7b-hf@decode" \
      "gemma2|$llm --modes reduce-overhead --regimes unbacked --workloads hf:google/gemma-2-2b@decode" ;;
  *) echo "phase 1|2|3" >&2; exit 2 ;;
esac
echo "streams ended after $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=name,memory.used --format=csv
python3 -m bench.llm_table "$work"/*.json >"$work/table.txt" 2>&1; cat "$work/table.txt"
tar -czf "$out/s6-$phase.tar.gz" -C "$work" .
echo "done after $(( $(date +%s) - start )) s: $out/s6-$phase.tar.gz"
