#!/usr/bin/env bash
# Counts the product files whose code runs on gpusched's two data paths, as
# docs/architecture.md reports them: every file under api/, scheduler/,
# queueing/ and policies/ with a function (inline ones in headers included)
# that callgrind saw run.
#
#   bench/path_files.sh [BUILD_DIR] [GPUSCHED_BIN]
#
# 1. /filter: `gpusched serve` on the embedded demo cluster, instrumentation
#    on for one 2-GPU pod's request on a new connection (after a first
#    request for another pod).
# 2. A pod watch event to its admission PATCH: the e2e control plane
#    (BUILD_DIR/e2e/env from tests/e2e/prepare.sh), gpusched under
#    callgrind, TestWatchEventToPatchUnderCallgrind.
# GPUSCHED_BIN (default BUILD_DIR/gpusched) lets an older build be counted
# the same way. Needs valgrind (Debian's package). Prints the files and the
# counts; writes nothing in the tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
bin=${2:-$build/gpusched}
work=$(mktemp -d)
trap 'pkill -f "valgrind.*$work" 2>/dev/null || true; [ -n "${KEEP:-}" ] && cp "$work"/*.txt "$KEEP"/ ; rm -rf "$work"' EXIT

product_files() {  # callgrind output -> the product files that ran
  callgrind_annotate --inclusive=no --threshold=100 "$1" 2>/dev/null |
    grep -oE "(\.\./\.\./|/[^ :]*/)?(api|scheduler|queueing|policies)/[a-z_/0-9]+\.(cc|h)" |
    sed -E 's#^.*/((api|scheduler|queueing|policies)/)#\1#' | sort -u
}

report() {  # name, file list
  echo "== $1: $(wc -l < "$2") files, $(grep -c '\.cc$' "$2") of them .cc"
  cut -d/ -f1 "$2" | sort | uniq -c | sed 's/^/   /'
  sed 's/^/   /' "$2"
}

filter_path() {
  local port=18888 out="$work/filter.out"
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    "$bin" serve --listen="127.0.0.1:$port" > "$work/serve.log" 2>&1 &
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/v1/nodes" > /dev/null && break
    sleep 1
  done
  local nodes='"a100-mig-0","a100-mig-1","a100-mig-2","dgx-h100-0","dgx-h100-1","dgx-h100-2","dgx-h100-3","l4-0","l4-1","l4-2","t4-0","t4-1"'
  request() {  # name, uid, gpus
    curl -s -X POST "http://127.0.0.1:$port/filter" -H 'Content-Type: application/json' \
      -d "{\"Pod\":{\"metadata\":{\"name\":\"$1\",\"namespace\":\"team-a\",\"uid\":\"$2\"},\"spec\":{\"containers\":[{\"name\":\"main\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"$3\"}}}]}},\"NodeNames\":[$nodes]}" > /dev/null
  }
  request train-0 uid-0 4
  callgrind_control -i on > /dev/null
  sleep 2
  request train-1 uid-1 2
  sleep 1
  callgrind_control -i off > /dev/null
  callgrind_control -d > /dev/null
  sleep 2
  kill %1 2> /dev/null || true
  wait || true
  product_files "$(ls -S "$out".* | head -1)" > "$work/filter.txt"
  report "/filter request" "$work/filter.txt"
}

watch_path() {
  set -a
  . "$build/e2e/env"
  set +a
  cat > "$work/gpusched" <<WRAP
#!/bin/sh
exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$work/watch.%p.out $bin "\$@"
WRAP
  chmod +x "$work/gpusched"
  (cd "$root/tests/e2e/suite" &&
    E2E_PATH_FILES=1 GPUSCHED_BIN="$work/gpusched" "$build/e2e/e2e.test" \
      -test.run '^TestWatchEventToPatchUnderCallgrind$' > "$work/watch.log" 2>&1) ||
    { cat "$work/watch.log"; exit 1; }
  product_files "$(ls -S "$work"/watch.*.out.* | head -1)" > "$work/watch.txt"
  report "pod watch event -> admission PATCH" "$work/watch.txt"
}

filter_path
watch_path
