#!/usr/bin/env bash
# Makes the end-to-end suite runnable: checks Go, builds the upstream
# components once (build-binaries.sh, cached outside the clone), compiles
# the Go test binary and the benchmark driver into BUILD_DIR/e2e.
#
# Without a Go new enough for the pinned release it prints one line saying
# what is missing and leaves a skip marker, so ctest reports the e2e tests
# as skipped; with CI=true that is a failure instead.
#
# Usage: tests/e2e/prepare.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:?usage: prepare.sh BUILD_DIR}" && pwd)"
out="$build/e2e"
mkdir -p "$out"
rm -f "$out/skip" "$out/env"
source "$here/go-env.sh"

skip() {
  echo "e2e: skipped: $1" >&2
  if [[ "${CI:-}" == true ]]; then exit 1; fi
  echo "$1" > "$out/skip"
  exit 0
}

needed="$(awk '$1 == "go" { print $2; exit }' "$here/k8s/go.mod")"
command -v go >/dev/null || skip "Go $needed or newer is needed for the pinned Kubernetes release and no 'go' is on the PATH or in /usr/local/go/bin"
have="$(go env GOVERSION)"; have="${have#go}"
if [[ "$(printf '%s\n%s\n' "$needed" "$have" | sort -V | head -1)" != "$needed" ]]; then
  skip "Go $needed or newer is needed for the pinned Kubernetes release; this machine has Go $have"
fi

started=$SECONDS
bin_dir="$("$here/build-binaries.sh" | tail -1)"
use_module_proxy
(cd "$here/suite" && go test -c -o "$out/e2e.test" . &&
  if [[ -d cmd/bench ]]; then go build -o "$out/e2e-bench" ./cmd/bench; fi)
{
  echo "E2E_BIN_DIR=$bin_dir"
  echo "GPUSCHED_REPO=$(cd "$here/../.." && pwd)"
  echo "GPUSCHED_BIN=$build/gpusched"
  # gpusched's side of the differential CEL test (tests/CMakeLists.txt).
  echo "GPUSCHED_CEL_VERDICTS=$build/tests/gpusched_cel_verdicts"
  echo "E2E_LOG_DIR=$build/e2e-logs"
  # CI installs chromium (make deps): there the dashboard's tests must run,
  # not skip.
  if [[ "${CI:-}" == true ]]; then echo "E2E_REQUIRE_CHROMIUM=1"; fi
} > "$out/env"
echo "e2e: ready in $((SECONDS - started)) s (upstream binaries in $bin_dir)" >&2
