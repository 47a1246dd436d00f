#!/usr/bin/env bash
# Builds the Kueue manager the end-to-end suite runs beside the control plane
# (package arena) from the release pinned in tests/e2e/kueue (pin.sh writes
# it), once, into a cache outside the clone, beside the upstream binaries:
#   ${GPUSCHED_E2E_CACHE:-~/.cache/gpusched-e2e}/kueue-<release>-<hash>/
#     bin/kueue   the manager (sigs.k8s.io/kueue/cmd/kueue)
#     config/     the release's kustomize tree: `kubectl kustomize
#                 config/default` renders its install (CRDs with their
#                 conversion webhooks, webhook configurations, RBAC, the
#                 manager's configuration), from which package arena takes
#                 what runs on loopback
#     BUILD       what was built, with which Go, and how long it took
# The manifests are copied out of the module download of the same release,
# so that the binary and the objects it serves always agree. The hash
# covers the pins (go.mod, go.sum), the Go version and this script, so it is
# rebuilt exactly when one of them changes; a build for earlier pins is
# removed. Prints the build directory on its last line. Everything comes
# through the Go module proxy, checked against the committed go.sum.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../go-env.sh"
command -v go >/dev/null || { echo "kueue/build.sh: go not found" >&2; exit 3; }
# The caller's flags (GOFLAGS=-p=1 on a shared machine) stay, after the proxy's.
caller_goflags="${GOFLAGS:-}"
use_module_proxy
export GOFLAGS="$GOFLAGS $caller_goflags"

release="$(cat "$here/RELEASE")"
key="$( (go version; cat "$0" "$here/../go-env.sh" "$here/go.mod" "$here/go.sum") |
  sha256sum | cut -c1-12)"
root="${GPUSCHED_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpusched-e2e}"
out="$root/kueue-$release-$key"

complete() {
  [[ -x "$out/bin/kueue" && -f "$out/config/default/kustomization.yaml" ]]
}
if complete; then echo "$out"; exit 0; fi

mkdir -p "$root"
exec 9>"$root/.lock"
flock 9   # one build at a time, this one or build-binaries.sh's
if complete; then echo "$out"; exit 0; fi
rm -rf "$out.tmp"; mkdir -p "$out.tmp/bin"

started=$SECONDS
echo "kueue/build.sh: building the Kueue $release manager into $out (cold: about 11 minutes and 9.5 CPU-minutes on 2 busy cores)" >&2
# Stamped as Kueue's Makefile stamps a release (its commit is not in the
# module download), with the release's own time so two builds are identical.
build_date="$(cd "$here" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "sigs.k8s.io/kueue")"
ldflags="-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$release"
ldflags+=" -X sigs.k8s.io/kueue/pkg/version.GitCommit=unknown"
ldflags+=" -X sigs.k8s.io/kueue/pkg/version.BuildDate=${build_date:-1970-01-01T00:00:00Z}"
# Static, as Kueue's release image builds it (CGO_ENABLED=0 in its Makefile).
(cd "$here" && CGO_ENABLED=0 go build -ldflags "$ldflags" -o "$out.tmp/bin/kueue" sigs.k8s.io/kueue/cmd/kueue)

module_dir="$(cd "$here" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
cp -r "$module_dir/config" "$out.tmp/config"
chmod -R u+w "$out.tmp/config"   # the module cache is read-only
echo "kueue $release built in $((SECONDS - started)) s with $(go version | cut -d' ' -f3)" > "$out.tmp/BUILD"
rm -rf "$out"; mv "$out.tmp" "$out"
# Builds for earlier pins are never used again.
find "$root" -mindepth 1 -maxdepth 1 -type d -name 'kueue-*' ! -path "$out" -exec rm -rf {} +
echo "kueue/build.sh: done in $((SECONDS - started)) s ($(du -sh "$out" | cut -f1))" >&2
echo "$out"
