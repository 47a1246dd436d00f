# Sourced by the bench/suites that run a Go benchmark of the end-to-end
# suite (tests/e2e/suite), from the repository root.
#
# e2e_prepare NAME BUILD_DIR: builds BUILD_DIR's e2e binaries
# (tests/e2e/prepare.sh) and exports their environment; exits 1 naming why
# when the suite cannot run here (no Go new enough).
e2e_prepare() {
  tests/e2e/prepare.sh "$2"
  if [ -f "$2/e2e/skip" ]; then
    echo "$1: cannot run: $(cat "$2/e2e/skip")" >&2
    exit 1
  fi
  set -a
  # shellcheck disable=SC1091
  source "$2/e2e/env"
  set +a
}

# e2e_bench BUILD_DIR BENCHMARK TIMEOUT: runs the benchmark once (its size
# and result file come from the E2E_* variables the caller exports).
e2e_bench() {
  (cd tests/e2e/suite && "$1/e2e/e2e.test" -test.run '^$' \
    -test.bench "^$2\$" -test.benchtime 1x -test.v -test.timeout "$3")
}
