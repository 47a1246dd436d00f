#!/usr/bin/env bash
# The one command behind `make bench`: every benchmark at full size, then a
# markdown summary of every result against its target.
#
#   bench/run_all.sh [BUILD_DIR]        (default: build; run from anywhere)
#
# 1. every Google Benchmark binary BUILD_DIR/bench/*_bench at full size (its
#    /5000/ entries) -> bench/results/<name>.json;
# 2. every bench/suites/*.sh, run from the repository root with BUILD_DIR as
#    $1; each writes only its own bench/results/<name>.* files;
# 3. bench/summarize.py -> bench/results/SUMMARY.md.
# A failing step is reported and the others still run; the exit status is
# non-zero if any failed. Set BENCH_QUICK=1 for a short pass (suites read it).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
cd "$root"
mkdir -p bench/results
failed=()

for bin in "$build"/bench/*_bench; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  echo "== $name"
  # A binary without a 5,000-node entry (forecast_honesty_bench replays a
  # trace) is its suite's to run; an empty result file would hide that.
  if ! "$bin" --benchmark_list_tests --benchmark_filter=/5000/ 2>/dev/null |
      grep -q .; then
    echo "   no /5000/ entry: left to bench/suites"
    continue
  fi
  if ! "$bin" --benchmark_filter=/5000/ --benchmark_min_time=2 \
      --benchmark_out="bench/results/$name.json" --benchmark_out_format=json \
      2>/dev/null; then
    failed+=("$name")
  fi
done

for suite in bench/suites/*.sh; do
  [ -f "$suite" ] || continue
  echo "== $(basename "$suite")"
  bash "$suite" "$build" || failed+=("$(basename "$suite")")
done

python3 bench/summarize.py bench/results || failed+=(summarize.py)
echo "== wrote bench/results/SUMMARY.md"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
