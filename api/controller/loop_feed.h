// Feeds the admission loop from the cluster watches: the live server's
// half of the queueing core's one way in (the simulator feeds the same
// inputs from its scenario).
#ifndef GPUSCHED_API_CONTROLLER_LOOP_FEED_H_
#define GPUSCHED_API_CONTROLLER_LOOP_FEED_H_

#include <array>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/controller/admission_loop.h"
#include "api/kube/cluster_sync.h"
#include "api/kube/podgroup_api.h"
#include "api/kube/podgroup_sync.h"
#include "api/kube/watched_pods.h"

namespace gpusched {

class LoopFeed : public kube::SyncListener, public kube::PodGroupListener {
 public:
  // `watched`, when given, is kept in step with the pod watch for the
  // decision writer (kube/watched_pods.h); it must outlive the feed.
  explicit LoopFeed(AdmissionLoop& loop, kube::WatchedPods* watched = nullptr)
      : loop_(loop), watched_(watched) {}

  void OnPodsListed(const std::vector<Pod>& pods,
                    const std::vector<std::string>& undecodable) override {
    if (watched_ != nullptr) watched_->Listed(pods);
    loop_.PodsListed(pods, undecodable);
  }
  void OnPod(kube::WatchEventType type, const Pod& pod) override {
    if (type == kube::WatchEventType::kDeleted) {
      if (watched_ != nullptr) watched_->Deleted(pod);
      loop_.PodDeleted(pod);
    } else {
      if (watched_ != nullptr) watched_->Upserted(pod);
      loop_.PodUpserted(pod);
    }
  }
  // The node watch has already updated the model; the core needs to hear
  // of a node that is gone (its members lose their placements), and of one
  // that came (a pass adopts the pods that waited for it).
  void OnNode(kube::WatchEventType type, const Node& node) override {
    if (type == kube::WatchEventType::kDeleted) {
      loop_.NodeRemoved(node.meta.name);
    } else if (type == kube::WatchEventType::kAdded) {
      loop_.NodeAdded(node.meta.name);
    }
  }
  void OnNodesListed(const std::vector<std::string>& undecodable) override {
    loop_.NodesListed(undecodable);
  }
  void OnRelisting(std::string_view kind) override {
    loop_.Relisting(kind == "nodes" ? ListKind::kNodes : ListKind::kPods);
  }
  void OnDraListed() override { loop_.DraListed(); }

  // A PodGroup list names every group of its API: the ones this feed
  // passed on before and that are missing now were deleted unseen.
  void OnPodGroupsListed(PodGroup::Flavor flavor,
                         std::vector<PodGroup> groups) override {
    std::set<std::string> listed;
    for (const PodGroup& group : groups) listed.insert(group.Key());
    std::lock_guard lock(mu_);
    std::set<std::string>& known = groups_[kube::FlavorIndex(flavor)];
    for (const std::string& key : known) {
      if (!listed.contains(key)) loop_.PodGroupDeleted(key);
    }
    known = std::move(listed);
    failing_[kube::FlavorIndex(flavor)].clear();
    loop_.PodGroupsListed(flavor, std::move(groups));
  }
  void OnPodGroupsRelisting(PodGroup::Flavor flavor) override {
    loop_.Relisting(GroupListKind(flavor));
  }
  void OnPodGroupListFailing(PodGroup::Flavor flavor,
                             const std::string& error) override {
    {
      std::lock_guard lock(mu_);
      failing_[kube::FlavorIndex(flavor)] = error;
    }
    loop_.PodGroupApiFailing(flavor, error);
  }

  // The PodGroup APIs whose lists keep failing, with the last error, by
  // API ("scheduling.volcano.sh/v1beta1"), for /readyz and /metrics.
  std::map<std::string, std::string> FailingApis() const {
    std::lock_guard lock(mu_);
    std::map<std::string, std::string> out;
    for (const kube::PodGroupApi& api : kube::kPodGroupApis) {
      const std::string& error = failing_[kube::FlavorIndex(api.flavor)];
      if (!error.empty()) out.emplace(std::string(api.group_version), error);
    }
    return out;
  }
  void OnPodGroup(kube::WatchEventType type, PodGroup group) override {
    std::lock_guard lock(mu_);
    std::set<std::string>& known = groups_[kube::FlavorIndex(group.flavor)];
    if (type == kube::WatchEventType::kDeleted) {
      known.erase(group.Key());
      loop_.PodGroupDeleted(group.Key());
      return;
    }
    known.insert(group.Key());
    loop_.PodGroupUpserted(std::move(group));
  }

 private:
  AdmissionLoop& loop_;
  kube::WatchedPods* const watched_;
  mutable std::mutex mu_;
  // Keys passed on, per API.
  std::array<std::set<std::string>, kube::kPodGroupFlavors> groups_;
  // The last error of an API whose list keeps failing; "" when it lists.
  std::array<std::string, kube::kPodGroupFlavors> failing_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_LOOP_FEED_H_
