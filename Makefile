# Thin wrapper over CMake so that the README's two commands work on a fresh
# Debian 12 machine. Everything real lives in CMakeLists.txt.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian 12 packages the build needs (compiler and CMake included),
# prometheus: the end-to-end test of the Grafana dashboard's queries
# (TestQueueMetricsFeedTheGrafanaDashboard) scrapes gpusched with it, and
# chromium: the web dashboard's end-to-end test and render benchmark run it
# headless.
DEPS := g++ cmake make libboost1.81-dev nlohmann-json3-dev libyaml-cpp-dev \
        libspdlog-dev libabsl-dev libsimdjson-dev libssl-dev libgtest-dev \
        libgmock-dev libbenchmark-dev openssl curl ccache prometheus chromium

# Only `make fuzz` needs these (clang's libFuzzer and sanitizer runtimes).
FUZZ_DEPS := clang-14 libclang-rt-14-dev
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2
FUZZ_TARGETS ?=
# Go for the end-to-end components (tests/e2e): the PATH's, else the
# toolchain's usual place.
GO ?= $(shell command -v go || echo /usr/local/go/bin/go)

.PHONY: deps configure build serve test e2e e2e-prepare arena bench clean fuzz fuzz-deps \
        test-asan test-tsan format format-deps format-check install uninstall

