// The plugin's commands (kubectl_plugin.h dispatches): each reads the
// visibility API and returns what to print on stdout, a table or the
// API's own answer as JSON or YAML; notes for the user go to `err`.
#ifndef GPUSCHED_API_CLI_COMMANDS_H_
#define GPUSCHED_API_CLI_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/cli/plugin_args.h"
#include "api/cli/visibility_client.h"

namespace gpusched::cli {

struct CommandContext {
  VisibilityClient& api;
  std::string namespace_name;
  OutputFormat output = OutputFormat::kTable;
  int64_t now = 0;  // Unix seconds, for ages and expected starts
  std::ostream& err;
};

// `target`: NAME (a pod), pod/NAME or podgroup/NAME.
absl::StatusOr<std::string> RunExplain(const CommandContext& context,
                                       std::string_view target);
// Every LocalQueue of the namespace, or `local_queue` alone.
absl::StatusOr<std::string> RunQueue(const CommandContext& context,
                                     std::optional<std::string> local_queue);
absl::StatusOr<std::string> RunStatus(const CommandContext& context);

// The name in an explain target; an error for another kind or a name the
// API server would not accept.
absl::StatusOr<std::string> WorkloadName(std::string_view target);

}  // namespace gpusched::cli

#endif  // GPUSCHED_API_CLI_COMMANDS_H_
