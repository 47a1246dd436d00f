#ifndef GPUSCHED_SCHEDULER_REPLAY_REPLAY_CLUSTER_H_
#define GPUSCHED_SCHEDULER_REPLAY_REPLAY_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"
#include "scheduler/replay/trace.h"

namespace gpusched::replay {

// A trace pod as the live scorers see it (a Pod with cpu, memory and
// nvidia.com/gpu requests, shares as gpusched.io/gpu-milli), plus the id of
// its shape: pods with equal requests and GPU models share an id, so that
// scores may be cached per (node, shape).
struct ReplayPod {
  const TracePod* trace = nullptr;
  Pod pod;
  PodView view;  // view.pod points at `pod`: a ReplayPod never moves
  int shape_id = 0;
};

// The trace's pods prepared once each; arrivals refer to them by index.
class ReplayPods {
 public:
  explicit ReplayPods(std::span<const TracePod> pods);
  const ReplayPod& at(int index) const { return *pods_[index]; }
  int shape_count() const { return shape_count_; }

 private:
  std::vector<std::unique_ptr<ReplayPod>> pods_;
  int shape_count_ = 0;
};

// One trace node: a NodeState for the live scorers, with a plain mirror of
// what is free for the fast feasibility check and the baselines.
struct ReplayNode {
  explicit ReplayNode(Node node) : state(std::move(node)) {}

  NodeState state;
  std::string model;
  int64_t cpu_capacity = 0;     // milli
  int64_t memory_capacity = 0;  // MiB
  int64_t free_cpu = 0;
  int64_t free_memory = 0;
  std::vector<int> free_milli;  // per GPU
  int whole_free_gpus = 0;
  int largest_free_share = 0;
  // Increases on every placement here; caches key on it.
  uint64_t version = 0;
};

// The cluster of a replay. Not synchronised: one replay, one thread.
//
// Invariant: each node's mirror equals its NodeState (free CPU, memory and
// per-GPU milli), and allocated_milli() is the sum of placed GPU milli.
class ReplayCluster {
 public:
  explicit ReplayCluster(std::span<const TraceNode> nodes);

  // CPU, memory, GPU model and GPUs all fit now.
  bool Fits(const ReplayPod& pod, int node) const;
  // The GPUs the pod gets on a node it fits: whole GPUs through PlanGpus
  // (the live allocator: best linked free set); a share on the GPU with the
  // least free milli that holds it, lowest index on ties (the rule of the
  // live PlanShare, which itself accepts shares only on time-sliced nodes).
  GpuAssignment PlanGpus(const ReplayPod& pod, int node) const;
  // Fails (an Internal error: a policy bug) when the pod does not fit.
  absl::Status Place(const ReplayPod& pod, int node, const GpuAssignment& gpus);

  int size() const { return static_cast<int>(nodes_.size()); }
  const ReplayNode& node(int index) const { return *nodes_[index]; }
  int64_t total_milli() const { return total_milli_; }
  int64_t allocated_milli() const { return allocated_milli_; }
  int64_t max_cpu_capacity() const { return max_cpu_; }
  int64_t max_gpu_milli() const { return max_gpu_milli_; }

 private:
  void Refresh(ReplayNode& node);

  std::vector<std::unique_ptr<ReplayNode>> nodes_;
  int64_t total_milli_ = 0;
  int64_t allocated_milli_ = 0;
  int64_t max_cpu_ = 0;
  int64_t max_gpu_milli_ = 0;
  int64_t placed_ = 0;
};

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_REPLAY_CLUSTER_H_
