# Thin wrapper over CMake so that the README's two commands work on a fresh
# Debian 12 machine. Everything real lives in CMakeLists.txt.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian 12 packages the build needs (compiler and CMake included).
DEPS := g++ cmake make libboost1.81-dev nlohmann-json3-dev libyaml-cpp-dev \
        libspdlog-dev libabsl-dev libsimdjson-dev libssl-dev libgtest-dev \
        libgmock-dev libbenchmark-dev openssl curl

# Only `make fuzz` needs these (clang's libFuzzer and sanitizer runtimes).
FUZZ_DEPS := clang-14 libclang-rt-14-dev
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2
FUZZ_TARGETS ?=

.PHONY: deps configure build serve test e2e e2e-prepare bench clean fuzz fuzz-deps

# Installs only what is missing, so a second run costs nothing.
deps:
	@missing=$$(for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing: $$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job: the extender on the embedded demo cluster.
serve: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target gpusched
	$(BUILD_DIR)/gpusched serve $(ARGS)

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

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR)
