// Nodes, queues and gang pods for the queueing tests. The pod builders
// decode each pod's admission state as api/codec does for a pod it reads
// (ReadPodAdmissionState); a test that changes a pod's labels, annotations,
// gates or affinity afterwards calls it again.
#ifndef GPUSCHED_TESTS_QUEUEING_BUILDERS_H_
#define GPUSCHED_TESTS_QUEUEING_BUILDERS_H_

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "api/codec/pod_admission_state.h"
#include "queueing/policy.h"
#include "queueing/queue_decision.h"
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

inline ClusterQueue Queue(
    const std::string& name, int64_t gpus, PreemptionPolicy preemption = {},
    QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo) {
  ClusterQueue cq{.name = name,
                  .cohort = "research",
                  .queueing_strategy = strategy,
                  .preemption = preemption};
  cq.resource_groups.push_back(
      ResourceGroup{.covered_resources = {"nvidia.com/gpu"},
                    .flavors = {FlavorQuotas{
                        .flavor = "h100",
                        .resources = {ResourceQuota{.name = "nvidia.com/gpu",
                                                    .nominal = gpus}}}}});
  return cq;
}

inline Policy TwoTeams(PreemptionPolicy a = {}, PreemptionPolicy b = {}) {
  Policy policy;
  policy.flavors = {ResourceFlavor{
      .name = "h100", .node_labels = {{"nvidia.com/gpu.product", kProduct}}}};
  policy.cluster_queues = {Queue("team-a", 8, a), Queue("team-b", 8, b)};
  policy.local_queues = {LocalQueue{"team-a", "q", "team-a"},
                         LocalQueue{"team-b", "q", "team-b"}};
  return policy;
}

inline Pod GangPod(const std::string& ns, const std::string& group, int index,
                   int gpus, int count, int32_t priority = 0) {
  Pod pod;
  pod.meta.name = group + "-" + std::to_string(index);
  pod.meta.namespace_name = ns;
  pod.meta.uid = ns + "-" + pod.meta.name;
  pod.meta.labels = {{"kueue.x-k8s.io/queue-name", "q"},
                     {"kueue.x-k8s.io/pod-group-name", group}};
  pod.meta.annotations = {
      {"kueue.x-k8s.io/pod-group-total-count", std::to_string(count)}};
  pod.priority = priority;
  pod.containers.push_back(
      Container{.name = "main", .requests = {{"nvidia.com/gpu", gpus}}});
  ReadPodAdmissionState(pod);
  return pod;
}

// Keeps every decision the admission loop publishes, for the test thread:
// admissions and revocations apart from workload statuses, so a test of
// one is not disturbed by the other.
class RecordingSink : public DecisionSink {
 public:
  void Publish(std::vector<QueueDecision> decisions) override {
    std::lock_guard lock(mu_);
    for (QueueDecision& d : decisions) {
      if (auto* status = std::get_if<WorkloadStatus>(&d)) {
        statuses_.push_back(std::move(*status));
      } else {
        all_.push_back(std::move(d));
      }
    }
  }
  // AdmitMember and RevokeMember decisions so far, in order.
  std::vector<QueueDecision> Take() {
    std::lock_guard lock(mu_);
    return std::exchange(all_, {});
  }
  std::vector<WorkloadStatus> TakeStatuses() {
    std::lock_guard lock(mu_);
    return std::exchange(statuses_, {});
  }

 private:
  std::mutex mu_;
  std::vector<QueueDecision> all_;
  std::vector<WorkloadStatus> statuses_;
};

// A pod of its own (no gang) in LocalQueue "q" of `ns`.
inline Pod QueuedPod(const std::string& ns, const std::string& name, int gpus) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_name = ns;
  pod.meta.uid = ns + "-" + name;
  pod.meta.labels = {{kQueueNameLabel, "q"}};
  pod.containers.push_back(
      Container{.name = "main", .requests = {{"nvidia.com/gpu", gpus}}});
  ReadPodAdmissionState(pod);
  return pod;
}

// The pod as gpusched's admission left it: labelled admitted on `node`.
inline Pod AdmittedOn(Pod pod, const std::string& node) {
  pod.meta.labels[kAdmittedLabel] = "true";
  pod.meta.annotations[kAssignedNodeAnnotation] = node;
  ReadPodAdmissionState(pod);
  return pod;
}

// ... pinned there by the affinity that replaced the admission gate.
inline Pod PinnedTo(Pod pod, const std::string& node) {
  pod.required_affinity_terms.push_back(NodeSelectorTerm{
      .match_fields = {NodeSelectorRequirement{
          .key = "metadata.name", .op = "In", .values = {node}}}});
  return AdmittedOn(std::move(pod), node);
}

// ... and bound there, running on the GPUs `gpu_ids` names ("0,1").
inline Pod BoundTo(Pod pod, const std::string& node,
                   const std::string& gpu_ids) {
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  pod.meta.annotations[kGpuIdsAnnotation] = gpu_ids;
  return AdmittedOn(std::move(pod), node);
}

}  // namespace gpusched

#endif  // GPUSCHED_TESTS_QUEUEING_BUILDERS_H_
