#!/usr/bin/env bash
# Builds the helm CLI the end-to-end suite installs deploy/chart/gpusched
# with (tests/e2e/suite/helm_*_test.go) from the release pinned in
# tests/e2e/helm (pin.sh writes it), once, into a cache outside the clone,
# beside the upstream binaries and Kueue's manager:
#   ${GPUSCHED_E2E_CACHE:-~/.cache/gpusched-e2e}/helm-<release>-<hash>/
#     bin/helm   helm.sh/helm/v3/cmd/helm
#     BUILD      what was built, with which Go, and how long it took
# The hash covers the pins (go.mod, go.sum), the Go version and this
# script, so it is rebuilt exactly when one of them changes; a build for
# earlier pins is removed. Prints the build directory on its last line.
# Everything comes through the Go module proxy, checked against the
# committed go.sum.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../go-env.sh"
command -v go >/dev/null || { echo "helm/build.sh: go not found" >&2; exit 3; }
# The caller's flags (GOFLAGS=-p=1 on a shared machine) stay, after the proxy's.
caller_goflags="${GOFLAGS:-}"
use_module_proxy
export GOFLAGS="$GOFLAGS $caller_goflags"

release="$(cat "$here/RELEASE")"
key="$( (go version; cat "$0" "$here/../go-env.sh" "$here/go.mod" "$here/go.sum") |
  sha256sum | cut -c1-12)"
root="${GPUSCHED_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpusched-e2e}"
out="$root/helm-$release-$key"

complete() { [[ -x "$out/bin/helm" ]]; }
if complete; then echo "$out"; exit 0; fi

mkdir -p "$root"
exec 9>"$root/.lock"
flock 9   # one build at a time, this one or build-binaries.sh's or Kueue's
if complete; then echo "$out"; exit 0; fi
rm -rf "$out.tmp"; mkdir -p "$out.tmp/bin"

started=$SECONDS
echo "helm/build.sh: building helm $release into $out (cold: about 6 minutes and 4 CPU-minutes on 2 busy cores, 410 MB of modules)" >&2
# Stamped as Helm's Makefile stamps a release: its version, and the
# Kubernetes version its client-go speaks (client-go v0.X.Y is Kubernetes
# 1.X), which `helm template` and `helm lint` assume when no cluster is
# asked (.Capabilities.KubeVersion); without it they would assume 1.20.
client_go="$(cd "$here" && go list -m -f '{{.Version}}' k8s.io/client-go)"
k8s_minor="$(cut -d. -f2 <<<"$client_go")"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$release"
ldflags+=" -X helm.sh/helm/v3/internal/version.metadata="
ldflags+=" -X helm.sh/helm/v3/internal/version.gitCommit=unknown"
ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in pkg/lint/rules pkg/chartutil; do
  ldflags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$k8s_minor"
done
# Static, as Helm's release builds it (CGO_ENABLED=0 in its Makefile).
(cd "$here" && CGO_ENABLED=0 go build -ldflags "$ldflags" -o "$out.tmp/bin/helm" helm.sh/helm/v3/cmd/helm)

echo "helm $release (client-go $client_go) built in $((SECONDS - started)) s with $(go version | cut -d' ' -f3)" > "$out.tmp/BUILD"
rm -rf "$out"; mv "$out.tmp" "$out"
# Builds for earlier pins are never used again.
find "$root" -mindepth 1 -maxdepth 1 -type d -name 'helm-*' ! -path "$out" -exec rm -rf {} +
echo "helm/build.sh: done in $((SECONDS - started)) s ($(du -sh "$out" | cut -f1))" >&2
echo "$out"
