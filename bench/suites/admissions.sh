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

tests/e2e/prepare.sh "$build"
if [ -f "$build/e2e/skip" ]; then
  echo "admissions: cannot run: $(cat "$build/e2e/skip")" >&2
  exit 1
fi
set -a; source "$build/e2e/env"; set +a
mkdir -p "$(dirname "$out")"
cd tests/e2e/suite
E2E_ADMIT_NODES="${E2E_ADMIT_NODES:-$nodes}" E2E_ADMIT_SINGLES="${E2E_ADMIT_SINGLES:-$singles}" \
  E2E_ADMIT_GANGS="${E2E_ADMIT_GANGS:-$gangs}" E2E_ADMIT_OUT="$out" \
  "$build/e2e/e2e.test" -test.run '^$' \
  -test.bench '^BenchmarkAdmissionsLiveVsSimulator$' -test.benchtime 1x -test.v -test.timeout 30m
