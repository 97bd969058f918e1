#!/usr/bin/env bash
# A real GPU history for the verdict tests (issue #15 item 6): runs of one unchanged build and of
# build variants (issue #16), one `python -m runner run` per run, in the order given.
#   bench/gpu/gpu_history.sh OUTDIR SEQUENCE     e.g. bench/gpu/gpu_history.sh /tmp/h "base:1 base:2 fusion:1 base:3"
# A step is NAME:INDEX; NAME is `base` (no overrides) or a variant declared in VARIANTS, e.g.
#   VARIANTS="fusion=--config inductor.max_fusion_size=1;cdt=--config inductor.coordinate_descent_tuning=true"
# Each run writes OUTDIR/hist-NAME-INDEX.json (static shapes, default mode, no warm phase).
# Env: WORKLOADS (default masked_attention,bert_encoder,llama_decode), DEADLINE_S (default 540),
# PYTHON (python3), EXTRA_ARGS (more runner arguments, e.g. '--dtypes bfloat16 --timeout 280').
# A step is skipped when less than MIN_STEP_S (default 150) is left. Several streams at once on one GPU:
# bench/gpu/gpu_family_history.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1; sequence=$2
mkdir -p "$out"
PYTHON=${PYTHON:-python3}
deadline=$(( $(date +%s) + ${DEADLINE_S:-540} ))
declare -A variant_args=([base]="")
IFS=';' read -ra declared <<< "${VARIANTS:-}"
for entry in "${declared[@]}"; do
  [ -n "$entry" ] && variant_args[${entry%%=*}]=${entry#*=}
done
for step in $sequence; do
  name=${step%%:*}; index=${step#*:}
  left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt "${MIN_STEP_S:-150}" ]; then echo "== deadline: skipping $step and the rest"; break; fi
  if [ -z "${variant_args[$name]+set}" ]; then echo "== unknown variant $name"; exit 2; fi
  echo "== $step ($left s left) ${variant_args[$name]}"
  # shellcheck disable=SC2086
  timeout "$left" "$PYTHON" -m runner run --size full --device cuda --modes default --regimes static --no-warm \
    --workloads "${WORKLOADS:-masked_attention,bert_encoder,llama_decode}" \
    --build-label "history $step" ${variant_args[$name]} ${EXTRA_ARGS:-} --out "$out/hist-$name-$index.json" \
    > "$out/hist-$name-$index.log" 2>&1 || echo "   $step: exit $? (see hist-$name-$index.log)"
  grep -E "^(ptbench|[0-9]+ cases)" "$out/hist-$name-$index.log" || tail -n 5 "$out/hist-$name-$index.log"
done
