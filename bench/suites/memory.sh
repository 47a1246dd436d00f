#!/usr/bin/env bash
# Resident memory of the cluster model at 1k/5k/20k nodes and 10k/100k pods.
# Writes bench/results/memory.json.   Usage: memory.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
"$build/bench/extender_memory" --nodes 1000,5000,20000 --pods 10000,100000 \
  --pods-on 5000 --out bench/results/memory.json
