#!/usr/bin/env bash
# The GPU calls of 2026-11-28 (issues #28 and #29), each one command on the lent GPU host, cut off by
# SECONDS. Documents and logs are written under /tmp/ptb/CALL on the host (kept while the machine stays
# warm, so that call 2 skips what call 1 ran: PTBENCH_DONE_DIR, bench/gpu/gpu_pending.py) and come back as
# OUT/CALL.tar.gz.
#   bench/gpu/gpu_2026-11-28.sh CALL OUT [SECONDS]
#   1: #28's cost target measured alone: the hf family's static bfloat16 cases of docs/families.md
#      ("Cost") in one runner process with no other case on the host, beside AOTInductor's load check
#      with its fixes (bench/aoti_load_check.py, niced, CPU compiles); then, once the cost run ends, the
#      static compile-path cells still missing (export, freezing, reduce-overhead), LayoutLM's regimes
#      on one card, and aot_inductor streams with the first fix that loaded, if one did.
#   2: cpp_wrapper's missing cells, aot_inductor (with the fix call 1 found), torchvision:resnet50@train
#      (amp, batch 256) three runs for its run-to-run spread, and what call 1 did not reach.
#   3 (a fresh machine): the cost run's last three cases alone, then aot_inductor's last family models
#      with the runner's own fix in place of call 1's LD_PRELOAD, and resnet50@train's third run.
# The hosts lack jsonschema: carry the wheels of bench/gpu/gpu_wheels.sh (`carry: [".whl"]`, then
# `pip install --no-index --no-deps --target /tmp/site .whl/*.whl`, PYTHONPATH=/tmp/site).
set -u
cd "$(dirname "$0")/../.."
call=$1; out=$2; seconds=${3:-540}
start=$(date +%s)
work=/tmp/ptb; mkdir -p "$work/$call" "$out"
export PYTHONUNBUFFERED=1
cost=hf:BertForMaskedLM,hf:DistilBertForQuestionAnswering,hf:GPT2ForSequenceClassification,hf:AlbertForMaskedLM,hf:T5Small
cost=$cost,hf:ElectraForQuestionAnswering,hf:RobertaForCausalLM,hf:MobileBertForMaskedLM,hf:BartForCausalLM
common="--artifact-max-bytes 0 --timeout 280"
# the static compile-path cells still missing on 2026-11-27 (bench/results/compile-paths-gpu-2026-11-27)
export_core="export-core|$common --modes export --dtypes float32 --regimes static --workloads mlp_loop,moe_routing,positional_graph_break,unet_diffusion"
export_fam="export-fam|$common --modes export --regimes static --workloads torchvision:resnet50,torchvision:convnext_tiny ;; $common --modes freezing --dtypes float32 --regimes static --workloads unet_diffusion"
freezing_fam="freezing-fam|$common --modes freezing --regimes static --workloads timm:mobilenetv3_large_100,torchvision:resnet50,torchvision:convnext_tiny"
ro_fam="ro-fam|$common --modes reduce-overhead --regimes static --workloads torchvision:resnet50,torchvision:mobilenet_v2,torchvision:convnext_tiny"
layoutlm="layoutlm|$common --regimes static --workloads hf:LayoutLMForMaskedLM ;; $common --regimes backed --workloads hf:LayoutLMForMaskedLM ;; $common --regimes backed --dims batch --workloads hf:LayoutLMForMaskedLM ;; $common --regimes unbacked --dims batch --workloads hf:LayoutLMForMaskedLM"
aoti() {  # NAME WORKLOADS [DTYPE]: an aot_inductor stream with the fix's runner arguments
  echo "$1|$common --modes aot_inductor --regimes static ${3:+--dtypes $3} --workloads $2 ${fix_args:-}"
}
aoti_streams() {  # SECONDS: the aot_inductor streams under the fix's environment, if a fix loaded
  [ -s "$work/aoti-fix" ] || { echo "no AOTInductor fix loaded: no aot_inductor streams"; return; }
  fix_env=$(cut -d'|' -f1 "$work/aoti-fix"); fix_args=$(cut -d'|' -f2 "$work/aoti-fix")
  echo "aot_inductor streams with: env [$fix_env] args [$fix_args]"
  # shellcheck disable=SC2086
  $fix_env bench/gpu/families_gpu.sh "$work/$call" "$1" \
    "$(aoti aoti-core-a masked_attention,mlp_loop,moe_routing,positional_graph_break float32)" \
    "$(aoti aoti-core-b bert_encoder,unet_diffusion,llama_decode float32)" \
    "$(aoti aoti-hf hf:BertForMaskedLM,hf:DistilBertForQuestionAnswering,hf:GPT2ForSequenceClassification,hf:AlbertForMaskedLM)" \
    "$(aoti aoti-timm timm:resnet50,timm:mobilenetv3_large_100,timm:deit_tiny_patch16_224.fb_in1k)" \
    "$(aoti aoti-tv torchvision:resnet50,torchvision:mobilenet_v2,torchvision:convnext_tiny)"
}
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-2}
case $call in
  1)
    nice -n 19 timeout 420 python3 -m bench.aoti_load_check --device cuda --parallel --diagnose --no-gdb \
      --conditions load_in_fresh_process,no_precompiled_headers,preload_compiler_libstdcxx,clang,cpu_device \
      --fix-out "$work/aoti-fix" --out "$work/$call/aoti-check.txt" >"$work/$call/aoti-check.log" 2>&1 &
    check=$!
    # alone: one runner process, its cases in turn; the compile threads as a case alone has them
    env -u TORCHINDUCTOR_COMPILE_THREADS timeout 400 python3 -m runner run --device cuda --modes default --regimes static \
      --dtypes bfloat16 --no-warm --timeout 300 --artifact-max-bytes 0 --workloads "$cost" \
      --out "$work/$call/hf-static-cost.json" >"$work/$call/hf-static-cost.log" 2>&1
    echo "cost run ended after $(( $(date +%s) - start )) s"
    left=$(( start + seconds - $(date +%s) ))
    bench/gpu/families_gpu.sh "$work/$call" "$left" "$export_core" "$export_fam" "$freezing_fam" "$ro_fam" "$layoutlm" &
    wait "$check"; echo "AOTInductor check ended after $(( $(date +%s) - start )) s: $(cat "$work/aoti-fix" 2>/dev/null)"
    aoti_streams $(( start + seconds - $(date +%s) ))
    wait ;;
  2)
    [ -d "$work/1" ] && export PTBENCH_DONE_DIR=$work/1
    aoti_streams "$seconds" &
    bench/gpu/families_gpu.sh "$work/$call" "$seconds" \
      "cppw-core-a|$common --modes cpp_wrapper --dtypes float32 --regimes static --workloads moe_routing,positional_graph_break,unet_diffusion" \
      "cppw-core-b|$common --modes cpp_wrapper --dtypes float32 --regimes static --workloads resnet_train,transformer_train_step,llama_decode" \
      "cppw-fam-a|$common --modes cpp_wrapper --regimes static --workloads hf:AlbertForMaskedLM,hf:GPT2ForSequenceClassification" \
      "cppw-fam-b|$common --modes cpp_wrapper --regimes static --workloads torchvision:mobilenet_v2,torchvision:convnext_tiny" \
      "rn50-train|$common --dtypes amp --regimes static --workloads torchvision:resnet50@train ;; $common --dtypes amp --regimes static --workloads torchvision:resnet50@train ;; $common --dtypes amp --regimes static --workloads torchvision:resnet50@train" \
      "$export_core" "$export_fam" "$freezing_fam" "$ro_fam" "$layoutlm"
    wait ;;
  3)
    # the cost run's three cases that call 1's 400 s did not reach, alone as there
    env -u TORCHINDUCTOR_COMPILE_THREADS timeout 220 python3 -m runner run --device cuda --modes default --regimes static \
      --dtypes bfloat16 --no-warm --timeout 300 --artifact-max-bytes 0 --workloads "${cost#*hf:ElectraForQuestionAnswering,}" \
      --out "$work/$call/hf-static-cost-2.json" >"$work/$call/hf-static-cost-2.log" 2>&1
    echo "cost run ended after $(( $(date +%s) - start )) s"
    # aot_inductor with the runner's own libstdc++ fix (runner/engine/paths/aoti.py), no LD_PRELOAD: the
    # family models call 2 did not reach; resnet50@train's third run
    fix_args=""
    bench/gpu/families_gpu.sh "$work/$call" $(( start + seconds - $(date +%s) )) \
      "$(aoti aoti-gpt2 hf:GPT2ForSequenceClassification)" "$(aoti aoti-albert hf:AlbertForMaskedLM)" \
      "$(aoti aoti-deit timm:deit_tiny_patch16_224.fb_in1k) ;; $common --modes aot_inductor --regimes static --dtypes float32 --workloads llama_decode" \
      "rn50-train|$common --dtypes amp --regimes static --workloads torchvision:resnet50@train" ;;
  *) echo "unknown call $call" >&2; exit 2 ;;
esac
cp "$work/aoti-fix" "$work/$call/" 2>/dev/null
tar -C "$work" -czf "$out/$call.tar.gz" "$call"
ls -la "$out"
