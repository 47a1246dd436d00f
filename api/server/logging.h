#ifndef GPUSCHED_API_SERVER_LOGGING_H_
#define GPUSCHED_API_SERVER_LOGGING_H_

#include <string_view>

#include "absl/status/status.h"

namespace gpusched {

// Configures the default spdlog logger on stderr. format: "text" or "json"
// (one JSON object per line: time, level, msg). verbosity: 0 info, 1 debug,
// 2 and more trace.
absl::Status ConfigureLogging(std::string_view format, int verbosity);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_LOGGING_H_
