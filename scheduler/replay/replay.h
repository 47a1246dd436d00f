#ifndef GPUSCHED_SCHEDULER_REPLAY_REPLAY_H_
#define GPUSCHED_SCHEDULER_REPLAY_REPLAY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/replay/trace.h"

namespace gpusched::replay {

struct ReplayOptions {
  double load = 1.3;  // arrived GPU requests / cluster GPU capacity
  uint64_t seed = 0;
  std::string scorer = "default";  // see MakePolicy
  double curve_step = 0.01;        // arrived-load spacing of the curve
};

// The GPU allocation ratio (allocated milli-GPU / total milli-GPU) once the
// arrived GPU requests first reach `arrived_load` x capacity.
struct LoadPoint {
  double arrived_load = 0;
  double allocation_ratio = 0;
};

struct ReplayReport {
  std::string scorer;
  uint64_t seed = 0;
  double load = 0;
  int64_t nodes = 0;
  int64_t gpus = 0;
  int64_t arrived_pods = 0;
  int64_t placed_pods = 0;
  int64_t failed_pods = 0;
  int64_t arrived_milli = 0;    // GPU milli requested by arrived pods
  int64_t allocated_milli = 0;  // GPU milli held at the end
  int64_t failed_milli = 0;     // GPU milli of the pods that failed
  // Placed pods with two or more GPUs, and the mean link quality of the
  // sets they got (TopologyScore, 0..100): what packing cost topology.
  int64_t multi_gpu_pods = 0;
  double multi_gpu_topology_score = 0;
  // At arrived load 0.8, 0.9, 1.0 and `load` (those not above `load`).
  std::vector<LoadPoint> checkpoints;
  // Every `curve_step` of arrived load, for plots.
  std::vector<LoadPoint> curve;
};

// The FGD paper's experiment (Weng et al., ATC '23): pods drawn from
// trace.pods with replacement (seeded) until the arrived GPU requests reach
// load x capacity, submitted one at a time and never leaving; a pod that
// fits no node fails and is skipped.
//
// Steps: 1. sample the arrivals; 2. per arrival: the policy observes the
// pod, chooses a node (or none), the cluster places it; 3. record the
// allocation ratio at each checkpoint and curve point the arrival crosses.
absl::StatusOr<ReplayReport> RunReplay(const Trace& trace,
                                       const ReplayOptions& options);

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_REPLAY_H_
