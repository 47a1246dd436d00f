#include "bench/lib/queued_workloads.h"

#include <string>

#include "api/codec/pod_admission_state.h"
#include "bench/lib/cluster_generator.h"

namespace gpusched::bench {

int64_t LoadNodes(std::vector<Node> nodes, ClusterModel& model) {
  int64_t gpus = 0;
  for (Node& node : nodes) {
    gpus += node.allocatable.Get(kNvidiaGpu);
    model.UpsertNode(std::move(node));
  }
  return gpus;
}

Policy QueuesPolicy(int queues, int64_t gpus_each) {
  Policy policy;
  policy.flavors = {ResourceFlavor{.name = "any"}};
  for (int q = 0; q < queues; ++q) {
    ClusterQueue cq{.name = "cq-" + std::to_string(q), .cohort = "all"};
    cq.preemption.within_cluster_queue = WithinClusterQueue::kLowerPriority;
    cq.resource_groups.push_back(ResourceGroup{
        .covered_resources = {"nvidia.com/gpu", "cpu", "memory"},
        .flavors = {FlavorQuotas{
            .flavor = "any",
            .resources = {{.name = "nvidia.com/gpu", .nominal = gpus_each},
                          {.name = "cpu", .nominal = int64_t{1} << 30},
                          {.name = "memory", .nominal = int64_t{1} << 50}}}}});
    policy.cluster_queues.push_back(std::move(cq));
    policy.local_queues.push_back(
        LocalQueue{"ns-" + std::to_string(q), "q", cq.name});
    policy.local_queues.back().cluster_queue = "cq-" + std::to_string(q);
  }
  return policy;
}

Pod QueuedGangPod(int w, int p, int pods, int gpus, int q,
                  StringMap extra_annotations) {
  Pod pod = MakeGpuPod("w" + std::to_string(w) + "-" + std::to_string(p), gpus);
  pod.meta.namespace_name = "ns-" + std::to_string(q);
  pod.meta.uid = pod.meta.namespace_name + "/" + pod.meta.name;
  pod.meta.labels = {
      {"kueue.x-k8s.io/queue-name", "q"},
      {"kueue.x-k8s.io/pod-group-name", "g" + std::to_string(w)}};
  pod.meta.annotations = std::move(extra_annotations);
  pod.meta.annotations["kueue.x-k8s.io/pod-group-total-count"] =
      std::to_string(pods);
  ReadPodAdmissionState(pod);
  return pod;
}

}  // namespace gpusched::bench
