// Nodes, queues and gang pods for the queueing tests.
#ifndef GPUSCHED_TESTS_QUEUEING_BUILDERS_H_
#define GPUSCHED_TESTS_QUEUEING_BUILDERS_H_

#include <string>

#include "queueing/policy.h"
#include "queueing/workload_types.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

inline constexpr char kProduct[] = "NVIDIA-H100-80GB-HBM3";

inline Node Dgx(const std::string& name, const std::string& rack = "rack-1") {
  Node node;
  node.meta.name = name;
  node.meta.labels = {{"nvidia.com/gpu.product", kProduct},
                      {"kubernetes.io/hostname", name},
                      {"gpusched.io/rack", rack}};
  node.allocatable = {{"nvidia.com/gpu", 8}, {"cpu", 224000}, {"pods", 110}};
  node.capacity = node.allocatable;
  return node;
}

inline ClusterQueue Queue(const std::string& name, int64_t gpus,
                   PreemptionPolicy preemption = {},
                   QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo) {
  ClusterQueue cq{.name = name, .cohort = "research",
                  .queueing_strategy = strategy, .preemption = preemption};
  cq.resource_groups.push_back(ResourceGroup{
      .covered_resources = {"nvidia.com/gpu"},
      .flavors = {FlavorQuotas{.flavor = "h100",
                               .resources = {ResourceQuota{.name = "nvidia.com/gpu",
                                                           .nominal = gpus}}}}});
  return cq;
}

inline Policy TwoTeams(PreemptionPolicy a = {}, PreemptionPolicy b = {}) {
  Policy policy;
  policy.flavors = {ResourceFlavor{.name = "h100",
                                   .node_labels = {{"nvidia.com/gpu.product", kProduct}}}};
  policy.cluster_queues = {Queue("team-a", 8, a), Queue("team-b", 8, b)};
  policy.local_queues = {LocalQueue{"team-a", "q", "team-a"},
                         LocalQueue{"team-b", "q", "team-b"}};
  return policy;
}

inline Pod GangPod(const std::string& ns, const std::string& group, int index, int gpus,
            int count, int32_t priority = 0) {
  Pod pod;
  pod.meta.name = group + "-" + std::to_string(index);
  pod.meta.namespace_name = ns;
  pod.meta.uid = ns + "-" + pod.meta.name;
  pod.meta.labels = {{"kueue.x-k8s.io/queue-name", "q"},
                     {"kueue.x-k8s.io/pod-group-name", group}};
  pod.meta.annotations = {{"kueue.x-k8s.io/pod-group-total-count",
                           std::to_string(count)}};
  pod.priority = priority;
  pod.containers.push_back(Container{.name = "main",
                                     .requests = {{"nvidia.com/gpu", gpus}}});
  return pod;
}

}  // namespace gpusched

#endif  // GPUSCHED_TESTS_QUEUEING_BUILDERS_H_
