// Keeps this replica's own pod labelled with its role, gpusched.io/role:
// deciding or standby. The visibility API's Service selects
// role=deciding (deploy/manifests/70-visibility.yaml), so readers reach
// only the replica whose view is the one that decides: a standby is not
// selected, rather than selected and answering 503. A failover relabels
// both pods within the Lease's expiry and a retry or two; until the old
// leader's pod is relabelled (or gone) the Service may still pick it, and
// it answers 503 then, as before.
#ifndef GPUSCHED_API_KUBE_POD_ROLE_LABEL_H_
#define GPUSCHED_API_KUBE_POD_ROLE_LABEL_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "api/kube/kube_client.h"

namespace gpusched::kube {

inline constexpr char kRoleLabel[] = "gpusched.io/role";

struct PodRoleLabelOptions {
  std::string namespace_name;  // this pod's (downward API)
  std::string name;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
};

// Thread-safe. The client must outlive it.
class PodRoleLabel {
 public:
  PodRoleLabel(KubeClient& client, PodRoleLabelOptions options);
  ~PodRoleLabel();  // Stop()
  PodRoleLabel(const PodRoleLabel&) = delete;
  PodRoleLabel& operator=(const PodRoleLabel&) = delete;

  void Start();
  void Stop();  // idempotent
  // The role to show; its own thread writes it, the latest wins, and a
  // failed write is retried with backoff until it lands or changes.
  void Set(bool deciding);
  // The role last written to the pod; none before the first write.
  std::optional<bool> written() const;

 private:
  void Run(std::stop_token stop);
  // Waits for a role that differs from what was written; none on stop.
  std::optional<bool> NextToWrite(std::stop_token stop);

  KubeClient& client_;
  const PodRoleLabelOptions options_;
  mutable std::mutex mu_;
  std::condition_variable_any changed_;
  std::optional<bool> wanted_;   // guarded by mu_
  std::optional<bool> written_;  // guarded by mu_
  std::jthread thread_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_POD_ROLE_LABEL_H_
