// The pods waiting for a node, as the pod watch last delivered them, so
// that an admission can patch a pod without reading it first (issue G §2):
// the watch already holds the resourceVersion, gates and node affinity the
// patch is made against, and a watch that was behind costs one 409 and a
// read, not a read before every write.
//
// Only unbound pods that have not finished are kept: they are the ones
// gpusched writes to, and a cluster's bound pods may be many.
//
// Thread-safety: every method may be called from any thread.
#ifndef GPUSCHED_API_KUBE_WATCHED_PODS_H_
#define GPUSCHED_API_KUBE_WATCHED_PODS_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/k8s_objects.h"

namespace gpusched::kube {

class WatchedPods {
 public:
  // A complete pod list: pods not in it are gone.
  void Listed(const std::vector<Pod>& pods) {
    std::map<std::string, Pod, std::less<>> waiting;
    for (const Pod& pod : pods) {
      if (Waits(pod)) waiting.emplace(pod.Key(), pod);
    }
    std::lock_guard lock(mu_);
    pods_ = std::move(waiting);
  }
  // An ADDED or MODIFIED event.
  void Upserted(const Pod& pod) {
    std::lock_guard lock(mu_);
    if (Waits(pod)) {
      pods_.insert_or_assign(pod.Key(), pod);
    } else {
      Erase(pod.Key());
    }
  }
  void Deleted(const Pod& pod) {
    std::lock_guard lock(mu_);
    Erase(pod.Key());
  }

  // The pod "namespace/name" as last seen, if it is waiting for a node.
  std::optional<Pod> Find(std::string_view key) const {
    std::lock_guard lock(mu_);
    auto it = pods_.find(key);
    if (it == pods_.end()) return std::nullopt;
    return it->second;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return pods_.size();
  }

 private:
  static bool Waits(const Pod& pod) {
    return pod.node_name.empty() && !IsTerminal(pod) && !pod.meta.deleting;
  }
  void Erase(const std::string& key) {
    auto it = pods_.find(key);
    if (it != pods_.end()) pods_.erase(it);
  }

  mutable std::mutex mu_;
  std::map<std::string, Pod, std::less<>> pods_;  // guarded by mu_
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_WATCHED_PODS_H_
