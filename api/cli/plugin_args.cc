#include "api/cli/plugin_args.h"

#include <array>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched::cli {
namespace {

struct FlagSpec {
  std::string_view name;
  char shorthand;  // 0: none
  bool takes_value;
};

constexpr std::array<FlagSpec, 5> kFlags{{
    {"kubeconfig", 0, true},
    {"context", 0, true},
    {"namespace", 'n', true},
    {"output", 'o', true},
    {"help", 'h', false},
}};

const FlagSpec* FindLong(std::string_view name) {
  for (const FlagSpec& flag : kFlags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

const FlagSpec* FindShort(char shorthand) {
  for (const FlagSpec& flag : kFlags) {
    if (flag.shorthand != 0 && flag.shorthand == shorthand) return &flag;
  }
  return nullptr;
}

absl::Status SetOutput(std::string_view value, PluginArgs& out) {
  if (value == "json") {
    out.output = OutputFormat::kJson;
  } else if (value == "yaml") {
    out.output = OutputFormat::kYaml;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unable to match a printer suitable for the output format \"",
        Sv(value), "\", allowed formats are: json,yaml"));
  }
  return absl::OkStatus();
}

absl::Status Apply(const FlagSpec& flag, std::string_view value,
                   PluginArgs& out) {
  if (flag.name == "kubeconfig") out.kubeconfig = value;
  if (flag.name == "context") out.context = value;
  if (flag.name == "namespace") out.namespace_name = value;
  if (flag.name == "output") return SetOutput(value, out);
  if (flag.name == "help") {
    if (value != "true" && value != "false") {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid argument \"", Sv(value), "\" for \"-h, --help\" flag"));
    }
    out.help = value == "true";
  }
  return absl::OkStatus();
}

// One flag word at args[*i], with its value from the next word when it
// takes one and has none attached; advances *i past what it used.
absl::Status ParseFlag(const std::vector<std::string>& args, size_t* i,
                       PluginArgs& out) {
  std::string_view word = args[*i];
  const bool is_long = word.starts_with("--");
  std::string_view body = word.substr(is_long ? 2 : 1);
  std::optional<std::string_view> attached;
  const FlagSpec* flag = nullptr;
  if (is_long) {
    const size_t equals = body.find('=');
    if (equals != std::string_view::npos) attached = body.substr(equals + 1);
    flag = FindLong(body.substr(0, equals));
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag: --", Sv(body.substr(0, equals))));
    }
  } else {
    flag = FindShort(body[0]);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown shorthand flag: '", Sv(body.substr(0, 1)),
                       "' in ", Sv(word)));
    }
    // -nteam-a and -n=team-a, as pflag reads them.
    std::string_view rest = body.substr(1);
    if (rest.starts_with('=')) rest.remove_prefix(1);
    if (!rest.empty() || body.size() > 1) attached = rest;
  }
  if (!flag->takes_value) return Apply(*flag, attached.value_or("true"), out);
  if (attached.has_value()) return Apply(*flag, *attached, out);
  if (*i + 1 >= args.size()) {
    return absl::InvalidArgumentError(
        is_long ? absl::StrCat("flag needs an argument: --", Sv(flag->name))
                : absl::StrCat("flag needs an argument: '",
                               Sv(body.substr(0, 1)), "' in ", Sv(word)));
  }
  return Apply(*flag, args[++*i], out);
}

// How many arguments each command takes.
absl::Status CheckArguments(const PluginArgs& args) {
  const size_t count = args.positional.size();
  if (args.command == "explain" && count != 1) {
    return absl::InvalidArgumentError(
        "explain takes one workload: POD or podgroup/NAME");
  }
  if (args.command == "queue" && count > 1) {
    return absl::InvalidArgumentError(
        "queue takes at most one LocalQueue name");
  }
  if ((args.command == "status" || args.command == "version") && count > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        args.command, " takes no arguments, got \"", args.positional[0], "\""));
  }
  if (args.command == "help" && count > 1) {
    return absl::InvalidArgumentError("help takes at most one command");
  }
  return absl::OkStatus();
}

