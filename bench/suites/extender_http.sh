#!/usr/bin/env bash
# Extender over real HTTP: 1, 8 and 64 keep-alive clients on a 5,000-node
# cluster with 500 candidate names (filter+prioritize, then filter alone),
# plus nodeCacheCapable=false ingest, and filter alone with the client niced.
# Writes bench/results/extender_http{,_filter,_filter_niced}.json.
# Usage: extender_http.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
seconds=10
[ "${BENCH_QUICK:-0}" = 1 ] && seconds=3
"$build/bench/extender_loadgen" --nodes 5000 --candidates 500 \
  --concurrency 1,8,64 --seconds "$seconds" --warmup 2 --ingest-seconds 5 \
  --out bench/results/extender_http.json
# Filter alone, the requests/s target.
"$build/bench/extender_loadgen" --nodes 5000 --candidates 500 \
  --concurrency 1,8,64 --seconds "$seconds" --warmup 2 --ingest-seconds 0 \
  --mix filter --out bench/results/extender_http_filter.json
# Filter alone with the load client niced: server time when the server does
# not share its cores with the client (kube-scheduler runs elsewhere).
"$build/bench/extender_loadgen" --nodes 5000 --candidates 500 \
  --concurrency 1,8,64 --seconds "$seconds" --warmup 2 --ingest-seconds 0 \
  --mix filter --client-nice 19 \
  --out bench/results/extender_http_filter_niced.json
# Filter CPU with the visibility API's and the dashboard's data polled, over
# quiet (issue H §1: within 1.1x).
"$build/bench/extender_polled" --nodes 5000 --candidates 500 \
  --concurrency 1,8 --seconds "$((seconds * 2))" --warmup 2 --poll-hz 5 \
  --out bench/results/extender_polled.json
