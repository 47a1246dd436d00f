#include "api/server/serve_flags.h"

#include <span>
#include <variant>

#include "absl/strings/str_cat.h"
#include "api/server/flags.h"

namespace gpusched {
namespace {

// One `gpusched serve` flag: its name, the ServeConfig field it sets (the
// field's type picks the parser), what its value is called in the usage
// and its help line. Every flag's text lives in the tables below (and in
// AddWebhookFlags, AddVisibilityFlags, AddDashboardFlags), and registering
// them is one loop; README.md's table lists the same flags with the same
// argument names (tests/server/serve_flags_readme_test.cc).
struct ServeFlag {
  const char* name;
  std::variant<std::string ServeConfig::*, int ServeConfig::*,
               bool ServeConfig::*>
      field;
  const char* argument;  // "" for a bool flag
  const char* help;
};

// In the order --help lists them; the webhook's, the visibility API's and
// the dashboard's flags come between this table and kLoggingAndHelpFlags.
const ServeFlag kServeFlags[] = {
    {"listen", &ServeConfig::listen, "ADDR:PORT",
     "address to listen on (127.0.0.1:8888)"},
    {"cluster", &ServeConfig::cluster_file, "FILE",
     "Nodes and Pods as `kubectl get nodes,pods -o yaml|json` prints "
     "them; default: the embedded demo cluster"},
    {"tls-cert", &ServeConfig::tls_cert_file, "FILE",
     "PEM certificate: serve HTTPS"},
    {"tls-key", &ServeConfig::tls_key_file, "FILE",
     "PEM private key for --tls-cert"},
    {"client-ca", &ServeConfig::client_ca_file, "FILE",
     "PEM CA: require and verify client certificates"},
    {"kubeconfig", &ServeConfig::kubeconfig, "FILE",
     "follow a real cluster (the kubeconfig's current context)"},
    {"in-cluster", &ServeConfig::in_cluster, "",
     "follow the cluster this pod runs in (service account)"},
    {"policy", &ServeConfig::policy_file, "FILE",
     "quota policy YAML (queues, cohorts, flavors); reloaded when it "
     "changes"},
    {"policy-source", &ServeConfig::policy_source, "file|kueue",
     "live mode: kueue takes the policy from the cluster's Kueue objects "
     "(kueue.x-k8s.io/v1beta2), watched, with --policy merged in if "
     "given (file)"},
    {"kueue-lease", &ServeConfig::kueue_lease, "NS/NAME",
     "live mode: Kueue's leader Lease; while it is held, or webhook "
     "configurations on kueue.x-k8s.io exist, gpusched decides nothing; "
     "empty: read no Lease (kueue-system/c1f6bfd2.kueue.x-k8s.io)"},
    {"prefix", &ServeConfig::prefix, "PATH",
     "also serve the verbs under this path prefix (e.g. /gpusched)"},
    {"scoring", &ServeConfig::scoring, "NAME=WEIGHT,...",
     "scorer weights, e.g. binpack=1,spread=0,topology=2,fragmentation=3"},
    {"body-limit-mib", &ServeConfig::body_limit_mib, "N",
     "largest request body in MiB (16)"},
    {"read-timeout-ms", &ServeConfig::read_timeout_ms, "N",
     "a request must arrive within this many ms (10000)"},
    {"threads", &ServeConfig::threads, "N", "I/O threads (2)"},
    {"bind-deadline-ms", &ServeConfig::bind_deadline_ms, "N",
     "live mode: a bind's API server calls end within this many ms, "
     "then it answers Error; keep it below the extender httpTimeout "
     "(3000)"},
    {"filter-keep-best", &ServeConfig::filter_keep_best, "N",
     "filter answers with at most this many fitting nodes, the best "
     "by gpusched's scorers; 1 makes the node gpusched's choice and "
     "spares kube-scheduler its scoring (0: all fitting nodes)"},
    {"leader-lease", &ServeConfig::leader_lease, "NS/NAME",
     "live mode, two replicas: kube-scheduler's leader Lease; decide "
     "only while this pod's kube-scheduler holds it, stand by otherwise"},
    {"leader-identity", &ServeConfig::leader_identity, "ID",
     "the holder identity prefix of this pod's kube-scheduler "
     "(default: this host's name)"},
    {"pod", &ServeConfig::pod, "NS/NAME",
     "live mode: this replica's own pod, labelled "
     "gpusched.io/role=deciding or standby so that the visibility "
     "Service selects the deciding replica only (default: "
     "$POD_NAMESPACE/$POD_NAME)"},
    {"runtime-history", &ServeConfig::runtime_history, "NS/NAME",
     "live mode with --policy: the ConfigMap keeping finished "
     "workloads' runtimes, from which starts are forecast when a "
     "workload gives no runtime; empty: kept in memory only "
     "(gpusched-system/gpusched-runtime-history)"},
    {"requeue-state", &ServeConfig::requeue_state, "NS/NAME",
     "live mode with --policy: the ConfigMap keeping each workload's "
     "requeues (waitForPodsReady's count and backoff, deactivation), "
     "which Kueue keeps in its Workloads, across restarts and "
     "failovers; empty: kept in memory only "
     "(gpusched-system/gpusched-requeue-state)"},
    {"podgroup-api-poll-ms", &ServeConfig::podgroup_api_poll_ms, "N",
     "live mode: ask again this often for a PodGroup API (Volcano, "
     "coscheduling) whose CRD is not installed, when its CRD may "
     "not be watched (else it is listed once the CRD is "
     "established), and for one that may not be listed (30000)"},
};

const ServeFlag kLoggingAndHelpFlags[] = {
    {"log-format", &ServeConfig::log_format, "json|text",
     "log lines on stderr as JSON or text (text)"},
    {"v", &ServeConfig::verbosity, "N", "verbosity: 0 info, 1 debug, 2 trace"},
    {"help", &ServeConfig::help, "", "print these flags and exit"},
};

void AddFlags(std::span<const ServeFlag> table, ServeConfig& config,
              FlagSet& flags) {
  for (const ServeFlag& flag : table) {
    std::visit(
        [&](auto field) {
          flags.Add(flag.name, &(config.*field), flag.help, flag.argument);
        },
        flag.field);
  }
}

// Every flag of `gpusched serve`, writing into `config`.
FlagSet ServeFlagSet(ServeConfig& config) {
  FlagSet flags("serve");
  AddFlags(kServeFlags, config, flags);
  AddWebhookFlags(flags, config.webhook);
  AddVisibilityFlags(flags, config.visibility);
  AddDashboardFlags(flags, config.dashboard);
  AddFlags(kLoggingAndHelpFlags, config, flags);
  return flags;
}

// The dashboard serves everything without authentication: loopback only,
// and never on the extender's port, which Prometheus may reach.
absl::Status CheckDashboard(const ServeConfig& config) {
  if (absl::Status s = CheckDashboardListen(config.dashboard.listen); !s.ok()) {
    return s;
  }
  // Port 0 picks a free port for each: they differ.
  if (!config.dashboard.listen.empty() &&
      config.dashboard.listen == config.listen &&
      !config.listen.ends_with(":0")) {
    return absl::InvalidArgumentError(
        "serve: --dashboard-listen must differ from --listen (the extender's "
        "and metrics' port)");
  }
  return absl::OkStatus();
}

// --cluster reads a file, --kubeconfig/--in-cluster follow a cluster; the
// webhook keeps its certificate in a Secret, so it needs the latter.
absl::Status CheckMode(const ServeConfig& config) {
  if (!config.cluster_file.empty() && IsLive(config)) {
    return absl::InvalidArgumentError(
        "serve: --cluster and --kubeconfig/--in-cluster exclude each other");
  }
  if (!config.webhook.listen.empty() && !IsLive(config)) {
    return absl::InvalidArgumentError(
        "serve: --webhook-listen needs --kubeconfig or --in-cluster (its "
        "certificate is kept in a Secret)");
  }
  if (!config.visibility.listen.empty() &&
      (!IsLive(config) || !HasPolicy(config))) {
    return absl::InvalidArgumentError(
        "serve: --visibility-listen needs --kubeconfig or --in-cluster (its "
        "certificate is kept in a Secret) and --policy or "
        "--policy-source=kueue (it shows the queues)");
  }
  return CheckDashboard(config);
}

absl::Status CheckPolicySource(const ServeConfig& config) {
  if (config.policy_source != "file" && config.policy_source != "kueue") {
    return absl::InvalidArgumentError(absl::StrCat("serve: --policy-source \"",
                                                   config.policy_source,
                                                   "\": want file or kueue"));
  }
  if (config.policy_source == "kueue" && !IsLive(config)) {
    return absl::InvalidArgumentError(
        "serve: --policy-source=kueue needs --kubeconfig or --in-cluster");
  }
  return absl::OkStatus();
}

bool IsNamespacedName(const std::string& text) {
  const size_t slash = text.find('/');
  return slash != std::string::npos && slash != 0 && slash + 1 != text.size() &&
         text.find('/', slash + 1) == std::string::npos;
}

absl::Status CheckLeaderLease(const ServeConfig& config) {
  if (config.leader_lease.empty()) return absl::OkStatus();
  if (!IsLive(config)) {
    return absl::InvalidArgumentError(
        "serve: --leader-lease needs --kubeconfig or --in-cluster");
  }
  if (!IsNamespacedName(config.leader_lease)) {
    return absl::InvalidArgumentError(
        absl::StrCat("serve: --leader-lease \"", config.leader_lease,
                     "\": want NAMESPACE/NAME, e.g. gpusched-system/gpusched"));
  }
  return absl::OkStatus();
}

absl::Status CheckKueueLease(const ServeConfig& config) {
  if (config.kueue_lease.empty() || IsNamespacedName(config.kueue_lease)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "serve: --kueue-lease \"", config.kueue_lease,
      "\": want NAMESPACE/NAME, e.g. kueue-system/c1f6bfd2.kueue.x-k8s.io, "
      "or empty for none"));
}

absl::Status CheckConfigMapFlag(const char* flag, const std::string& value) {
  if (value.empty() || IsNamespacedName(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "serve: --", flag, " \"", value,
      "\": want NAMESPACE/NAME of a ConfigMap, or empty for none"));
}

absl::Status CheckStateConfigMaps(const ServeConfig& config) {
  if (absl::Status s =
          CheckConfigMapFlag("runtime-history", config.runtime_history);
      !s.ok()) {
    return s;
  }
  return CheckConfigMapFlag("requeue-state", config.requeue_state);
}

absl::Status CheckPod(const ServeConfig& config) {
  if (config.pod.empty()) return absl::OkStatus();
  if (!IsLive(config)) {
    return absl::InvalidArgumentError(
        "serve: --pod needs --kubeconfig or --in-cluster");
  }
  if (!IsNamespacedName(config.pod)) {
    return absl::InvalidArgumentError(
        absl::StrCat("serve: --pod \"", config.pod,
                     "\": want NAMESPACE/NAME of this replica's pod, e.g. "
                     "gpusched-system/gpusched-7d9f-abcde"));
  }
  return absl::OkStatus();
}

absl::Status CheckTls(const ServeConfig& config) {
  if (config.tls_cert_file.empty() != config.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "serve: --tls-cert and --tls-key go together");
  }
  if (!config.client_ca_file.empty() && config.tls_cert_file.empty()) {
    return absl::InvalidArgumentError(
        "serve: --client-ca needs --tls-cert and --tls-key");
  }
  return absl::OkStatus();
}

