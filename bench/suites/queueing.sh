#!/usr/bin/env bash
# Queueing at scale: Kueue's two performance-test shapes as generated
# scenarios for `gpusched simulate` (bench/queueing_scale.py), then the
# admission micro benchmarks (gang plan time, growth with pending count).
# Writes bench/results/queueing_scale.json and bench/results/queueing_bench.json.
# Usage: bench/suites/queueing.sh BUILD_DIR [--small]   (from the repo root)
set -euo pipefail
build=${1:-build}
small=${2:-}
python3 bench/queueing_scale.py --build "$build" --timeout 900 $small
filter='/5000/'
[ "$small" = "--small" ] && filter='/50/'
"$build/bench/queueing_bench" --benchmark_filter="$filter" \
  --benchmark_out="bench/results/queueing_bench${small:+_small}.json" \
  --benchmark_out_format=json
