# Sourced by build-binaries.sh and prepare.sh: Go from the PATH or
# /usr/local/go, modules through the Go module proxy only (a ",direct"
# fallback is dropped so nothing is cloned from a VCS), checked against the
# committed go.sum, builds reproducible.
export PATH="$PATH:/usr/local/go/bin"

use_module_proxy() {
  local proxy
  proxy="$(go env GOPROXY)"
  proxy="${proxy%,direct}"; proxy="${proxy%|direct}"
  [[ -n "$proxy" && "$proxy" != direct && "$proxy" != off ]] || proxy=https://proxy.golang.org
  export GOPROXY="$proxy" GOFLAGS="-mod=readonly -trimpath -buildvcs=false"
}
