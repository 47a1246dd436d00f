// Releases the kueue.x-k8s.io/managed finalizer that Kueue's pod webhook put
// on the pods it managed, where Kueue's manager would have released it,
// once that manager is gone (README, "Switching from Kueue"): without this,
// every such pod deleted after the switch would hang in Terminating.
//
// Kueue releases a pod alone when it ends or is deleted, and a pod group's
// members together when the group has ended (every member ended or
// deleted), a member being deleted at once (its Pod.Finalize and
// finalizePods, v0.17.0 to v0.19.2). gpusched does the same from one watch
// of the pods labelled kueue.x-k8s.io/managed=true, and only while it
// decides: while a Kueue manager is active the finalizer is Kueue's.
#ifndef GPUSCHED_API_KUBE_KUEUE_FINALIZERS_H_
#define GPUSCHED_API_KUBE_KUEUE_FINALIZERS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "api/codec/kueue_pod_json.h"
#include "api/kube/kube_client.h"
#include "api/kube/list_watch.h"

namespace gpusched::kube {

struct KueueFinalizersOptions {
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  std::chrono::milliseconds absent_poll{30000};
  // A release that failed is tried again this long after.
  std::chrono::milliseconds retry_after{5000};
  // Whether this replica may write now (it decides); unset: always.
  std::function<bool()> writing;
};

// The pods of `pods` (by "namespace/name") whose finalizer Kueue would
// release now, in key order.
std::vector<std::string> FinalizersToRelease(
    const std::map<std::string, KueueManagedPod>& pods);

// Thread-safe. The client must outlive it.
class KueueFinalizers : public ListWatchSink {
 public:
  KueueFinalizers(KubeClient& client, KueueFinalizersOptions options);
  ~KueueFinalizers() override;  // Stop()
  KueueFinalizers(const KueueFinalizers&) = delete;
  KueueFinalizers& operator=(const KueueFinalizers&) = delete;

  void Start();
  void Stop();  // idempotent
  // Finalizers released so far.
  int64_t released() const;
  // Wakes the writer (the replica began to decide).
  void Poke();

  void BeginList() override;
  void ListItem(simdjson::dom::element item) override;
  void EndList() override;
  void Event(WatchEventType type, simdjson::dom::element object) override;
  void Absent(const absl::Status& why) override;

 private:
  void Put(simdjson::dom::element object,
           std::map<std::string, KueueManagedPod>& into);
  void ReleaseLoop(std::stop_token stop);
  // The pods to release now that no earlier call has released.
  std::vector<KueueManagedPod> Due();
  bool Release(const KueueManagedPod& pod, std::stop_token stop);

  KubeClient& client_;
  const KueueFinalizersOptions options_;
  mutable std::mutex mu_;
  std::condition_variable_any changed_;
  std::map<std::string, KueueManagedPod> pods_;
  std::map<std::string, KueueManagedPod> listing_;  // between Begin/EndList
  // UIDs whose release landed: not asked again while the watch still shows
  // the finalizer.
  std::set<std::string> released_uids_;
  int64_t released_ = 0;
  uint64_t version_ = 0;
  std::jthread watch_;
  std::jthread writer_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_KUEUE_FINALIZERS_H_
