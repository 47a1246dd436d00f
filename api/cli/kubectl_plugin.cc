#include "api/cli/kubectl_plugin.h"

#include <iostream>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/cli/commands.h"
#include "api/cli/plugin_args.h"
#include "api/cli/visibility_client.h"
#include "api/codec/json_render.h"
#include "scheduler/base/strings.h"

#ifndef GPUSCHED_VERSION
#define GPUSCHED_VERSION "unknown"
#endif

namespace gpusched::cli {
namespace {

// kubectl's way: "error: ..." for what went wrong here, "Error from server
// (...)" as the API server said it.
void PrintError(std::ostream& err, std::string_view message) {
  if (!absl::StartsWith(Sv(message), "error: ") &&
      !absl::StartsWith(Sv(message), "Error from server")) {
    err << "error: ";
  }
  err << message << "\n";
}

// kubectl's loading rules; in a pod without any kubeconfig file (NotFound,
// not a broken one), the pod's service account, as kubectl falls back to.
absl::StatusOr<kube::KubeConfig> LoadConfig(
    const PluginArgs& args, const kube::KubeconfigSelection& environment) {
  kube::KubeconfigSelection selection = environment;
  selection.kubeconfig = args.kubeconfig;
  selection.context = args.context;
  selection.namespace_name = args.namespace_name;
  absl::StatusOr<kube::KubeConfig> config = kube::LoadKubeconfigs(selection);
  if (config.status().code() != absl::StatusCode::kNotFound ||
      !args.kubeconfig.empty() || !kube::InClusterAvailable()) {
    return config;
  }
  absl::StatusOr<kube::KubeConfig> in_cluster = kube::LoadInClusterConfig();
  if (in_cluster.ok() && !args.namespace_name.empty()) {
    in_cluster->namespace_name = args.namespace_name;
  }
  return in_cluster.ok() ? in_cluster : config;
}

absl::StatusOr<std::string> Version(OutputFormat output) {
  if (output == OutputFormat::kTable) {
    return absl::StrCat("gpusched v", GPUSCHED_VERSION, "\n");
  }
  const std::string json = absl::StrCat(R"({"clientVersion":{"gitVersion":"v)",
                                        GPUSCHED_VERSION, R"("}})");
  return output == OutputFormat::kYaml ? JsonToYaml(json) : IndentJson(json);
}

absl::StatusOr<std::string> RunCommand(const PluginArgs& args,
                                       const CommandContext& context) {
  if (args.command == "explain") {
    return RunExplain(context, args.positional[0]);
  }
  if (args.command == "queue") {
    std::optional<std::string> local_queue;
    if (!args.positional.empty()) local_queue = args.positional[0];
    return RunQueue(context, std::move(local_queue));
  }
  return RunStatus(context);
}

// A command that reads the API: connect as kubectl would, then run it.
absl::StatusOr<std::string> Connected(const PluginArgs& args,
                                      const KubectlPluginOptions& options) {
  absl::StatusOr<kube::KubeConfig> config =
      LoadConfig(args, options.environment);
  if (!config.ok()) return config.status();
  std::string namespace_name = config->namespace_name;
  absl::StatusOr<std::unique_ptr<kube::KubeClient>> client =
      kube::KubeClient::Create(*std::move(config), options.client);
  if (!client.ok()) return client.status();
  VisibilityClient api(**client);
  return RunCommand(args, {.api = api,
                           .namespace_name = std::move(namespace_name),
                           .output = args.output,
                           .now = options.now(),
                           .err = *options.err});
}

}  // namespace

KubectlPluginOptions DefaultPluginOptions() {
  return {.environment = kube::KubeconfigSelection::FromEnvironment(),
          .now = [] { return absl::ToUnixSeconds(absl::Now()); },
          .out = &std::cout,
          .err = &std::cerr};
}

int RunKubectlPlugin(const std::vector<std::string>& args,
                     const KubectlPluginOptions& options) {
  std::ostream& out = *options.out;
  std::ostream& err = *options.err;
  absl::StatusOr<PluginArgs> parsed = ParsePluginArgs(args);
  if (!parsed.ok()) {
    PrintError(err, Message(parsed.status()));
    err << "See 'kubectl gpusched --help' for usage.\n";
    return 1;
  }
  if (parsed->help || parsed->command.empty() || parsed->command == "help") {
    const bool topic = parsed->command == "help" && !parsed->positional.empty();
    out << PluginUsage(topic ? parsed->positional[0] : parsed->command);
    return 0;
  }
  absl::StatusOr<std::string> printed = parsed->command == "version"
                                            ? Version(parsed->output)
                                            : Connected(*parsed, options);
  if (!printed.ok()) {
    PrintError(err, Message(printed.status()));
    return 1;
  }
  out << *printed;
  return 0;
}

}  // namespace gpusched::cli
