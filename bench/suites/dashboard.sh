#!/usr/bin/env bash
# The web dashboard's render time in headless Chromium (tests/e2e/suite,
# BenchmarkDashboardRender): navigation to the first full render (data
# fetched, GPU map drawn) of `gpusched serve --dashboard-listen` on 5,000
# generated DGX H100 nodes (40,000 GPUs, 60 % held by four queues, 100
# workloads waiting), 10 page loads, p50 and p90 against the 2 s target.
# BENCH_QUICK=1: 3 loads. Writes bench/results/dashboard_render.json.
# Usage, from the repo root: bench/suites/dashboard.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: bench/suites/dashboard.sh BUILD_DIR}" && pwd)
root=$(pwd)
out="$root/bench/results/dashboard_render.json"
runs=${E2E_DASH_RUNS:-10}
[ "${BENCH_QUICK:-0}" = 1 ] && runs=${E2E_DASH_RUNS:-3}

source bench/lib/e2e_bench.sh
e2e_prepare dashboard "$build"
mkdir -p "$(dirname "$out")"
E2E_REQUIRE_CHROMIUM=1 E2E_DASH_NODES="${E2E_DASH_NODES:-5000}" \
  E2E_DASH_RUNS="$runs" E2E_DASH_OUT="$out" \
  e2e_bench "$build" BenchmarkDashboardRender 10m
