// gpusched: a kube-scheduler extender for GPU clusters. One executable with
// subcommands.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "api/cli/kubectl_plugin.h"
#include "api/server/serve.h"
#include "api/server/simulate_command.h"
#include "api/server/trace_replay_command.h"
#include "api/server/validate_command.h"

namespace {

constexpr char kUsage[] =
    "usage: gpusched <command> [flags]\n"
    "commands:\n"
    "  serve     run the extender (filter, prioritize, preempt, bind) over\n"
    "            HTTP(S); without --cluster on the embedded demo cluster\n"
    "  validate  check quota policy YAML files; print a summary or every "
    "error\n"
    "  simulate  run a scenario on a virtual clock and print the report JSON\n"
    "  trace-replay  replay a GPU cluster trace (FGD paper's method) with a\n"
    "            scorer and print the allocation report JSON\n"
    "  kubectl   the kubectl plugin (`kubectl gpusched`), as when run as\n"
    "            kubectl-gpusched: `gpusched kubectl --help`\n"
    "  help      this text; `gpusched <command> --help` for its flags\n";

// The last component of argv[0]: kubectl runs plugins by their path.
std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

int RunPlugin(const std::vector<std::string>& args) {
  return gpusched::cli::RunKubectlPlugin(args,
                                         gpusched::cli::DefaultPluginOptions());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 0 && BaseName(argv[0]) == gpusched::cli::kPluginName) {
    return RunPlugin(std::vector<std::string>(argv + 1, argv + argc));
  }
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "serve") return gpusched::RunServe(args);
  if (command == "validate") return gpusched::RunValidate(args);
  if (command == "simulate") return gpusched::RunSimulate(args);
  if (command == "trace-replay") return gpusched::RunTraceReplay(args);
  if (command == "kubectl") return RunPlugin(args);
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "gpusched: unknown command \"" << command << "\"\n" << kUsage;
  return 2;
}
