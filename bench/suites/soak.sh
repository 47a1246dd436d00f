#!/usr/bin/env bash
# Sustained filter+bind(+complete) traffic against `gpusched serve`, RSS
# sampled every 5 s: 300 s warm-up (the bounded pending-pod cache fills) then 10 minutes (SOAK_SECONDS to change,
# BENCH_QUICK=1 for 60 s). Writes bench/results/soak.json.
# Usage: soak.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
seconds=${SOAK_SECONDS:-600}
warmup=300
if [ "${BENCH_QUICK:-0}" = 1 ]; then seconds=60; warmup=15; fi
"$build/bench/extender_soak" --serve "$build/gpusched" --nodes 5000 \
  --seconds "$seconds" --warmup "$warmup" --sample-seconds 5 \
  --out bench/results/soak.json
