#!/usr/bin/env bash
# Builds the upstream components of an older Kubernetes release that the
# suite also runs: tests/e2e/<release-dir> holds its k8s and etcd pins
# (k8s/pin.sh and etcd/pin.sh with a DIR write them). Prints the bin
# directory on its last line:
#   <cache>/<release-dir>/k8s-<release>-etcd-<release>-<hash>/bin
#
# build-binaries.sh does the build, unchanged: it reads its pins from beside
# itself and hashes its own text into the cache key, so a scratch copy of it
# (and of go-env.sh) beside a copy of these pins builds and caches them
# exactly as it does the main pins, while the main pins' key, and with it
# every machine's cached build of them, stays as it is. Each release gets
# its own subdirectory of the cache, so that build-binaries.sh's removal of
# "builds for earlier pins" (every other k8s-* beside its own) never takes
# another release's build; the subdirectory of a release no longer pinned
# here is removed.
#
# Usage: tests/e2e/build-release.sh release-1.35
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name="${1:?usage: build-release.sh release-MAJOR.MINOR}"
pins="$here/$name"
if [[ ! "$name" =~ ^release-[0-9]+\.[0-9]+$ || ! -f "$pins/k8s/go.mod" || ! -f "$pins/etcd/go.mod" ]]; then
  echo "build-release: $name: want a directory tests/e2e/release-MAJOR.MINOR with k8s/ and etcd/ pins" >&2
  exit 2
fi
# The same default as build-binaries.sh's.
root="${GPUSCHED_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpusched-e2e}"
for cached in "$root"/release-*; do
  if [[ -d "$cached" && ! -d "$here/$(basename "$cached")" ]]; then rm -rf "$cached"; fi
done

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp "$here/build-binaries.sh" "$here/go-env.sh" "$scratch/"
for part in k8s etcd; do
  mkdir "$scratch/$part"
  cp "$pins/$part/go.mod" "$pins/$part/go.sum" "$pins/$part/RELEASE" "$scratch/$part/"
done
GPUSCHED_E2E_CACHE="$root/$name" bash "$scratch/build-binaries.sh"
