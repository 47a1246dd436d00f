# Included from the top-level CMakeLists.txt when GPUSCHED_FUZZ is ON, before
# the product libraries are defined: every library is then compiled with
# libFuzzer's coverage hooks and the address and undefined-behaviour
# sanitizers, so the fuzzers see (and check) inside our readers. Debian's
# yaml-cpp, simdjson and Abseil stay uninstrumented; our guards in front of
# them are what the fuzzers must reach.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR
    "GPUSCHED_FUZZ needs clang (libFuzzer): configure with CXX=clang++-14 "
    "(`make fuzz` does)")
endif()
# -O1 and line tables only: symbolized stacks at a sixth less compile time
# than RelWithDebInfo's -O2 -g, which matters for the CI stage's cold build.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -gline-tables-only -DNDEBUG")
set(GPUSCHED_FUZZ_SANITIZERS address,undefined)
add_compile_options(-fsanitize=fuzzer-no-link,${GPUSCHED_FUZZ_SANITIZERS}
                    -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
add_link_options(-fsanitize=${GPUSCHED_FUZZ_SANITIZERS})
# The corpus replays are ctest tests in this build directory.
enable_testing()
