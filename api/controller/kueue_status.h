// Kueue's ClusterQueue and LocalQueue status, as gpusched decided it: the
// read model (QueueView) in Kueue's fields and words (kueue_status_json.h),
// written to the cluster's objects with --policy-source=kueue, so that
// `kubectl get clusterqueues,localqueues` shows pending and admitted
// workloads and kubectl describe the flavors' usage, as under Kueue.
//
// KueueStatusesOf is the pure mapping; KueueStatusPublisher writes the
// statuses that changed since it last wrote them, from the ticker thread,
// only while this replica decides (two writers would fight).
#ifndef GPUSCHED_API_CONTROLLER_KUEUE_STATUS_H_
#define GPUSCHED_API_CONTROLLER_KUEUE_STATUS_H_

#include <chrono>
#include <map>
#include <string>

#include "api/codec/kueue_status_json.h"
#include "api/kube/kube_client.h"
#include "policies/policy_error.h"
#include "queueing/queue_view.h"

namespace gpusched {

struct KueueStatuses {
  std::map<std::string, KueueQueueStatus> cluster_queues;  // by name
  std::map<std::string, KueueQueueStatus> local_queues;    // "ns/name"
  bool operator==(const KueueStatuses&) const = default;
};

// Every queue of `view` as Kueue would show it, Active since `since` (the
// condition's lastTransitionTime: when gpusched started deciding for it),
// and every ClusterQueue and LocalQueue of `set_aside` (documents
// "clusterqueues/NAME", "localqueues/NS/NAME") inactive, with Kueue's
// reason where Kueue has one and gpusched's error as the message.
KueueStatuses KueueStatusesOf(
    const QueueView& view, std::chrono::system_clock::time_point since,
    const std::vector<SetAsideDocument>& set_aside = {});

class KueueStatusPublisher {
 public:
  explicit KueueStatusPublisher(kube::KubeClient& client) : client_(client) {}

  // Writes what differs from the last write of each queue; a failed write
  // is tried again at the next call, a queue that is gone (404) is not.
  void Publish(const QueueView& view,
               const std::vector<SetAsideDocument>& set_aside);
  // Forget what was written: the next Publish writes everything (after a
  // standby, another replica may have written since).
  void Forget();

 private:
  bool Write(const std::string& path, const KueueQueueStatus& status,
             bool local);

  kube::KubeClient& client_;
  std::chrono::system_clock::time_point since_{};
  KueueStatuses written_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_KUEUE_STATUS_H_
