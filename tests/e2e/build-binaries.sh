#!/usr/bin/env bash
# Builds the upstream components the end-to-end suite runs (etcd,
# kube-apiserver, kube-scheduler, kube-controller-manager, kubectl) from the
# Go modules pinned in tests/e2e/k8s and tests/e2e/etcd, once, into a cache
# outside the clone:
#   ${GPUSCHED_E2E_CACHE:-~/.cache/gpusched-e2e}/k8s-<release>-etcd-<release>-<hash>/bin
# The hash covers the pins (go.mod, go.sum), the Go version and this script,
# so the binaries are rebuilt exactly when one of them changes. Prints the
# bin directory on its last line. Everything is fetched through the Go module
# proxy (never straight from a VCS), checked against the committed go.sum.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/go-env.sh"
command -v go >/dev/null || { echo "build-binaries: go not found" >&2; exit 3; }
use_module_proxy

k8s_release="$(cat "$here/k8s/RELEASE")"
etcd_release="$(cat "$here/etcd/RELEASE")"
key="$( (go version; cat "$0" "$here/go-env.sh" "$here"/k8s/go.mod "$here"/k8s/go.sum \
          "$here"/etcd/go.mod "$here"/etcd/go.sum) | sha256sum | cut -c1-12)"
root="${GPUSCHED_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpusched-e2e}"
out="$root/k8s-$k8s_release-etcd-$etcd_release-$key"
bins=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl)

complete() { for b in "${bins[@]}"; do [[ -x "$out/bin/$b" ]] || return 1; done; }
if complete; then echo "$out/bin"; exit 0; fi

mkdir -p "$root"
exec 9>"$root/.lock"
flock 9   # parallel test runs wait for one build instead of racing it
if complete; then echo "$out/bin"; exit 0; fi
rm -rf "$out.tmp"; mkdir -p "$out.tmp/bin"

# Version stamp as upstream's hack/lib/version.sh sets it, so that
# `kubectl version` and the apiserver's /version report the release.
[[ "$k8s_release" =~ ^v([0-9]+)\.([0-9]+)\. ]]
major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
# The release's own time, so that two builds of the same pins are identical.
build_date="$(cd "$here/k8s" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "k8s.io/kubernetes@$k8s_release")"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_release -X $pkg.gitMajor=$major"
  ldflags+=" -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=archive"
  ldflags+=" -X $pkg.buildDate=${build_date:-1970-01-01T00:00:00Z}"
done

started=$SECONDS
echo "build-binaries: building kube-apiserver, kube-scheduler, kube-controller-manager, kubectl $k8s_release and etcd $etcd_release into $out (cold: about 6 minutes on 2 cores)" >&2
(cd "$here/k8s" && go build -ldflags "$ldflags" -o "$out.tmp/bin/" \
   k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler \
   k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl)
(cd "$here/etcd" && go build -ldflags "-s -w" -o "$out.tmp/bin/etcd" go.etcd.io/etcd/server/v3)
echo "$k8s_release $etcd_release built in $((SECONDS - started)) s" > "$out.tmp/BUILD"
rm -rf "$out"; mv "$out.tmp" "$out"
# Builds for earlier pins are never used again.
find "$root" -mindepth 1 -maxdepth 1 -type d -name 'k8s-*' ! -path "$out" -exec rm -rf {} +
echo "build-binaries: done in $((SECONDS - started)) s" >&2
echo "$out/bin"
