#!/usr/bin/env bash
# Runs every benchmark at full size and writes bench/results/<name>.json.
# Usage: bench/run_all.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/results"
for bin in "$build"/bench/*_bench; do
  name=$(basename "$bin")
  echo "== $name"
  "$bin" --benchmark_filter=/5000/ --benchmark_min_time=2 \
    --benchmark_out="$here/results/$name.json" --benchmark_out_format=json \
    2>/dev/null
done
