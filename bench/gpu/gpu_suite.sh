#!/usr/bin/env bash
# The full suite on a GPU, one `python -m runner run` per workload (a killed call loses one
# workload, not the suite), stopping before DEADLINE_S so the call's time limit is never hit.
#   bench/gpu/gpu_suite.sh OUTDIR [runner args...]     e.g. bench/gpu/gpu_suite.sh /tmp/out --modes default
# Env: WORKLOADS (comma list; default the whole suite), DEADLINE_S (default 540), PYTHON (python3).
# Then: python -m bench.merge_documents OUTDIR/suite.json OUTDIR/w_*.json; python -m bench.suite_report ...
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1; shift
mkdir -p "$out"
PYTHON=${PYTHON:-python3}
deadline=$(( $(date +%s) + ${DEADLINE_S:-540} ))
workloads=${WORKLOADS:-$("$PYTHON" -c 'from workloads.registry import all_workloads; print(",".join(w.name for w in all_workloads()))')}
for w in ${workloads//,/ }; do
  left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt 60 ]; then echo "== deadline: skipping $w and the rest"; break; fi
  echo "== $w ($left s left)"
  timeout "$left" "$PYTHON" -m runner run --size full --device cuda --workloads "$w" --out "$out/w_$w.json" "$@" \
    > "$out/w_$w.log" 2>&1 || echo "   $w: exit $? (see w_$w.log)"
  tail -n 8 "$out/w_$w.log" | grep -v '^\[' || true
done