# Installs only what is missing, so a second run costs nothing.
deps:
	@missing=$$(for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing: $$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# CMAKE_ARGS: more -D options for $(BUILD_DIR) (CI's build leaves out the
# tests that it runs under the sanitizers).
configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job: the extender on the embedded demo cluster.
serve: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target gpusched
	$(BUILD_DIR)/gpusched serve $(ARGS)

# gpusched into $(PREFIX)/bin, and beside it the symlink kubectl-gpusched
# by which kubectl finds the plugin (`kubectl gpusched`, README). Builds
# the executable alone; sudo only when the directory is not writable.
# STRIP= keeps the debug symbols (about 250 MB of the 255).
PREFIX ?= /usr/local
BINDIR = $(DESTDIR)$(PREFIX)/bin
STRIP ?= -s

install: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target gpusched
	@dir="$(BINDIR)"; sudo=; \
	{ mkdir -p "$$dir" 2>/dev/null && [ -w "$$dir" ]; } || sudo="$(SUDO)"; \
	$$sudo install -d "$$dir" && \
	$$sudo install -m 0755 $(STRIP) $(BUILD_DIR)/gpusched "$$dir/gpusched" && \
	$$sudo ln -sf gpusched "$$dir/kubectl-gpusched" && \
	echo "installed $$dir/gpusched and $$dir/kubectl-gpusched; try: kubectl gpusched --help"

uninstall:
	@dir="$(BINDIR)"; sudo=; [ -w "$$dir" ] || sudo="$(SUDO)"; \
	$$sudo rm -f "$$dir/gpusched" "$$dir/kubectl-gpusched"

# The whole test suite, the end-to-end suite on a real control plane
# included (its upstream binaries are built once, on first use, into
# ~/.cache/gpusched-e2e; without Go it says so in one line and skips it).
test: build e2e-prepare
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

# The end-to-end suite alone.
e2e: build e2e-prepare
	cd $(BUILD_DIR) && ctest --output-on-failure -L e2e --timeout 600

e2e-prepare: configure
	tests/e2e/prepare.sh $(BUILD_DIR)

# gpusched beside Kueue v0.17.0 on the same pods (tests/e2e/suite/arena):
# every scenario under tests/e2e/arena/scenarios but the smoke one (which
# `make test` runs), ARENA_ROUNDS rounds with the arms interleaved, each on
# a fresh Kubernetes 1.35 control plane; writes bench/results/arena_*.json
# and their sections of bench/results/SUMMARY.md. ARENA_SCENARIOS="baseline
# reclaim" picks some. About 45 minutes on 2 cores.
ARENA_ROUNDS ?= 3
ARENA_SCENARIOS ?= $(filter-out smoke,$(basename $(notdir $(wildcard tests/e2e/arena/scenarios/*.yaml))))
arena: build e2e-prepare
	@for s in $(ARENA_SCENARIOS); do \
	  (cd tests/e2e/suite && $(GO) run ./cmd/arena -build $(abspath $(BUILD_DIR)) \
	    -scenario $$s -rounds $(ARENA_ROUNDS)) || exit 1; \
	done
	python3 bench/summarize.py bench/results

# Benchmarks on demand (CI only builds them and runs each once, small).
bench: build
	bench/run_all.sh $(BUILD_DIR)

# The libFuzzer targets (tests/fuzz), each run FUZZ_SECONDS, FUZZ_JOBS at a
# time, after replaying the saved corpora (ctest -L fuzz); prints executions
# and findings per target and fails on a finding. FUZZ_TARGETS="policy_fuzz
# ..." picks some.
fuzz-deps: deps
	@$(MAKE) --no-print-directory deps DEPS="$(FUZZ_DEPS)"

fuzz: fuzz-deps
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCHED_FUZZ=ON \
	  -DGPUSCHED_BUILD_TESTS=OFF -DGPUSCHED_BUILD_BENCH=OFF >/dev/null
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzz_targets
	cd $(FUZZ_BUILD_DIR) && ctest --output-on-failure -L fuzz -j $(FUZZ_JOBS)
	tests/fuzz/run.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

# --- Formatting -----------------------------------------------------------
# Every C++ file git tracks, in .clang-format's style, by Debian 12's
# clang-format-14 (pinned: another version formats some constructs
# differently). `format` rewrites them; `format-check` (CI) lists the
# misformatted files and fails if there is one.
FORMAT_DEPS := clang-format-14
CXX_SOURCES = $(shell git ls-files '*.cc' '*.h')

format-deps:
	@$(MAKE) --no-print-directory deps DEPS="$(FORMAT_DEPS)"

format: format-deps
	clang-format-14 -i $(CXX_SOURCES)

format-check: format-deps
	@bad=$$(for f in $(CXX_SOURCES); do \
	  clang-format-14 --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; \
	done); \
	if [ -n "$$bad" ]; then \
	  echo "Not formatted as .clang-format says (run: make format):"; \
	  echo "$$bad" | sed 's/^/  /'; exit 1; \
	fi; echo "format-check: $(words $(CXX_SOURCES)) files formatted"

# --- Sanitizer runs (issue F §4) ---------------------------------------------
# Each in its own build directory, Debug (asserts and invariant checks on)
# at -O0 -g1 (CMakeLists.txt says why), without the benchmarks, and without the end-to-end and benchmark
# entries: those drive Go binaries and the real control plane, which the
# sanitizers do not see into.
ASAN_DIR ?= build-asan
TSAN_DIR ?= build-tsan
SAN_SUPP := $(CURDIR)/tests/sanitizers
# g++, not clang-14: clang 14 cannot compile the HTTP server's and client's
# coroutines under ASan ("Cannot represent a difference across sections").
SAN_CONFIGURE = cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=Debug \
  -DGPUSCHED_SANITIZE=$(2) -DGPUSCHED_BUILD_BENCH=OFF >/dev/null
# ASan + UBSan: every unit, integration and scenario test (the scenario
# tests run the instrumented gpusched binary).
# gpusched_unit_tests (tests/CMakeLists.txt) is every test folder's binary.
ASAN_TARGETS := gpusched_unit_tests
# TSan: the binaries whose tests run threads, and of them only those tests.
TSAN_TARGETS := gpusched gpusched_scheduler_tests gpusched_http_tests \
  gpusched_integration_tests gpusched_kube_tests gpusched_controller_tests
TSAN_TESTS := $(shell grep -v '^\#' tests/sanitizers/tsan-tests.txt | \
  paste -sd'|')

test-asan: deps
	$(call SAN_CONFIGURE,$(ASAN_DIR),address)
	cmake --build $(ASAN_DIR) -j $(JOBS) --target $(ASAN_TARGETS)
	cd $(ASAN_DIR) && \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  LSAN_OPTIONS=suppressions=$(SAN_SUPP)/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 900 -LE e2e \
	    -E '^bench_smoke'

test-tsan: deps
	$(call SAN_CONFIGURE,$(TSAN_DIR),thread)
	cmake --build $(TSAN_DIR) -j $(JOBS) --target $(TSAN_TARGETS)
	cd $(TSAN_DIR) && \
	  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(SAN_SUPP)/tsan.supp \
	  ctest --output-on-failure -j $(JOBS) --timeout 900 -LE e2e \
	    -R '$(TSAN_TESTS)'
# ----------------------------------------------------------------------------

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR)

# --- The container image without a Docker daemon -------------------------------
# deploy/image_check.py runs deploy/Dockerfile's stages in fresh Debian 12
# roots made by Debian's mmdebstrap (as root: chroot and mounts), then in the
# runtime root the ldd check, `gpusched --help` and the image's CMD answering
# /readyz. The host's ccache and the downloaded .debs
# (~/.cache/gpusched-image-check) make a second run cheap: about 2 min,
# against about 50 CPU-minutes cold (the whole Release build and its
# tests; an hour on the shared 2-core machine).
# IMAGE_CHECK_ARGS: e.g. --build-arg BUILD_TESTS=OFF, --keep DIR.
.PHONY: image-check
image-check:
	@$(MAKE) --no-print-directory deps DEPS="mmdebstrap"
	$(SUDO) deploy/image_check.py $(IMAGE_CHECK_ARGS)

# --- Chaos runs (issue 21) ---------------------------------------------------
# The end-to-end chaos test (tests/e2e/suite/chaos_test.go) once per seed,
# CHAOS_FIRST_SEED .. CHAOS_FIRST_SEED+CHAOS_SEEDS-1, one run at a time (each
# wants both cores). Each run's output goes to $(BUILD_DIR)/chaos/seed-<n>.log
# (a failed run's component logs to $(BUILD_DIR)/e2e-logs/). Ends with
# `chaos: N runs, V with violations` and the failing seeds; fails if V > 0.
CHAOS_SEEDS ?= 20
CHAOS_FIRST_SEED ?= 1
CHAOS_DIR = $(abspath $(BUILD_DIR))/chaos

.PHONY: chaos
chaos: e2e-prepare
	cmake --build $(BUILD_DIR) -j $(JOBS) --target gpusched
	@mkdir -p $(CHAOS_DIR); failed=""; \
	last=$$(($(CHAOS_FIRST_SEED) + $(CHAOS_SEEDS) - 1)); \
	for seed in $$(seq $(CHAOS_FIRST_SEED) $$last); do \
	  log=$(CHAOS_DIR)/seed-$$seed.log; start=$$(date +%s); \
	  if CHAOS_SEED=$$seed tests/e2e/run-test.sh $(abspath $(BUILD_DIR)) \
	       TestChaosQueueSurvivesKills >$$log 2>&1; then result=ok; \
	  else result="FAILED, $$(grep -c 'violation: ' $$log) violations ($$log)"; \
	       failed="$$failed $$seed"; fi; \
	  echo "chaos: seed $$seed: $$result in $$(($$(date +%s) - start)) s"; \
	done; \
	count=$$(echo $$failed | wc -w); \
	echo "chaos: $(CHAOS_SEEDS) runs, $$count with violations$${failed:+ (seeds:$$failed)}"; \
	[ $$count -eq 0 ]
