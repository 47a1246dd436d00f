#ifndef GPUSCHED_API_SERVER_SERVE_FLAGS_H_
#define GPUSCHED_API_SERVER_SERVE_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/server/admission_webhook.h"
#include "api/server/dashboard_server.h"
#include "api/server/flags.h"
#include "api/server/visibility_server.h"

namespace gpusched {

struct ServeConfig {
  std::string listen = "127.0.0.1:8888";
  std::string cluster_file;  // empty: the embedded demo cluster
  std::string policy_file;   // empty: no queues, the GPU engine alone
  // "file" (policy_file alone) or "kueue": the cluster's Kueue objects,
  // with policy_file merged in when given (api/server/policy_source.h).
  std::string policy_source = "file";
  // Kueue's leader Lease ("NAMESPACE/NAME"), read to refuse deciding while
  // a Kueue manager is active (api/kube/kueue_guard.h); empty: read none.
  std::string kueue_lease = "kueue-system/c1f6bfd2.kueue.x-k8s.io";
  std::string kubeconfig;   // set: follow a real cluster
  bool in_cluster = false;  // follow the cluster this pod runs in
  int tick_ms = 1000;       // admission timers and policy reload period
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  std::string prefix;
  std::string scoring;  // "binpack=1,topology=2,..."; empty: defaults
  int body_limit_mib = 16;
  int read_timeout_ms = 10000;
  int threads = 2;
  // Live mode: the whole API server time a bind may take (see
  // KubeBindSink); below kube-scheduler's extender httpTimeout.
  int bind_deadline_ms = 3000;
  // Live mode: how often a PodGroup API whose CRD is not installed is
  // asked for again while the CRD cannot be watched (PodGroupSyncOptions).
  int podgroup_api_poll_ms = 30000;
  // ServiceOptions::filter_keep_best: 0 answers every fitting node.
  int filter_keep_best = 0;
  // Live mode, two replicas: decide only while the kube-scheduler of this
  // pod holds this Lease ("NAMESPACE/NAME"); empty: always decide.
  std::string leader_lease;
  // The holder identity prefix of this pod's kube-scheduler ("<hostname>"
  // of "<hostname>_<uuid>"); empty: this host's name.
  std::string leader_identity;
  // NAMESPACE/NAME of this replica's pod, labelled with its role; empty:
  // $POD_NAMESPACE/$POD_NAME when both are set (deploy/ sets them).
  std::string pod;
  // NAMESPACE/NAME of the ConfigMap keeping observed runtimes; empty: none.
  std::string runtime_history = "gpusched-system/gpusched-runtime-history";
  // NAMESPACE/NAME of the ConfigMap keeping the workloads' requeue state
  // (waitForPodsReady's counts, backoffs, deactivations); empty: memory.
  std::string requeue_state = "gpusched-system/gpusched-requeue-state";
  std::string log_format = "text";
  int verbosity = 0;
  bool help = false;  // --help: print ServeUsage() instead of serving
  // The mutating webhook that gates new pods (live mode only).
  WebhookFlags webhook;
  // The aggregated visibility API (live mode, with --policy).
  VisibilityFlags visibility;
  // The web dashboard on a loopback-only listener (any mode).
  DashboardFlags dashboard;
};

// Live mode: following a real cluster (--kubeconfig or --in-cluster) rather
// than serving a file's or the embedded demo cluster.
bool IsLive(const ServeConfig& config);
// Whether there are queues: a --policy file or --policy-source=kueue.
bool HasPolicy(const ServeConfig& config);

// `gpusched serve`'s flags into `config`, then the checks between flags
// (modes that exclude each other, flags that need another, positive
// limits); with --help, config.help and no checks. An error names the
// flag; an unknown flag or a stray argument also prints the usage, which
// lists every flag with its help.
absl::Status ParseServeFlags(const std::vector<std::string>& args,
                             ServeConfig& config);

// Every flag ParseServeFlags accepts, in the usage's order: the one list
// that `gpusched serve --help` prints and README.md's table must match
// (tests/server/serve_flags_readme_test.cc).
std::vector<FlagSet::Doc> ServeFlagDocs();
// `gpusched serve --help`.
std::string ServeUsage();

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_SERVE_FLAGS_H_
