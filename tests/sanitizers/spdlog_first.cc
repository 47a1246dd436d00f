// Linked into every test binary of a ThreadSanitizer build (tests/
// CMakeLists.txt). spdlog's registry is a function-local static inside
// libspdlog.so, which is not instrumented: TSan cannot see the guard that
// makes its construction thread-safe, so two threads that log first at once
// (ClusterSync's node and pod watchers do) look like a race on every field
// of the default logger. Building the registry here, before main and any
// thread, is what `gpusched serve` does too (it configures logging first),
// and leaves TSan nothing to misread; no suppression hides real races.
#include <spdlog/spdlog.h>

namespace {
[[maybe_unused]] const bool kRegistryBuilt =
    spdlog::default_logger_raw() != nullptr;
}  // namespace
