#!/usr/bin/env bash
# What issues #43 and #44 still lack on a GPU after 2026-11-28 (the sixth session), in the calls
# that fit one session's 30 device minutes (bench/results/llm-h200-2026-11-28/README.md,
# bench/results/compile-paths-gpu-2026-11-28/README.md, bench/results/distributed/README.md):
#   (phase a ran on 2026-11-29, 459 s: bench/results/llm-h200-2026-11-28/README.md; phase b and the night remain)
#   bench/gpu/gpu_next.sh a OUT     # nvidia-h200, carry [".whl"]: gpt-oss-20b's four LLM cells, llama_decode
#                                   # through AOTInductor, Qwen3 decode under reduce-overhead again (its
#                                   # environment.cuda_graphs now says whether inductor skipped CUDA graphs)
#   bench/gpu/gpu_next.sh b OUT     # nvidia-h200-x2, carry [".whl"]: the NCCL table's other 18 cases, at
#                                   # about 80 s each (2026-11-28) six per call: DIST=N,... picks them
#   then #44's night: bench/gpu/night_gpu.sh OUT before|after 420 (nvidia-h200-x2, carry [".whl312", ".redis"])
# Memory decides call a's streams: gpt-oss-20b holds about 80 GiB of the card (both sides), the float32
# llama_decode 31 GiB before its package compiles, Qwen3 3 GiB; nothing else shares the card.
set -u
cd "$(dirname "$0")/../.."
phase=$1; out=$2; seconds=${3:-555}; start=$(date +%s)
work=/tmp/ptb/next-$phase; mkdir -p "$work" "$out"
if [ -d .whl ] && ! python3 -c "import jsonschema" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
left() { echo $(( seconds - ($(date +%s) - start) - 25 )); }
llm="--artifact-max-bytes 0 --timeout 260"
case $phase in
  a)
    bench/gpu/families_gpu.sh "$work" "$(left)" \
      "gpt-oss|$llm --modes reduce-overhead --regimes static,backed,unbacked --workloads hf:openai/gpt-oss-20b@decode ;; $llm --regimes unbacked --workloads hf:openai/gpt-oss-20b@prefill" \
      "aoti|--artifact-max-bytes 0 --timeout 500 --modes aot_inductor --dtypes float32 --regimes static --workloads llama_decode" \
      "qwen-ro|$llm --modes reduce-overhead --regimes unbacked,backed --workloads hf:Qwen/Qwen3-0.6B@decode"
    python3 -m bench.llm_table "$work"/*.json ;;
  b)
    dist=${DIST:-}
    [ -n "$dist" ] || dist=$(python3 -c "from bench.distributed_table import CORE, FAMILIES; done={'dist:gpt@train+ddp','dist:gpt@train+ddp+compile_first'}; print(','.join(w for w in CORE + FAMILIES if w not in done))")
    timeout -s INT "$(left)" python3 -m runner run --device cuda --modes default --regimes static --no-warm --timeout 200 \
      --artifact-max-bytes 0 --workloads "$dist" --out "$work/dist-nccl.json" >"$work/dist-nccl.log" 2>&1
    python3 -m bench.distributed_table --from "$work/dist-nccl.json" ;;
  *) echo "phase a|b" >&2; exit 2 ;;
esac
tar -czf "$out/next-$phase.tar.gz" -C "$work" .
echo "done after $(( $(date +%s) - start )) s: $out/next-$phase.tar.gz"
