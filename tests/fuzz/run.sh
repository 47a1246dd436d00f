#!/usr/bin/env bash
# Runs the libFuzzer targets built in BUILD_DIR/fuzz, each for SECONDS,
# JOBS at a time, and reports per target the executions and the findings
# (crash-*, oom-*, timeout-*, leak-* files). Exits 1 when anything was found
# (a timeout only when a replay of its input times out again).
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS JOBS [TARGET...]
#
# FUZZ_SEED=N fixes libFuzzer's seed (CI uses 1), so a retry starts from the
# same mutations; runs still differ with corpus order and time. Unset, every
# run draws a new seed.
#
# A target fuzzes a scratch copy of its saved corpus (BUILD_DIR/fuzz-work/
# TARGET/corpus), so what it learns stays out of the source tree; inputs
# worth keeping are minimized and copied into tests/fuzz/corpus/TARGET by
# hand. Findings land in BUILD_DIR/fuzz-work/TARGET/, with the log.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "$1" && pwd)"
seconds="$2"
jobs="$3"
shift 3
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for bin in "$build"/fuzz/*_fuzz; do targets+=("$(basename "$bin")"); done
fi

# The dictionary of each target's input language.
dict_for() {
  case "$1" in
    extender_fuzz | k8s_json_fuzz | watch_stream_fuzz | admission_review_fuzz | \
      visibility_fuzz | dra_fuzz)
      echo json ;;
    gpu_topology_fuzz) echo topology ;;
    trace_csv_fuzz) echo csv ;;
    *) echo yaml ;;
  esac
}

run_one() {
  local target="$1" work="$build/fuzz-work/$1"
  rm -rf "$work/artifacts"
  mkdir -p "$work/corpus" "$work/artifacts"
  # -timeout and -rss_limit_mb make a runaway (a parser that never ends, or
  # allocates without bound) a finding rather than a hung or killed job.
  nice -n 10 "$build/fuzz/$target" "$work/corpus" "$here/corpus/$target" \
    -dict="$here/dict/$(dict_for "$target").dict" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
    >"$work/log" 2>&1 || true
}

for target in "${targets[@]}"; do
  while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "$target" &
done
wait || true

# A timeout that a replay of its input does not repeat was a stall of the
# machine (a CI VM paused for 10 s), not a parser that runs away: it is
# reported, with its input, and does not fail the run. Replays run alone,
# three times, under the same -timeout.
reproduces() {
  local target="$1" input="$2" i
  for i in 1 2 3; do
    "$build/fuzz/$target" -timeout=10 -rss_limit_mb=2048 "$input" \
      >/dev/null 2>&1 || return 0
  done
  return 1
}

# The finding's input, so a CI log alone lets one reproduce it.
show_input() {
  echo "  input ($(wc -c <"$1") bytes, base64):"
  base64 -w 76 "$1" | head -n 60 | sed 's/^/    /'
}

found=0
printf '%-20s %12s %8s %s\n' target executions corpus findings
for target in "${targets[@]}"; do
  work="$build/fuzz-work/$target"
  execs=$(grep -ho 'stat::number_of_executed_units: *[0-9]*' "$work/log" |
          grep -o '[0-9]*$' || echo '?')
  units=$(ls "$work/corpus" | wc -l)
  findings=$(cd "$work/artifacts" &&
             ls | grep -E '^(crash|oom|timeout|leak)-' || true)
  if [ -n "$findings" ]; then
    printf '%-20s %12s %8s %s\n' "$target" "$execs" "$units" \
      "$(echo $findings) (log: $work/log)"
    grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$work/log" || true
    for finding in $findings; do
      show_input "$work/artifacts/$finding"
      if [[ "$finding" == timeout-* ]] &&
         ! reproduces "$target" "$work/artifacts/$finding"; then
        echo "  $finding: three replays finished within the timeout; not counted"
      else
        found=1
      fi
    done
  else
    printf '%-20s %12s %8s none\n' "$target" "$execs" "$units"
  fi
done
exit $found
