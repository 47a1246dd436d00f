#!/usr/bin/env bash
# Makes the end-to-end suite runnable: checks Go, builds the upstream
# components once (build-binaries.sh, cached outside the clone), and those
# of each older release the suite also runs (release-*/, build-release.sh),
# Kueue's manager for package arena (kueue/build.sh, cached beside them)
# and helm for the chart's tests (helm/build.sh, likewise), compiles the
# Go test binary and the benchmark driver into BUILD_DIR/e2e.
# BUILD_DIR/e2e/env is the main release's environment for run-test.sh, and
# BUILD_DIR/e2e/release-<minor>.env what an older release changes in it.
#
# Without a Go new enough for the pinned release it prints one line saying
# what is missing and leaves a skip marker, so ctest reports the e2e tests
# as skipped; with CI=true that is a failure instead.
#
# Usage: tests/e2e/prepare.sh BUILD_DIR
set -euo pipefail
shopt -s nullglob  # no release-*/ is no older release
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:?usage: prepare.sh BUILD_DIR}" && pwd)"
out="$build/e2e"
mkdir -p "$out"
rm -f "$out/skip" "$out/env" "$out"/release-*.env
source "$here/go-env.sh"

skip() {
  echo "e2e: skipped: $1" >&2
  if [[ "${CI:-}" == true ]]; then exit 1; fi
  echo "$1" > "$out/skip"
  exit 0
}

# The newest Go that any pinned module asks for.
needed="$(awk '$1 == "go" { print $2; nextfile }' "$here"/k8s/go.mod "$here"/etcd/go.mod \
  "$here"/release-*/*/go.mod "$here"/kueue/go.mod "$here"/helm/go.mod | sort -V | tail -1)"
command -v go >/dev/null || skip "Go $needed or newer is needed for the pinned Kubernetes releases and no 'go' is on the PATH or in /usr/local/go/bin"
have="$(go env GOVERSION)"; have="${have#go}"
if [[ "$(printf '%s\n%s\n' "$needed" "$have" | sort -V | head -1)" != "$needed" ]]; then
  skip "Go $needed or newer is needed for the pinned Kubernetes releases; this machine has Go $have"
fi

started=$SECONDS
bin_dir="$("$here/build-binaries.sh" | tail -1)"
for pins in "$here"/release-*/; do
  release_started=$SECONDS
  name="$(basename "$pins")"
  release_bin_dir="$("$here/build-release.sh" "$name" | tail -1)"
  # Its failures' logs apart from the main release's test of the same name.
  printf 'E2E_BIN_DIR=%s\nE2E_K8S_RELEASE=%s\nE2E_LOG_DIR=%s\n' "$release_bin_dir" \
    "$(cat "$pins/k8s/RELEASE")" "$build/e2e-logs/$name" > "$out/$name.env"
  echo "e2e: Kubernetes $(cat "$pins/k8s/RELEASE") binaries ready in $((SECONDS - release_started)) s ($release_bin_dir)" >&2
done
kueue_started=$SECONDS
kueue_dir="$("$here/kueue/build.sh" | tail -1)"
echo "e2e: Kueue $(cat "$here/kueue/RELEASE") ready in $((SECONDS - kueue_started)) s ($kueue_dir)" >&2
helm_started=$SECONDS
helm_dir="$("$here/helm/build.sh" | tail -1)"
echo "e2e: helm $(cat "$here/helm/RELEASE") ready in $((SECONDS - helm_started)) s ($helm_dir)" >&2
use_module_proxy
(cd "$here/suite" && go test -c -o "$out/e2e.test" . &&
  if [[ -d cmd/bench ]]; then go build -o "$out/e2e-bench" ./cmd/bench; fi)
{
  echo "E2E_BIN_DIR=$bin_dir"
  echo "E2E_K8S_RELEASE=$(cat "$here/k8s/RELEASE")"
  echo "GPUSCHED_REPO=$(cd "$here/../.." && pwd)"
  echo "GPUSCHED_BIN=$build/gpusched"
  # gpusched's side of the differential CEL test (tests/CMakeLists.txt).
  echo "GPUSCHED_CEL_VERDICTS=$build/tests/gpusched_cel_verdicts"
  echo "E2E_LOG_DIR=$build/e2e-logs"
  # Package arena's Kueue manager and its release's manifests.
  echo "E2E_KUEUE_DIR=$kueue_dir"
  # helm, which installs deploy/chart/gpusched in the chart's tests.
  echo "E2E_HELM_DIR=$helm_dir"
  # CI installs chromium (make deps): there the dashboard's tests must run,
  # not skip.
  if [[ "${CI:-}" == true ]]; then echo "E2E_REQUIRE_CHROMIUM=1"; fi
  # Likewise Kueue's manager, which needs a mount namespace (package arena).
  if [[ "${CI:-}" == true ]]; then echo "E2E_REQUIRE_ARENA=1"; fi
} > "$out/env"
echo "e2e: ready in $((SECONDS - started)) s (upstream binaries in $bin_dir)" >&2
