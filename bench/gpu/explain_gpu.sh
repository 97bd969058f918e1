#!/usr/bin/env bash
# The GPU proof of issue #30 (docs/explain.md): one workload measured on the plain build, with
# inductor.max_fusion_size=1 (a kernel variant: fused Triton kernels split) and with
# inductor.coordinate_descent_tuning=true (a compile-time variant: more time in lowering and kernel
# phases), then each variant's "what changed" against the plain build (bench/explain_pair.py).
# Usage: bench/gpu/explain_gpu.sh OUTDIR [WORKLOADS] [SUITE]  e.g. bench/gpu/explain_gpu.sh /tmp/explain bert_encoder,llama_decode full
# On CPU (a check of the script, not the proof; max_fusion_size changes no CPU kernel here, the vector
# width does): DEVICE=cpu KERNEL_VARIANT=inductor.cpp.simdlen=1 bench/gpu/explain_gpu.sh /tmp/explain mlp_loop tiny
set -eu
out=$1; workloads=${2:-bert_encoder,llama_decode}; size=${3:-full}; device=${DEVICE:-cuda}
kernel_variant=${KERNEL_VARIANT:-inductor.max_fusion_size=1}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
run() {  # NAME [--config KEY=VALUE]
  name=$1; shift
  python3 -m runner run --device "$device" --size "$size" --workloads "$workloads" --modes default --regimes static \
    --dtypes float32 --timeout 900 "$@" --out "$out/$name.json" >"$out/$name.log" 2>&1
}
run plain
run fusion1 --config "$kernel_variant"
run cdt --config inductor.coordinate_descent_tuning=true
python3 -m bench.explain_pair "$out/plain.json" "$out/fusion1.json" --metric compiled_latency_ms --out "$out/what-changed-fusion1.txt"
python3 -m bench.explain_pair "$out/plain.json" "$out/cdt.json" --metric compile_time_cold_s --out "$out/what-changed-cdt.txt"
