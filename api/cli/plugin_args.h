// The command line of `kubectl gpusched`, parsed as kubectl's own flag
// library (pflag) does, so that what works with kubectl works here:
// `-n x`, `-nx`, `-n=x`, `--namespace x`, `--namespace=x`, `-ojson`, flags
// before or after the command, and `--` ending the flags.
#ifndef GPUSCHED_API_CLI_PLUGIN_ARGS_H_
#define GPUSCHED_API_CLI_PLUGIN_ARGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::cli {

enum class OutputFormat { kTable, kJson, kYaml };

struct PluginArgs {
  // explain, queue, status, version or help; empty when none was given.
  std::string command;
  std::vector<std::string> positional;         // the command's arguments
  std::string kubeconfig;                      // --kubeconfig
  std::string context;                         // --context
  std::string namespace_name;                  // -n/--namespace
  OutputFormat output = OutputFormat::kTable;  // -o/--output
  bool help = false;                           // -h/--help
};

// The arguments after the plugin's name. Errors read as pflag's ("unknown
// flag: --nmespace", "flag needs an argument: 'n' in -n") or say what a
// command takes; the caller adds where to find the usage.
absl::StatusOr<PluginArgs> ParsePluginArgs(
    const std::vector<std::string>& args);

// The usage of `command` (all commands when it is empty or unknown).
std::string PluginUsage(std::string_view command);

}  // namespace gpusched::cli

#endif  // GPUSCHED_API_CLI_PLUGIN_ARGS_H_
