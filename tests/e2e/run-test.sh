#!/usr/bin/env bash
# Runs one Go end-to-end test (ctest calls this once per test, so each is
# its own ctest entry with its own control plane), or one Go benchmark once
# at its small default size, on the main release's binaries or, given
# RELEASE (release-1.35: a directory tests/e2e/release-*), on that older
# release's. Exits 77 (ctest: skipped) when prepare.sh found no suitable Go.
#
# Usage: tests/e2e/run-test.sh BUILD_DIR TestName|BenchmarkName [RELEASE]
set -euo pipefail
usage="usage: run-test.sh BUILD_DIR TestName [release-MAJOR.MINOR]"
build="${1:?$usage}"
name="${2:?$usage}"
release="${3:-}"
here="$(cd "$(dirname "$0")" && pwd)"
if [[ -f "$build/e2e/skip" ]]; then
  echo "e2e: skipped: $(cat "$build/e2e/skip")"
  exit 77
fi
if [[ ! -f "$build/e2e/env" ]]; then
  # A plain `ctest` (an image build, say) without `make test` or `make e2e`.
  echo "e2e: not prepared: run 'make e2e' or tests/e2e/prepare.sh $build first"
  [[ "${CI:-}" == true ]] && exit 1
  exit 77
fi
set -a; source "$build/e2e/env"; set +a
if [[ -n "$release" ]]; then
  if [[ ! -f "$build/e2e/$release.env" ]]; then
    echo "e2e: $release not prepared: no tests/e2e/$release, or prepare.sh ran before it was added (run tests/e2e/prepare.sh $build)"
    exit 1
  fi
  set -a; source "$build/e2e/$release.env"; set +a
fi
cd "$here/suite"
if [[ "$name" == Benchmark* ]]; then
  # Once, at the benchmark's own small default size: a smoke run that keeps
  # it working (bench/suites runs it at full size).
  exec "$build/e2e/e2e.test" -test.run '^$' -test.bench "^${name}\$" \
    -test.benchtime 1x -test.v -test.timeout 540s
fi
# A name the binary lacks (built before the test was added) would run no
# test and exit 0: a pass that tested nothing. It must say it ran the test.
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
set +e
"$build/e2e/e2e.test" -test.run "^${name}\$" -test.v -test.count=1 \
  -test.timeout 540s 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
if [[ $rc -eq 0 ]] && ! grep -qE "^--- (PASS|SKIP): ${name} " "$out"; then
  echo "e2e: $build/e2e/e2e.test has no test $name: rebuild it (make e2e-prepare)"
  exit 1
fi
exit "$rc"
