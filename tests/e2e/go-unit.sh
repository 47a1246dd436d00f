#!/usr/bin/env bash
# The end-to-end suite's own unit tests: every package of tests/e2e/suite
# but the suite itself (whose tests start control planes and are ctest
# entries of their own), with go vet first. They need no control plane
# (the arena's scenarios, measures and Kueue configuration; the fake
# kubelet; the Prometheus text reader). Exits 77 (ctest: skipped) where
# prepare.sh found no suitable Go, as run-test.sh does.
set -euo pipefail
build="${1:?usage: go-unit.sh BUILD_DIR}"
if [[ -f "$build/e2e/skip" ]]; then
  echo "e2e: skipped: $(cat "$build/e2e/skip")"
  exit 77
fi
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/suite"
mapfile -t packages < <(go list ./... | grep -v '^gpusched.io/e2e/suite$')
go vet ./...
go test -count=1 "${packages[@]}"
