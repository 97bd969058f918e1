#!/usr/bin/env bash
# The fourth session's device calls on nvidia-h200-x2 (2026-11-28): each GPU its own work at once.
#   bench/gpu/gpu_x2_2026-11-28b.sh a|b|c OUT
# a: GPU0 bench/gpu/llm_gpu.sh (what bench/results/llm-h200-2026-11-28 lacks); GPU1 the commit bisection
#    (masked_attention, bench/gpu/commit_bisect_gpu.sh), then gpt-oss-20b prefill alone. Every LLM case of
#    GPU0 timed out: the GPU lock held whole first calls on torch 2.11 (fixed in runner/engine/gpu_lock.py).
# b: the same again after that fix, GPU1: the bisection, Llama-2-7B decode alone (room for its
#    float64 check), gpt-oss-20b prefill (cosine fallback).
# c: GPU0 the commit bisection with the call's whole time; GPU1 bench/gpu/llm_gpu.sh for what calls 1-2
#    (bench/results/llm-h200-2026-11-28, s4b-*) lack.
# Carry [".whl"] (bench/gpu/gpu_wheels.sh).
set -u
cd "$(dirname "$0")/../.."
phase=$1; out=$2; start=$(date +%s)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=index,name,memory.used --format=csv
left() { echo $(( $1 - ($(date +%s) - start) )); }
one() {  # DOC SECONDS ARGS...: one runner run on this process's GPU
  local doc=$1 secs=$2; shift 2
  timeout -s INT "$secs" python3 -m runner run --device cuda --dtypes bfloat16 --no-warm --artifact-max-bytes 0 \
    --timeout 300 "$@" --out "$doc" >"${doc%.json}.log" 2>&1
  echo "$(basename "$doc"): exit $? after $(( $(date +%s) - start )) s"
}
case $phase in
  a)
    ( export CUDA_VISIBLE_DEVICES=0; bench/gpu/llm_gpu.sh /tmp/a-llm "$(left 545)" bench/results/llm-h200-2026-11-28 >/tmp/a-llm.log 2>&1 ) &
    ( export CUDA_VISIBLE_DEVICES=1; mkdir -p /tmp/a-gpu1
      WORKLOAD=masked_attention SECONDS_LIMIT=250 bench/gpu/commit_bisect_gpu.sh /tmp/a-gpu1/bisect >/tmp/a-gpu1/bisect-driver.log 2>&1
      echo "bisection ended after $(( $(date +%s) - start )) s" >>/tmp/a-gpu1/bisect-driver.log
      one /tmp/a-gpu1/gpt-oss-prefill.json "$(left 540)" --modes default --regimes static,backed,unbacked --workloads hf:openai/gpt-oss-20b@prefill
    ) >/tmp/a-gpu1.log 2>&1 &
    wait
    cp /tmp/a-llm.log /tmp/a-gpu1.log /tmp/a-llm/ 2>/dev/null
    tar -czf "$out/a-gpu1.tar.gz" -C /tmp a-gpu1 a-gpu1.log
    cp /tmp/a-llm/llm.tar.gz "$out/a-llm.tar.gz" 2>/dev/null || tar -czf "$out/a-llm.tar.gz" -C /tmp a-llm a-llm.log
    tail -5 /tmp/a-gpu1/bisect/commit-bisect.log; cat /tmp/a-gpu1.log; tail -40 /tmp/a-llm.log ;;
  b)
    ( export CUDA_VISIBLE_DEVICES=0; bench/gpu/llm_gpu.sh /tmp/b-llm "$(left 545)" bench/results/llm-h200-2026-11-28 >/tmp/b-llm.log 2>&1 ) &
    ( export CUDA_VISIBLE_DEVICES=1; mkdir -p /tmp/b-gpu1
      mkdir -p /tmp/b-gpu1/bisect  # commit_bisect_gpu.sh's bisection without its overlay-cost step (call a measured it)
      timeout 330 python3 -m bench.commit_bisect_real --python python3 --plant inductor-fusion --commits 16 --culprit 11 \
        --workload masked_attention --size full --backend inductor --dtype float32 --metric speedup --attempts 1 \
        --out /tmp/b-gpu1/bisect/commit-bisect.txt >/tmp/b-gpu1/bisect/commit-bisect.log 2>&1
      echo "exit $?" >>/tmp/b-gpu1/bisect/commit-bisect.log
      echo "bisection ended after $(( $(date +%s) - start )) s" >>/tmp/b-gpu1/bisect-driver.log
      one /tmp/b-gpu1/llama2-decode.json "$(left 450)" --modes default --regimes static --workloads hf:meta-llama/Llama-2-7b-hf@decode
      one /tmp/b-gpu1/gpt-oss-prefill.json "$(left 545)" --modes default --regimes static --workloads hf:openai/gpt-oss-20b@prefill
    ) >/tmp/b-gpu1.log 2>&1 &
    wait
    cp /tmp/b-llm.log /tmp/b-llm/ 2>/dev/null
    tar -czf "$out/b-gpu1.tar.gz" -C /tmp b-gpu1 b-gpu1.log
    cp /tmp/b-llm/llm.tar.gz "$out/b-llm.tar.gz" 2>/dev/null || tar -czf "$out/b-llm.tar.gz" -C /tmp b-llm b-llm.log
    tail -12 /tmp/b-gpu1/bisect/commit-bisect.log; cat /tmp/b-gpu1.log; tail -45 /tmp/b-llm.log ;;
  c)
    ( export CUDA_VISIBLE_DEVICES=1; bench/gpu/llm_gpu.sh /tmp/c-llm "$(left 540)" bench/results/llm-h200-2026-11-28 >/tmp/c-llm.log 2>&1 ) &
    ( export CUDA_VISIBLE_DEVICES=0; mkdir -p /tmp/c-gpu0/bisect
      timeout "$(left 535)" python3 -m bench.commit_bisect_real --python python3 --plant inductor-fusion --commits 16 --culprit 11 \
        --workload masked_attention --size full --backend inductor --dtype float32 --metric speedup --attempts 1 \
        --out /tmp/c-gpu0/bisect/commit-bisect.txt >/tmp/c-gpu0/bisect/commit-bisect.log 2>&1
      echo "exit $? after $(( $(date +%s) - start )) s" >>/tmp/c-gpu0/bisect/commit-bisect.log
    ) &
    wait
    cp /tmp/c-llm.log /tmp/c-llm/ 2>/dev/null
    tar -czf "$out/c-gpu0.tar.gz" -C /tmp c-gpu0
    cp /tmp/c-llm/llm.tar.gz "$out/c-llm.tar.gz" 2>/dev/null || tar -czf "$out/c-llm.tar.gz" -C /tmp c-llm c-llm.log
    tail -40 /tmp/c-gpu0/bisect/commit-bisect.log; tail -30 /tmp/c-llm.log ;;
  *) echo "phase a|b|c" >&2; exit 2 ;;
esac
echo "phase $phase done after $(( $(date +%s) - start )) s"
