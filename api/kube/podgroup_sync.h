// Lists and watches the PodGroups of the three gang APIs (podgroup_api.h),
// each on its own thread, and hands them to a listener (the queueing
// core's way in):
//
//   scheduling.volcano.sh/v1beta1 podgroups   (Volcano)
//   scheduling.x-k8s.io/v1alpha1 podgroups    (the coscheduling plugin)
//   scheduling.k8s.io/v1beta1 podgroups       (Kubernetes' own, KEP-4671)
//
// Most clusters install one of the two CRDs, or neither, and serve the
// built-in API only when told to (it is off by default). An API the server
// does not serve (404), or that gpusched may not list (403 for several
// tries in a row), is logged once and passed on as listed with no groups.
// Beside each thread a CrdWatch (crd_watch.h) watches the API's CRD; a
// missing API is listed again the moment its CRD is Established and serves
// the version, and a CRD removed while its PodGroups are watched ends that
// watch, so its groups are listed as none and the thread waits again. The
// CRD watch only says when to ask: the PodGroup list decides what is served.
// `absent_poll` remains the fallback while the CRD watch has no answer (the
// role may not read CRDs: an older RBAC), and for an API that is forbidden
// rather than missing (no CRD event changes a role). The built-in API has
// no CRD: while it is not served it is asked for every `absent_poll`, so
// that a kube-apiserver restarted with the runtime-config that serves it
// is noticed within that. Other failures retry
// with a backoff, as the pod and node watches do (cluster_sync.h).
#ifndef GPUSCHED_API_KUBE_PODGROUP_SYNC_H_
#define GPUSCHED_API_KUBE_PODGROUP_SYNC_H_

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/kube/crd_watch.h"
#include "api/kube/kube_client.h"
#include "api/kube/podgroup_api.h"
#include "queueing/workload_types.h"

namespace gpusched::kube {

class Backoff;  // sync_util.h

// Called from the sync threads; must return quickly.
class PodGroupListener {
 public:
  virtual ~PodGroupListener() = default;
  // Every PodGroup of `flavor` that exists (a first list, a relist, or
  // none when the API went away): groups of that flavor not in it are gone.
  virtual void OnPodGroupsListed(PodGroup::Flavor flavor,
                                 std::vector<PodGroup> groups) = 0;
  // A watch event: added, modified or deleted.
  virtual void OnPodGroup(WatchEventType type, PodGroup group) = 0;
  // The watch lost its history (410 Gone): `flavor` is listed again, and
  // until OnPodGroupsListed the listener holds half a picture of it.
  virtual void OnPodGroupsRelisting(PodGroup::Flavor flavor) {}
  // Listing `flavor` has failed for PodGroupSyncOptions::failing_after (a
  // broken conversion webhook, 5xx): said once per run of failures, with
  // the last error; OnPodGroupsListed ends it.
  virtual void OnPodGroupListFailing(PodGroup::Flavor flavor,
                                     const std::string& error) {}
};

struct PodGroupSyncOptions {
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  // How often an API that is not served is asked for again when its CRD
  // cannot be watched or it has none, and an API that is forbidden.
  std::chrono::milliseconds absent_poll{30000};
  int list_page_size = 500;
  // How long a list may keep failing before the listener hears of it
  // (OnPodGroupListFailing), so a passing fault holds nothing for long.
  std::chrono::milliseconds failing_after{10000};
};

// The list path of each API, e.g.
// "/apis/scheduling.volcano.sh/v1beta1/podgroups".
std::string_view PodGroupListPath(PodGroup::Flavor flavor);

// Thread-safe. The client and listener must outlive the PodGroupSync.
class PodGroupSync {
 public:
  using Clock = std::chrono::steady_clock;
  PodGroupSync(KubeClient& client, PodGroupListener& listener,
               PodGroupSyncOptions options = {});
  ~PodGroupSync();  // Stop()
  PodGroupSync(const PodGroupSync&) = delete;
  PodGroupSync& operator=(const PodGroupSync&) = delete;

  void Start();
  // Closes the sockets and joins the threads; idempotent.
  void Stop();

  // True once the API was listed, or found absent (nothing to wait for).
  bool settled(PodGroup::Flavor flavor) const;

 private:
  void Run(PodGroup::Flavor flavor, std::stop_token stop);
  bool CountsAsAbsent(const absl::Status& status, int& forbidden) const;
  void ReportAbsent(PodGroup::Flavor flavor, const absl::Status& status);
  // Until an absent API is worth listing again; false when stopped.
  bool WaitToAskAgain(PodGroup::Flavor flavor, const absl::Status& status,
                      const CrdWatch::Mark& mark, Backoff& backoff,
                      std::stop_token stop);
  // `gone`: set when the watch lost its history (410).
  bool WatchUntilRelist(PodGroup::Flavor flavor, std::string& version,
                        Backoff& backoff, std::stop_token removal,
                        std::stop_token stop, bool& gone);
  // What one API's thread remembers between lists.
  struct ListRun {
    bool absent = false;
    int forbidden = 0;  // 403s in a row
    std::optional<Clock::time_point> failing_since;
    bool told_failing = false;
  };
  // A list failed: retried after a backoff; the listener hears once the
  // failures have lasted failing_after. False when stopped.
  bool ListFailed(PodGroup::Flavor flavor, const absl::Status& status,
                  Backoff& backoff, ListRun& run, std::stop_token stop);
  void NoteListed(PodGroup::Flavor flavor, ListRun& run);
  // Lists every page; NotFound when the API is not served.
  absl::StatusOr<std::string> ListAll(PodGroup::Flavor flavor,
                                      std::stop_token stop);
  absl::Status WatchFrom(PodGroup::Flavor flavor, std::string& version,
                         std::stop_token stop);

  KubeClient& client_;
  PodGroupListener& listener_;
  const PodGroupSyncOptions options_;
  std::array<std::atomic<bool>, kPodGroupFlavors> settled_{};
  // Null for the built-in API. They outlive threads_' use.
  std::array<std::unique_ptr<CrdWatch>, kPodGroupFlavors> crds_;
  std::array<std::jthread, kPodGroupFlavors> threads_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_PODGROUP_SYNC_H_
