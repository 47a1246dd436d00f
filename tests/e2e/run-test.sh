#!/usr/bin/env bash
# Runs one Go end-to-end test (ctest calls this once per test, so each is
# its own ctest entry with its own control plane). Exits 77 (ctest: skipped)
# when prepare.sh found no suitable Go.
#
# Usage: tests/e2e/run-test.sh BUILD_DIR TestName
set -euo pipefail
build="${1:?usage: run-test.sh BUILD_DIR TestName}"
name="${2:?usage: run-test.sh BUILD_DIR TestName}"
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
cd "$here/suite"
exec "$build/e2e/e2e.test" -test.run "^${name}\$" -test.v -test.count=1 \
  -test.timeout 540s