bool KnownCommand(std::string_view command) {
  return command == "explain" || command == "queue" || command == "status" ||
         command == "version" || command == "help";
}

constexpr std::string_view kOptions =
    "\nOptions:\n"
    "  --kubeconfig=FILE   the kubeconfig to use (default: $KUBECONFIG, "
    "else ~/.kube/config)\n"
    "  --context=NAME      the kubeconfig context to use\n"
    "  -n, --namespace=NS  the namespace (default: the context's)\n"
    "  -o, --output=FORMAT json or yaml: the API's answer as it is "
    "(default: a table)\n"
    "  -h, --help          this help\n";

constexpr std::string_view kExplainUsage =
    "Why one workload waits, and when it is expected to start.\n\n"
    "Usage:\n"
    "  kubectl gpusched explain [-n NAMESPACE] POD|podgroup/NAME\n\n"
    "A pod of a gang explains its whole PodGroup. An admitted or finished\n"
    "workload prints its state; a pod gpusched does not queue (no queue\n"
    "label, no PodGroup) is an error that says so.\n";

constexpr std::string_view kQueueUsage =
    "Pending workloads of the namespace's LocalQueues, in admission order.\n\n"
    "Usage:\n"
    "  kubectl gpusched queue [-n NAMESPACE] [LOCALQUEUE]\n\n"
    "POSITION is the place in the ClusterQueue counted from 0, as Kueue's\n"
    "API and kueuectl count: 0 is admitted next, and the number is how many\n"
    "wait ahead. EXPECTED START is gpusched's forecast (\"unknown\" when it\n"
    "has none).\n";

constexpr std::string_view kStatusUsage =
    "Every ClusterQueue you may see: per flavor and resource its nominal\n"
    "quota, use, borrowing and lending; pending and admitted workloads; then\n"
    "the cohorts. cpu is in cores (\"500m\" is half a core), memory in bytes\n"
    "(\"64Gi\").\n\n"
    "Usage:\n"
    "  kubectl gpusched status\n";

constexpr std::string_view kMainUsage =
    "kubectl gpusched: gpusched's queues, read through its visibility API\n"
    "(visibility.gpusched.io/v1alpha1) with your own credentials.\n\n"
    "Usage:\n"
    "  kubectl gpusched explain [-n NAMESPACE] POD|podgroup/NAME\n"
    "  kubectl gpusched queue [-n NAMESPACE] [LOCALQUEUE]\n"
    "  kubectl gpusched status\n"
    "  kubectl gpusched version\n\n"
    "Commands:\n"
    "  explain   why one workload waits, and when it is expected to start\n"
    "  queue     pending workloads of the namespace's LocalQueues, in "
    "admission order\n"
    "  status    ClusterQueues' quota use and counts, then cohorts\n"
    "  version   the plugin's version\n"
    "  help      this help; `kubectl gpusched help COMMAND` for one "
    "command\n";

}  // namespace

absl::StatusOr<PluginArgs> ParsePluginArgs(
    const std::vector<std::string>& args) {
  PluginArgs out;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (!flags_done && word == "--") {
      flags_done = true;
    } else if (!flags_done && word.size() > 1 && word[0] == '-') {
      if (auto s = ParseFlag(args, &i, out); !s.ok()) return s;
    } else if (out.command.empty()) {
      out.command = word;
    } else {
      out.positional.push_back(word);
    }
  }
  if (!out.command.empty() && !KnownCommand(out.command)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown command \"", out.command, "\" for \"kubectl gpusched\""));
  }
  if (out.help) return out;  // the usage is what was asked for
  if (auto s = CheckArguments(out); !s.ok()) return s;
  return out;
}

std::string PluginUsage(std::string_view command) {
  std::string_view text = kMainUsage;
  if (command == "explain") text = kExplainUsage;
  if (command == "queue") text = kQueueUsage;
  if (command == "status") text = kStatusUsage;
  return absl::StrCat(Sv(text), Sv(kOptions));
}

}  // namespace gpusched::cli
