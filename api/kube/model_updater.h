// Applies what the API server says about nodes and pods to the extender's
// model. Internal to the kube library; ClusterSync feeds it.
//
// Only pods that hold resources enter the model: bound (spec.nodeName set)
// and not terminal. A pod bound to a node the model does not know yet (the
// node and pod watches race) waits as an "orphan" until the node arrives.
#ifndef GPUSCHED_API_KUBE_MODEL_UPDATER_H_
#define GPUSCHED_API_KUBE_MODEL_UPDATER_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/kube/watch_event_type.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/extender_service.h"
#include "scheduler/k8s_objects.h"

namespace gpusched::kube::internal {

// What RefreshDraDevices reads the devices from (DraAttacher in the live
// path). A value, not the attacher, so the updater and its fuzz target do
// not link the API client the attacher's sync runs on.
struct DraDeviceSource {
  std::vector<std::string> published;  // nodes with devices now, sorted
  std::function<std::shared_ptr<const DraNodeDevices>(const std::string&)>
      devices_of;
  // Every node, or only these (the ones a DRA change touched).
  bool all = true;
  std::set<std::string> only;
};

// Thread-safe: the node and pod watches call it from their own threads.
class ModelUpdater {
 public:
  explicit ModelUpdater(ExtenderService& service) : service_(service) {}

  // A complete node list: upserts them and removes nodes not listed; one
  // named in `undecodable` (listed, but it does not decode) stays as it
  // was.
  void ReplaceNodes(std::vector<Node> nodes,
                    const std::vector<std::string>& undecodable = {});
  // A watch event: added, modified or deleted.
  void ApplyNode(WatchEventType type, Node node);

  // A complete pod list: places bound pods, removes terminal ones and those
  // no longer listed. A listed pod that is not bound yet but is placed in
  // the model stays: a bind in flight assumed it there.
  // Pods named ("namespace/name") in `undecodable` stay as they were.
  void ReplacePods(const std::vector<Pod>& pods,
                   const std::vector<std::string>& undecodable = {});
  void ApplyPod(WatchEventType type, const Pod& pod);

  // Upserts again every node whose DRA devices are no longer the ones
  // the model holds (Node::dra_devices), keeping the rest of the Node.
  void RefreshDraDevices(const DraDeviceSource& dra);

  size_t orphan_count() const;

 private:
  void Forget(const std::string& uid);
  void PlaceLocked(const Pod& pod);
  void AdoptOrphansLocked(std::string_view node);
  // Bound pods the model records on their node without the GPUs they ask
  // for (the node did not offer them yet: a node registers before its
  // device plugin reports): placed again on the node's next change, or
  // their GPUs would look free.
  void PlaceShortAgainLocked(std::string_view node);

  ExtenderService& service_;
  // Held across "is the node known? then place, else orphan" and around
  // adopting orphans after a node upsert, so no orphan is missed.
  mutable std::mutex mu_;
  std::map<std::string, Pod, std::less<>> orphans_;  // by UID; guarded by mu_
  std::map<std::string, Pod, std::less<>> short_;    // by UID; guarded by mu_
};

}  // namespace gpusched::kube::internal

#endif  // GPUSCHED_API_KUBE_MODEL_UPDATER_H_
