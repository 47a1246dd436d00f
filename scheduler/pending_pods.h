#ifndef GPUSCHED_SCHEDULER_PENDING_PODS_H_
#define GPUSCHED_SCHEDULER_PENDING_PODS_H_

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "scheduler/base/strings.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// The pods kube-scheduler has shown gpusched in filter calls, by UID. The
// bind verb carries only name, namespace, UID and node, so bind looks the
// pod's requests up here. Bounded: the oldest entries go first.
class PendingPods {
 public:
  explicit PendingPods(size_t capacity) : capacity_(capacity) {}

  void Remember(const Pod& pod);
  std::shared_ptr<const Pod> Find(std::string_view uid) const;
  void Forget(std::string_view uid);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  size_t capacity_;
  struct Entry {
    std::shared_ptr<const Pod> pod;
    uint64_t sequence = 0;
  };
  uint64_t next_sequence_ = 0;
  StringKeyMap<Entry> by_uid_;
  // (uid, sequence): an entry ages out only if it was not remembered again.
  std::deque<std::pair<std::string, uint64_t>> arrival_order_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_PENDING_PODS_H_
