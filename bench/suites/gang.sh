#!/usr/bin/env bash
# Time from a gang's last member created to every member bound, through the
# real kube-scheduler on a loopback control plane with gpusched's webhook
# gate (tests/e2e/suite, BenchmarkGangTimeToBound): gangs of 8 and 64
# single-GPU members, 5 rounds each, on 16 generated DGX H100 nodes. Split
# into last created -> gates lifted (the admission loop's pass and its API
# writes) and -> bound (kube-scheduler and gpusched's bind). BENCH_QUICK=1:
# 2 rounds. Writes bench/results/gang_time_to_bound.json.
# Usage, from the repo root: bench/suites/gang.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: bench/suites/gang.sh BUILD_DIR}" && pwd)
root=$(pwd)
out="$root/bench/results/gang_time_to_bound.json"
rounds=${E2E_GANG_ROUNDS:-5}
[ "${BENCH_QUICK:-0}" = 1 ] && rounds=${E2E_GANG_ROUNDS:-2}

tests/e2e/prepare.sh "$build"
if [ -f "$build/e2e/skip" ]; then
  echo "gang: cannot run: $(cat "$build/e2e/skip")" >&2
  exit 1
fi
set -a; source "$build/e2e/env"; set +a
mkdir -p "$(dirname "$out")"
cd tests/e2e/suite
E2E_GANG_SIZES="${E2E_GANG_SIZES:-8,64}" E2E_GANG_ROUNDS="$rounds" \
  E2E_GANG_NODES="${E2E_GANG_NODES:-16}" E2E_GANG_OUT="$out" \
  "$build/e2e/e2e.test" -test.run '^$' \
  -test.bench '^BenchmarkGangTimeToBound$' -test.benchtime 1x -test.v -test.timeout 30m