absl::Status CheckLimits(const ServeConfig& config) {
  if (config.body_limit_mib <= 0 || config.threads <= 0 ||
      config.read_timeout_ms <= 0 || config.bind_deadline_ms <= 0 ||
      config.podgroup_api_poll_ms <= 0 || config.filter_keep_best < 0) {
    return absl::InvalidArgumentError(
        "serve: --body-limit-mib, --threads, --read-timeout-ms, "
        "--bind-deadline-ms and --podgroup-api-poll-ms must be positive, "
        "--filter-keep-best at least 0");
  }
  return absl::OkStatus();
}

// The first failing check wins, in this order.
absl::Status CheckServeConfig(const ServeConfig& config) {
  for (auto check :
       {CheckMode, CheckPolicySource, CheckLeaderLease, CheckPod,
        CheckKueueLease, CheckStateConfigMaps, CheckTls, CheckLimits}) {
    if (absl::Status s = check(config); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

bool IsLive(const ServeConfig& config) {
  return !config.kubeconfig.empty() || config.in_cluster;
}

bool HasPolicy(const ServeConfig& config) {
  return !config.policy_file.empty() || config.policy_source == "kueue";
}

std::vector<FlagSet::Doc> ServeFlagDocs() {
  ServeConfig unused;
  return ServeFlagSet(unused).Docs();
}

std::string ServeUsage() {
  ServeConfig unused;
  return ServeFlagSet(unused).Usage();
}

absl::Status ParseServeFlags(const std::vector<std::string>& args,
                             ServeConfig& config) {
  FlagSet flags = ServeFlagSet(config);
  std::vector<std::string> positional;
  if (auto s = flags.Parse(args, &positional); !s.ok()) return s;
  if (config.help) return absl::OkStatus();  // the caller prints ServeUsage
  if (!positional.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serve: unexpected argument \"", positional[0], "\"\n", flags.Usage()));
  }
  return CheckServeConfig(config);
}

}  // namespace gpusched
