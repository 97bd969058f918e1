#!/usr/bin/env bash
# Issue #44 item 6's last question: is torchvision:mobilenet_v2's slow run the first case on a fresh GPU?
# On a machine just started (the device's first call), run the same static case N times in a row, each
# in a fresh runner process alone on the card, with the GPU's clocks before each; then print each run's
# speedup, eager and compiled latency and host probe (bench/families_table.py --cost for the phases).
#   bench/gpu/fresh_gpu_first.sh OUT [N] [WORKLOAD]        # nvidia-h200, carry [".whl"] or [".whl312"]
set -u
cd "$(dirname "$0")/../.."
out=$1; runs=${2:-3}; workload=${3:-torchvision:mobilenet_v2}
mkdir -p "$out"
wheels=$(ls -d .whl .whl312 2>/dev/null | head -n 1)  # whichever the call carried
if [ -n "$wheels" ] && ! python3 -c "import jsonschema" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site-fresh "$wheels"/*.whl && export PYTHONPATH=/tmp/site-fresh${PYTHONPATH:+:$PYTHONPATH}
fi
echo "uptime: $(cut -d' ' -f1 /proc/uptime) s"
for i in $(seq 1 "$runs"); do
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,pstate --format=csv,noheader | sed "s/^/run $i before: /"
  python3 -m runner run --device cuda --workloads "$workload" --modes default --regimes static --dtypes bfloat16 \
    --no-warm --artifact-max-bytes 0 --out "$out/fresh-$i.json" 2>&1 | grep -E "pass|fail|error" | tail -n 2
done
python3 - "$out" "$runs" <<'PY'
import json, sys
for i in range(1, int(sys.argv[2]) + 1):
    r = json.load(open(f"{sys.argv[1]}/fresh-{i}.json"))["results"][0]
    m, timing = r["metrics"], (r.get("environment") or {}).get("timing") or {}
    probe, share = (timing.get("host_probe_ms") or {}).get("median"), timing.get("host_share")
    print(f"run {i}: {r['status']} speedup {m.get('speedup', 0):.3f}x eager {m.get('eager_latency_ms', 0):.3f} ms "
          f"compiled {m.get('compiled_latency_ms', 0):.3f} ms compile {m.get('compile_time_cold_s', 0):.1f} s "
          f"host probe {probe} ms host share {share} timed {timing.get('timed_s')} s")
PY
