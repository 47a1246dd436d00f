// Workloads and model snapshots for the engine's stage tests, which drive
// one stage without the engine around it.
#ifndef GPUSCHED_TESTS_QUEUEING_STAGE_BUILDERS_H_
#define GPUSCHED_TESTS_QUEUEING_STAGE_BUILDERS_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"
#include "scheduler/cluster_model.h"
#include "tests/queueing/builders.h"

namespace gpusched {

// A single-pod workload of `gpus` GPUs in `cq` (namespace = cq), pending.
inline Workload SinglePodWorkload(const std::string& cq,
                                  const std::string& name, int gpus,
                                  int32_t priority = 0) {
  Pod pod = GangPod(cq, name, 0, gpus, 1, priority);
  pod.meta.labels.erase("kueue.x-k8s.io/pod-group-name");
  ReadPodAdmissionState(pod);
  Workload w;
  w.key = pod.Key();
  w.namespace_name = cq;
  w.cluster_queue = cq;
  w.local_queue = "q";
  w.priority = priority;
  w.pods[pod.Key()] = pod;
  return w;
}

// Admits `w` by hand: its pods on `node` from GPU `first_gpu` on, its
// queue charged for flavor h100.
inline void AdmitOn(ClusterModel& model, QuotaTree& quota, Workload& w,
                    const std::string& node, int first_gpu,
                    int64_t admitted_at = 0) {
  int gpu = first_gpu;
  for (auto& [key, pod] : w.pods) {
    const int64_t gpus = pod.containers[0].requests.Get("nvidia.com/gpu");
    GpuAssignment assignment{.milli_per_gpu = 1000};
    for (int64_t i = 0; i < gpus; ++i) assignment.gpu_ids.push_back(gpu++);
    Pod on = pod;
    on.node_name = node;
    EXPECT_TRUE(model.Place(on, node, assignment, true).ok()) << key;
    w.placements[key] = Placement{node, assignment};
    w.bound.insert(key);
    w.charged[{"h100", "nvidia.com/gpu"}] += gpus;
  }
  quota.AddUsage(w.cluster_queue, w.charged);
  w.state = Workload::State::kAdmitted;
  w.admitted_at_ms = admitted_at;
}

// Every node's pods with their devices, and free GPU milli: two equal
// snapshots mean nothing placed was changed.
inline std::string Snapshot(const ClusterModel& model) {
  std::string out;
  for (const NodeState* node : model.SortedNodes()) {
    absl::StrAppend(&out, node->name(), " free=", node->gpus().free_milli(),
                    "\n");
    for (const auto& [key, allocation] : node->pods()) {
      absl::StrAppend(&out, "  ", key, " uid=", allocation.uid,
                      " gpus=", FormatGpuIds(allocation.gpus.gpu_ids), "@",
                      allocation.gpus.milli_per_gpu, "\n");
    }
  }
  absl::StrAppend(&out, "pods=", model.pod_count(), "\n");
  return out;
}

}  // namespace gpusched

#endif  // GPUSCHED_TESTS_QUEUEING_STAGE_BUILDERS_H_
