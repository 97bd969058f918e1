#!/usr/bin/env bash
# The GPU calls of 2026-11-27 (issues #28 and #29), each one command on the lent GPU host, cut off by
# SECONDS (default 530). The documents and logs come back as one archive, OUT/CALL.tar.gz.
#   bench/gpu/gpu_2026-11-27.sh CALL OUT [SECONDS]
#   1: compile paths export and freezing (the core suite in float32: export in every regime; ten family
#      models in bfloat16, static), and the Hugging Face models' shape regimes still missing (two more
#      models in all three; backed on the batch alone and on the sequence alone beside unbacked), beside
#      AOTInductor's load check (bench/aoti_load_check.py).
#   2: compile paths cpp_wrapper, aot_inductor (the core suite) and reduce-overhead (the HUD's cudagraphs),
#      and the Hugging Face regimes call 1 did not reach.
# The hosts lack jsonschema (the runner validates its documents): each call carried the wheels of
# bench/gpu/gpu_wheels.sh (`carry: [".whl"]`, `pip install --no-index --no-deps --target /tmp/site .whl/*.whl`).
# Tables: bench/compile_paths.py --from DOC and bench/families_table.py DOCS (their docstrings).
set -u
cd "$(dirname "$0")/../.."
call=$1; out=$2; seconds=${3:-530}
mkdir -p "$out/$call"
core=bert_encoder,llama_decode,masked_attention,mlp_loop,moe_routing,positional_graph_break,unet_diffusion
core_all=$core,resnet_train,transformer_train_step
fam=hf:BertForMaskedLM,hf:DistilBertForQuestionAnswering,hf:GPT2ForSequenceClassification,hf:AlbertForMaskedLM,timm:resnet50
fam=$fam,timm:mobilenetv3_large_100,timm:deit_tiny_patch16_224.fb_in1k,torchvision:resnet50,torchvision:mobilenet_v2,torchvision:convnext_tiny
fam_a=${fam%%,timm:mobilenetv3*}; fam_b=${fam#*timm:resnet50,}
new=hf:LayoutLMForMaskedLM,hf:GPTNeoForCausalLM
common="--artifact-max-bytes 0 --timeout 280"
case $call in
  1)
    timeout 500 python3 -m bench.aoti_load_check --device cuda --conditions "${AOTI_CONDITIONS:-load_in_fresh_process}" --out "$out/$call/aoti-load-check.txt" >"$out/$call/aoti-load-check.log" 2>&1 &
    bench/gpu/families_gpu.sh "$out/$call" "$seconds" \
      "export-core|$common --modes export --dtypes float32 --regimes static,backed --workloads $core" \
      "export-core-unbacked|$common --modes export --dtypes float32 --regimes unbacked --workloads $core" \
      "export-fam|$common --modes export --regimes static --workloads $fam" \
      "freezing-core|$common --modes freezing --dtypes float32 --regimes static --workloads $core ;; $common --modes freezing --regimes static --workloads $fam_b" \
      "freezing-fam|$common --modes freezing --regimes static --workloads $fam_a" \
      "hf-new|$common --regimes backed --workloads $new ;; $common --regimes unbacked --dims batch --workloads $new,hf:GPT2ForSequenceClassification,hf:DistillGPT2" \
      "hf-seq|$common --regimes unbacked --dims sequence --workloads $new ;; $common --regimes backed --dims sequence --workloads hf:DistillGPT2,hf:T5Small,hf:BartForCausalLM,hf:OPTForCausalLM" \
      "hf-bb-a|$common --regimes backed --dims batch --workloads hf:BertForMaskedLM,hf:DistilBertForMaskedLM,hf:AlbertForMaskedLM,hf:RobertaForCausalLM,hf:ElectraForCausalLM,hf:LayoutLMForMaskedLM" \
      "hf-bb-b|$common --regimes backed --dims batch --workloads hf:T5Small,hf:OPTForCausalLM,hf:BartForCausalLM,hf:DistillGPT2,hf:GPT2ForSequenceClassification,hf:GPTNeoForCausalLM"
    wait ;;
  2)
    bench/gpu/families_gpu.sh "$out/$call" "$seconds" \
      "cppw-core|$common --modes cpp_wrapper --dtypes float32 --regimes static --workloads $core_all" \
      "cppw-fam-a|$common --modes cpp_wrapper --regimes static --workloads $fam_a" \
      "cppw-fam-b|$common --modes cpp_wrapper --regimes static --workloads $fam_b" \
      "aoti-core|$common --modes aot_inductor --dtypes float32 --regimes static --workloads $core" \
      "ro-fam|$common --modes reduce-overhead --regimes static --workloads $fam" \
      "hf-rest-a|$common --regimes unbacked --dims batch --workloads hf:GPTNeoForCausalLM,hf:GPT2ForSequenceClassification,hf:DistillGPT2" \
      "hf-rest-b|$common --regimes backed --dims batch --workloads hf:RobertaForCausalLM,hf:ElectraForCausalLM,hf:LayoutLMForMaskedLM,hf:DistillGPT2,hf:GPT2ForSequenceClassification" ;;
  *) echo "unknown call $call" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/$call.tar.gz" "$call" && rm -rf "${out:?}/$call"
ls -la "$out"
