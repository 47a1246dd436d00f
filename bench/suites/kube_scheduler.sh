#!/usr/bin/env bash
# Pods bound per second through the real kube-scheduler on a loopback
# control plane (tests/e2e/suite, BenchmarkKubeSchedulerThroughput): 2,000
# single-GPU pods on 1,000 and on 5,000 generated DGX H100 nodes, by
# kube-scheduler alone (arm a) and with gpusched as its extender for filter,
# prioritize, preempt and bind (arm b). BENCH_QUICK=1: 500 pods on 250 and
# 1,000 nodes. Writes bench/results/kube_scheduler.json.
#
# Every component runs on this machine and the result is CPU-bound on a
# small one: run it on an otherwise idle machine (the load average at the
# start is recorded).
# Usage, from the repo root: bench/suites/kube_scheduler.sh BUILD_DIR
# Each node count runs the three arms E2E_BENCH_ROUNDS times (3); the
# verdict is on the median ratio, since one round moves by a tenth or more.
# Env: E2E_BENCH_NODES, E2E_BENCH_PODS override the sizes;
# E2E_BENCH_GPUSCHED_THREADS sets `gpusched serve --threads`.
set -euo pipefail
build=$(cd "${1:?usage: bench/suites/kube_scheduler.sh BUILD_DIR}" && pwd)
root=$(pwd)
out="$root/bench/results/kube_scheduler.json"
nodes=${E2E_BENCH_NODES:-1000,5000}
pods=${E2E_BENCH_PODS:-2000}
rounds=${E2E_BENCH_ROUNDS:-3}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  nodes=${E2E_BENCH_NODES:-250,1000}
  pods=${E2E_BENCH_PODS:-500}
fi

source bench/lib/e2e_bench.sh
e2e_prepare kube_scheduler "$build"

read -r load1 _ < /proc/loadavg
echo "kube_scheduler: $pods pods on $nodes nodes, $rounds rounds; load average $load1 at start" >&2

mkdir -p "$(dirname "$out")"
E2E_BENCH_NODES="$nodes" E2E_BENCH_PODS="$pods" E2E_BENCH_ROUNDS="$rounds" \
  E2E_BENCH_OUT="$out" \
  e2e_bench "$build" BenchmarkKubeSchedulerThroughput 90m
