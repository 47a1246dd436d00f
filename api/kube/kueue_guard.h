// Refuses to let gpusched decide while a Kueue manager is active on the
// same objects: two admission controllers charging one quota would both
// admit into it. Kueue is active while its leader Lease (by default
// kueue-system/c1f6bfd2.kueue.x-k8s.io) is held and not expired, or while
// webhook configurations on kueue.x-k8s.io are installed: with leader
// election off Kueue writes no Lease, and its webhooks (failurePolicy Fail)
// also refuse gpusched's patches of the pods they cover. The procedure that
// switches (README) stops the manager and removes its webhook
// configurations; gpusched then decides at its next check.
//
// Polled, not watched: three reads every `period`, and the Lease's expiry
// needs a clock anyway. A read that fails keeps what the last one found
// (said once per failure streak); before the first answer Kueue counts as
// active, so nothing is decided in the moment before we know.
#ifndef GPUSCHED_API_KUBE_KUEUE_GUARD_H_
#define GPUSCHED_API_KUBE_KUEUE_GUARD_H_

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {

// Whether a Kueue manager is active, and the sentence that says why.
struct KueuePresence {
  bool active = true;
  std::string why;  // "" when not active
  bool operator==(const KueuePresence&) const = default;
};

struct KueueGuardOptions {
  // Kueue's leader Lease; an empty name reads none (leader election off).
  std::string lease_namespace = "kueue-system";
  std::string lease_name = "c1f6bfd2.kueue.x-k8s.io";
  std::chrono::milliseconds period{5000};
  // Called when the presence changes, from the guard's thread (the first
  // answer included). Must return quickly.
  std::function<void(const KueuePresence&)> on_change;
  // Injected for tests; the wall clock by default.
  std::function<absl::Time()> now;
};

// Thread-safe. The client must outlive the guard.
class KueueGuard {
 public:
  KueueGuard(KubeClient& client, KueueGuardOptions options);
  ~KueueGuard();  // Stop()
  KueueGuard(const KueueGuard&) = delete;
  KueueGuard& operator=(const KueueGuard&) = delete;

  // Checks at once, then every period, on a thread.
  void Start();
  void Stop();  // idempotent

  KueuePresence presence() const;
  // One check (what the thread runs each period); the presence it found,
  // or the error that kept the last one.
  absl::StatusOr<KueuePresence> CheckOnce(std::stop_token stop = {});

 private:
  absl::StatusOr<std::optional<std::string>> LeaseHolder(std::stop_token stop);
  absl::StatusOr<std::vector<std::string>> KueueWebhooks(std::stop_token stop);
  void Record(const absl::StatusOr<KueuePresence>& found);
  bool CannotTell(const absl::Status& status, std::string_view what);

  KubeClient& client_;
  const KueueGuardOptions options_;
  mutable std::mutex mu_;
  std::optional<KueuePresence> presence_;  // none before the first answer
  bool failing_ = false;                   // the thread's own
  bool forbidden_said_ = false;            // the thread's own
  std::jthread thread_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_KUEUE_GUARD_H_
