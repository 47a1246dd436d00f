#!/usr/bin/env bash
# Admissions per second of the same queueing core, live and simulated
# (tests/e2e/suite, BenchmarkAdmissionsLiveVsSimulator): a backlog of
# single-GPU pods and gangs of 8 waits, gated, in a queue with no quota;
# the policy file then gives it quota and the live loop admits all of it
# through the API server. `gpusched simulate` admits the same pods on the
# same Node objects. Defaults: 64 nodes, 256 single-GPU pods, 32 gangs of 8
# (512 pods); BENCH_QUICK=1: 16 nodes, 64 and 8.
# Writes bench/results/admissions_live_vs_simulator.json.
# Usage, from the repo root: bench/suites/admissions.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: bench/suites/admissions.sh BUILD_DIR}" && pwd)
root=$(pwd)
out="$root/bench/results/admissions_live_vs_simulator.json"
nodes=64 singles=256 gangs=32
[ "${BENCH_QUICK:-0}" = 1 ] && { nodes=16 singles=64 gangs=8; }

source bench/lib/e2e_bench.sh
e2e_prepare admissions "$build"
mkdir -p "$(dirname "$out")"
E2E_ADMIT_NODES="${E2E_ADMIT_NODES:-$nodes}" E2E_ADMIT_SINGLES="${E2E_ADMIT_SINGLES:-$singles}" \
  E2E_ADMIT_GANGS="${E2E_ADMIT_GANGS:-$gangs}" E2E_ADMIT_OUT="$out" \
  e2e_bench "$build" BenchmarkAdmissionsLiveVsSimulator 30m
