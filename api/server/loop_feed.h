// Feeds the admission loop from the cluster watches: the live server's
// half of the queueing core's one way in (the simulator feeds the same
// inputs from its scenario).
#ifndef GPUSCHED_API_SERVER_LOOP_FEED_H_
#define GPUSCHED_API_SERVER_LOOP_FEED_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/kube/cluster_sync.h"
#include "queueing/admission_loop.h"

namespace gpusched {

class LoopFeed : public kube::SyncListener {
 public:
  explicit LoopFeed(AdmissionLoop& loop) : loop_(loop) {}

  void OnPodsListed(const std::vector<Pod>& pods) override {
    loop_.PodsListed(pods);
  }
  void OnPod(std::string_view type, const Pod& pod) override {
    if (type == "DELETED") {
      loop_.PodDeleted(pod);
    } else {
      loop_.PodUpserted(pod);
    }
  }
  // The node watch has already updated the model; the core only needs to
  // hear of a node that is gone (its members lose their placements).
  void OnNode(std::string_view type, const Node& node) override {
    if (type == "DELETED") loop_.NodeRemoved(node.meta.name);
  }

 private:
  AdmissionLoop& loop_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_LOOP_FEED_H_
