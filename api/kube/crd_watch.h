// Watches one CustomResourceDefinition (apiextensions.k8s.io/v1) so that a
// sync thread whose API is not served learns the moment it is: the CRD is
// Established and serves the version the thread lists. PodGroupSync waits
// on it instead of polling a missing PodGroup API every `absent_poll`.
//
// A list and a watch with the field selector metadata.name=<crd>, which
// the API server authorizes against the role's resourceNames, so the role
// reads these two CRDs and no others. When the role may not read CRDs at
// all (403: the RBAC of an older gpusched), that is logged once and waiters
// fall back to the poll; so do they while the CRD watch has no answer
// (before its first list, or while its lists fail).
#ifndef GPUSCHED_API_KUBE_CRD_WATCH_H_
#define GPUSCHED_API_KUBE_CRD_WATCH_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "api/codec/crd_json.h"  // CrdServing
#include "api/kube/kube_client.h"

namespace gpusched::kube {

class Backoff;  // sync_util.h

struct CrdWatchOptions {
  std::string name;     // "podgroups.scheduling.volcano.sh"
  std::string version;  // "v1beta1"
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  // How often the CRD is asked for again while the role may not read it.
  std::chrono::milliseconds forbidden_retry{30000};
};

// Thread-safe. The client must outlive the CrdWatch.
class CrdWatch {
 public:
  // Where the CRD stood when a sync thread noted it, before it listed.
  struct Mark {
    uint64_t readied = 0;  // how often the CRD had become ready
    // Stops when the CRD, ready at some time since, stops being ready
    // (deleted, or no longer Established or serving the version).
    std::stop_token removal;
  };
  enum class Wake { kReady, kPollDue, kStopped };

  CrdWatch(KubeClient& client, CrdWatchOptions options);
  ~CrdWatch();  // Stop()
  CrdWatch(const CrdWatch&) = delete;
  CrdWatch& operator=(const CrdWatch&) = delete;

  void Start();
  // Closes the watch and joins the thread; idempotent.
  void Stop();

  Mark mark() const;
  // True while the CRD, as last seen, is established and serves the version.
  bool ready() const;
  // Waits until the CRD became ready after `since` (kReady), or, while the
  // CRD watch has no answer (forbidden, failing, not listed yet), until
  // `poll` has passed since the call (kPollDue); kStopped on `stop`.
  Wake WaitUntilReady(const Mark& since, std::chrono::milliseconds poll,
                      std::stop_token stop) const;

 private:
  void Run(std::stop_token stop);
  // Lists the CRD; returns the list's resourceVersion to watch from.
  absl::StatusOr<std::string> List(std::stop_token stop);
  absl::Status WatchFrom(std::string& version, std::stop_token stop);
  // After a failed list or watch; false when stopped.
  bool WaitAfterFailure(const absl::Status& status, Backoff& backoff,
                        std::stop_token stop);
  // The CRD as the list or a watch event shows it (absent: not ready).
  void Observe(bool ready);
  void SetAnswering(bool answering);

  KubeClient& client_;
  const CrdWatchOptions options_;
  const std::string path_;
  bool forbidden_logged_ = false;  // the watch thread's own

  mutable std::mutex mu_;
  mutable std::condition_variable_any changed_;
  bool answering_ = false;  // the last list succeeded
  bool ready_ = false;
  uint64_t readied_ = 0;
  std::stop_source removal_;
  std::jthread thread_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_CRD_WATCH_H_
