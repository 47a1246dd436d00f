// Follows kube-scheduler's leader Lease, so that of two gpusched replicas
// exactly one decides: the one whose own pod's kube-scheduler leads. The
// active kube-scheduler then always talks to the deciding gpusched (both
// run in one pod and reach each other on loopback); gpusched runs no
// election of its own, which could pick the other pod.
//
// kube-scheduler's holderIdentity is "<hostname>_<uuid>", and both
// containers of a pod share the pod's hostname. This replica is active
// while the Lease names a holder "<identity>_..." and has not expired
// (renewTime + leaseDurationSeconds is in the future). Expiry is checked
// every `recheck` as well as on every watch event: a killed kube-scheduler
// stops renewing, it does not write that it left.
#ifndef GPUSCHED_API_KUBE_LEASE_FOLLOWER_H_
#define GPUSCHED_API_KUBE_LEASE_FOLLOWER_H_

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/codec/lease_json.h"  // LeaseState
#include "api/kube/kube_client.h"

namespace gpusched::kube {

// True while `state` names a holder "<identity>_..." and has not expired.
bool HeldBy(const LeaseState& state, std::string_view identity, absl::Time now);

struct LeaseFollowerOptions {
  std::string namespace_name;  // deploy/: gpusched-system
  std::string name;            // deploy/: gpusched
  std::string identity;        // this pod's hostname
  std::chrono::milliseconds recheck{1000};
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  // Called on every change of active(), from the follower's threads, one
  // call at a time. Must return quickly.
  std::function<void(bool active, const std::string& holder)> on_change;
  // Injected for tests; the wall clock by default.
  std::function<absl::Time()> now;
};

// Thread-safe. The client must outlive the follower.
class LeaseFollower {
 public:
  LeaseFollower(KubeClient& client, LeaseFollowerOptions options);
  ~LeaseFollower();  // Stop()
  LeaseFollower(const LeaseFollower&) = delete;
  LeaseFollower& operator=(const LeaseFollower&) = delete;

  void Start();
  // Joins the threads within milliseconds; idempotent. Stays as it was.
  void Stop();

  bool active() const;
  std::string holder() const;

 private:
  void Watch(std::stop_token stop);
  void Tick(std::stop_token stop);
  absl::StatusOr<std::string> List(std::stop_token stop);
  void Observe(std::optional<LeaseState> state);
  void Evaluate();
  absl::Time Now() const;

  KubeClient& client_;
  const LeaseFollowerOptions options_;
  std::mutex evaluate_mu_;  // one Evaluate (and on_change) at a time
  mutable std::mutex mu_;
  std::optional<LeaseState> state_;  // guarded by mu_; none: no Lease yet
  bool active_ = false;              // guarded by mu_
  std::jthread watcher_;
  std::jthread ticker_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_LEASE_FOLLOWER_H_
