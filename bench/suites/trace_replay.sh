#!/usr/bin/env bash
# The FGD paper's experiment on the Alibaba GPU trace: every trace-replay
# scorer x 10 seeds at 130 % arrived load. Writes bench/results/
# trace_replay.json (every run), trace_replay.md (mean table) and
# trace_replay.svg (allocation ratio against arrived load).
# Usage, from the repo root: bench/suites/trace_replay.sh BUILD_DIR
# Env: TRACE_DIR (default ../shared/data/alibaba-gpu-v2023), SEEDS (default
# "1 2 3 4 5 6 7 8 9 10"), SCORERS (default "default random bestfit dotprod
# packing").
set -euo pipefail
build=${1:?usage: bench/suites/trace_replay.sh BUILD_DIR}
trace_dir=${TRACE_DIR:-../shared/data/alibaba-gpu-v2023}
seeds=${SEEDS:-1 2 3 4 5 6 7 8 9 10}
scorers=${SCORERS:-default random bestfit dotprod packing}
results=bench/results
runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT

for scorer in $scorers; do
  for seed in $seeds; do
    "$build/gpusched" trace-replay \
      --nodes "$trace_dir/openb_node_list_gpu_node.csv" \
      --pods "$trace_dir/openb_pod_list_default.csv" \
      --load 1.3 --seed "$seed" --scorer "$scorer" \
      --output "$runs/$scorer-$seed.json"
    echo "trace_replay: $scorer seed $seed done" >&2
  done
done

mkdir -p "$results"
python3 bench/plot_trace_replay.py "$runs"/*.json \
  --json "$results/trace_replay.json" \
  --markdown "$results/trace_replay.md" \
  --svg "$results/trace_replay.svg"
