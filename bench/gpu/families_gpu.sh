#!/usr/bin/env bash
# The families' GPU run (bench/results/families/README.md): several runner processes at once, one per
# stream, each writing its run document after every case, so that a stream cut off by the time limit
# keeps what it finished. Usage: bench/gpu/families_gpu.sh OUTDIR SECONDS 'NAME|ARGS' ...
# e.g. 'hf-static|--workloads hf:BertForMaskedLM,hf:T5Small --regimes static'; a stream's ARGS may hold several
# runs in turn, ' ;; '-separated ('dyn|--regimes backed --dims batch --workloads A ;; --regimes unbacked ...'),
# each with a document of its own (NAME.json, NAME-2.json, ...), all ending by SECONDS.
# Each case process on the GPU holds an exclusive lock on it while it times (runner/engine/gpu_lock.py:
# $PTBENCH_GPU_LOCK_DIR, default the temp dir), so the streams overlap compiles, never timings; each
# stream's inductor compiles get cores / streams worker threads (TORCHINDUCTOR_COMPILE_THREADS, unless
# set) so that compiling streams leave the timing one's host thread a core. With PTBENCH_DONE_DIR set,
# each run skips the workloads that a document there already has under its configuration
# (bench/gpu/gpu_pending.py): a second call of the same lease goes on where the first was cut off.
set -u
out=$1; seconds=$2; shift 2
mkdir -p "$out"
export PYTHONUNBUFFERED=1
threads=$(( $(nproc) / $# ))
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$(( threads > 1 ? threads : 1 ))}
echo "streams: $#, TORCHINDUCTOR_COMPILE_THREADS=$TORCHINDUCTOR_COMPILE_THREADS, lock dir: ${PTBENCH_GPU_LOCK_DIR:-temp dir}"
deadline=$(( $(date +%s) + seconds ))
stream_runs() {  # NAME ARGS: ARGS may hold several runs, ' ;; '-separated, run in turn (NAME.json, NAME-2.json, ...)
  local name=$1 rest=$2 n=1 args left doc
  while [ -n "$rest" ]; do
    args=${rest%% ;; *}; [ "$args" = "$rest" ] && rest="" || rest=${rest#* ;; }
    left=$(( deadline - $(date +%s) )); [ "$left" -gt 20 ] || break
    doc="$out/$name$([ "$n" -gt 1 ] && echo "-$n").json"
    if [ -n "${PTBENCH_DONE_DIR:-}" ]; then  # a later call of the same lease: only what an earlier one did not run
      args=$(python3 -m bench.gpu.gpu_pending "$PTBENCH_DONE_DIR" "$args")
      [ -n "$args" ] || { echo "$name: nothing left after $PTBENCH_DONE_DIR" >>"$out/$name.log"; n=$(( n + 1 )); continue; }
    fi
    # shellcheck disable=SC2086
    timeout -s INT "$left" python3 -m runner run --device cuda --modes default --dtypes bfloat16 --no-warm \
      --timeout 300 $args --out "$doc" >>"$out/$name.log" 2>&1
    n=$(( n + 1 ))
  done
}
for stream in "$@"; do
  stream_runs "${stream%%|*}" "${stream#*|}" &
done
wait
tail -n 25 "$out"/*.log
