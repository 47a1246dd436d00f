// The visibility API's resources for the dashboard (visibility_api.h):
// gpunodes, the GPU map with each holder's queue, and decisions, the last
// admissions, preemptions and evictions. Both read published snapshots
// only: the map (GpuMapPublisher), the queues (the loop's QueueView) and
// the decision log.
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/dashboard_json.h"
#include "api/codec/visibility_json.h"
#include "api/server/visibility_api.h"

namespace gpusched {

// The map changes with the model's nodes, its colours with the queues:
// the same map and pass answer the same document, so a poll that already
// has it (If-None-Match) gets 304 and the 4 MB of a 5,000-node map are
// neither encoded nor sent again.
http::Response VisibilityApi::ServeGpuNodes(const http::Request& request,
                                            const QueueView& view) const {
  std::shared_ptr<const GpuMap> map =
      options_.gpu_map ? options_.gpu_map() : nullptr;
  if (map == nullptr) {
    return {.status = 503,
            .body = EncodeFailureStatus(503, "ServiceUnavailable",
                                        "the GPU map is not known yet")};
  }
  const std::string version = absl::StrCat(map->generation, ".", view.pass);
  const std::string etag = absl::StrCat("\"", version, "\"");
  for (std::string_view tag : HeaderValues(request, "if-none-match")) {
    if (tag == etag) {
      return {.status = 304, .headers = {{"ETag", etag}}};
    }
  }
  // Which admitted workload holds each pod: a node's holders are pods.
  std::unordered_map<std::string_view, const AdmittedWorkload*> by_pod;
  for (const ClusterQueueView& cq : view.cluster_queues) {
    for (const AdmittedWorkload& workload : cq.admitted) {
      for (const std::string& member : workload.members) {
        by_pod.emplace(member, &workload);
      }
    }
  }
  return {.body = EncodeGpuNodeList(
              *map, version,
              [&by_pod](std::string_view pod) -> const AdmittedWorkload* {
                auto it = by_pod.find(pod);
                return it == by_pod.end() ? nullptr : it->second;
              }),
          .headers = {{"ETag", etag}, {"Cache-Control", "no-cache"}}};
}

// A namespace's list holds its own workloads' decisions only; the list
// without a namespace (reviewed at the cluster scope) holds every one.
http::Response VisibilityApi::ServeDecisions(
    const ResourceAttributes& attributes) const {
  std::shared_ptr<const RecentDecisions> all =
      options_.decisions ? options_.decisions() : nullptr;
  std::vector<const RecentDecision*> shown;
  if (all != nullptr) {
    for (const RecentDecision& d : *all) {
      if (attributes.namespace_name.empty() ||
          d.namespace_name == attributes.namespace_name) {
        shown.push_back(&d);
      }
    }
  }
  return {.body = EncodeDecisionList(shown)};
}

}  // namespace gpusched
