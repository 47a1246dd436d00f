#!/usr/bin/env bash
# How honest "when will it start" is (README, "When will it start"): the
# Alibaba trace's first 600 whole-GPU tasks replayed through the queueing
# engine at 130 % of one ClusterQueue's capacity, in three arms (runtimes
# known, deadlines only, history only); each waiting task's forecast on
# arrival is compared with the start it then gets
# (bench/forecast_honesty_bench.cc). Writes
# bench/results/forecast_honesty_bench.json (Google Benchmark JSON; the
# counters are the README table's columns).
# Usage, from the repo root: bench/suites/forecast.sh BUILD_DIR
# Env: TRACE_DIR (default ../shared/data/alibaba-gpu-v2023, as the benchmark
# reads it); BENCH_QUICK=1: the 50-task arm only.
set -euo pipefail
build=${1:?usage: bench/suites/forecast.sh BUILD_DIR}
filter='^BM_ForecastHonesty/[0-9]+/600/'
[ "${BENCH_QUICK:-0}" = 1 ] && filter='^BM_ForecastHonesty/[0-9]+/50/'
mkdir -p bench/results
"$build/bench/forecast_honesty_bench" --benchmark_filter="$filter" \
  --benchmark_out=bench/results/forecast_honesty_bench.json \
  --benchmark_out_format=json
