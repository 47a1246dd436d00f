#!/usr/bin/env bash
# Time from a gang's last member created to every member bound, through the
# real kube-scheduler on a loopback control plane with gpusched's webhook
# gate (tests/e2e/suite, BenchmarkGangTimeToBound): gangs of 8 and 64
# single-GPU members, 5 rounds each, on 16 generated DGX H100 nodes. Split
# into last created -> gates lifted (the admission loop's pass and its API
# writes) and -> bound (kube-scheduler and gpusched's bind). Beside each
# gang round, the same pods in no queue, and two floors: their gates lifted
# by the benchmark for kube-scheduler to bind (ungate_floor), and lifted and
# bound by the benchmark with no scheduler (write_floor). BENCH_QUICK=1:
# 2 rounds. Writes bench/results/gang_time_to_bound.json; E2E_GANG_PPROF=DIR
# adds a kube-apiserver CPU profile per round.
# Usage, from the repo root: bench/suites/gang.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: bench/suites/gang.sh BUILD_DIR}" && pwd)
root=$(pwd)
out="$root/bench/results/gang_time_to_bound.json"
rounds=${E2E_GANG_ROUNDS:-5}
[ "${BENCH_QUICK:-0}" = 1 ] && rounds=${E2E_GANG_ROUNDS:-2}

source bench/lib/e2e_bench.sh
e2e_prepare gang "$build"
mkdir -p "$(dirname "$out")"
E2E_GANG_SIZES="${E2E_GANG_SIZES:-8,64}" E2E_GANG_ROUNDS="$rounds" \
  E2E_GANG_NODES="${E2E_GANG_NODES:-16}" E2E_GANG_OUT="$out" \
  e2e_bench "$build" BenchmarkGangTimeToBound 30m
