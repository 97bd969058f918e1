#!/usr/bin/env bash
# Every family document stored in bench/results (families/ and compile-paths-gpu-*/: one stock build,
# torch 2.11.0+cu130, measured call after call) replayed as nightlies of unchanged builds, one build
# per GPU call in time order, per machine class, through bench/real_verdicts.py (ingest, detection,
# the default and the named verdict). Nothing changed between them: every finding is a false alarm.
#   bench/real_verdicts_families.sh > bench/results/real-verdicts-families-DATE.txt
set -euo pipefail
cd "$(dirname "$0")/.."
R=bench/results
join() { ls "$@" | paste -sd, -; }
echo "## gpu-h100: 11 builds (r1, r2, spread-1..4, locked + compile paths 11-25, calls of 11-27 and 11-28)"
python -m bench.real_verdicts --all-pairs --details --history \
  "$(join $R/families/r1/*.json)" "$(join $R/families/r2/*.json)" \
  $R/families/spread/spread-{1,2,3,4}.json \
  "$(join $R/families/locked-static/*.json $R/families/locked-dynamic/*.json $R/compile-paths-gpu-2026-11-25/*.json)" \
  "$(join $R/compile-paths-gpu-2026-11-27/h100-*.json $R/families/regimes-2026-11-27/h100-*.json)" \
  "$(join $R/families/h100-2026-11-28/h100-1-*.json $R/compile-paths-gpu-2026-11-28/h100-1-*.json)" \
  "$(join $R/families/h100-2026-11-28/h100-2-*.json $R/compile-paths-gpu-2026-11-28/h100-2-*.json)" \
  "$(join $R/families/h100-2026-11-28/h100-3-*.json $R/compile-paths-gpu-2026-11-28/h100-3-*.json)"
echo
echo "## gpu-h200: 2 builds (the 2026-11-27 call, then its two re-runs)"
python -m bench.real_verdicts --all-pairs --details --history \
  "$(join $R/compile-paths-gpu-2026-11-27/h200-*.json $(ls $R/families/regimes-2026-11-27/h200-*.json | grep -v -- '-2.json'))" \
  "$(join $R/families/regimes-2026-11-27/h200-*-2.json)"
