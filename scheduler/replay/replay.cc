#include "scheduler/replay/replay.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/status/status.h"
#include "scheduler/replay/placement_policy.h"
#include "scheduler/replay/replay_cluster.h"
#include "scheduler/replay/sampling.h"
#include "scheduler/scoring.h"

namespace gpusched::replay {
namespace {

// Floating error must not move a point past the arrival that reaches it.
constexpr double kLoadEpsilon = 1e-9;

std::vector<double> CheckpointLoads(double load) {
  std::vector<double> loads;
  for (double level : {0.8, 0.9, 1.0}) {
    if (level < load - kLoadEpsilon) loads.push_back(level);
  }
  loads.push_back(load);
  return loads;
}

std::vector<double> CurveLoads(double load, double step) {
  std::vector<double> loads;
  if (!(step > 0)) return loads;
  for (int i = 1; i * step < load - kLoadEpsilon; ++i)
    loads.push_back(i * step);
  loads.push_back(load);
  return loads;
}

// Records the allocation ratio at each load level the arrivals cross.
class LoadRecorder {
 public:
  explicit LoadRecorder(std::vector<double> levels)
      : levels_(std::move(levels)) {}

  void Record(double arrived_load, double allocation_ratio) {
    while (next_ < levels_.size() &&
           arrived_load >= levels_[next_] - kLoadEpsilon) {
      points_.push_back(LoadPoint{.arrived_load = levels_[next_],
                                  .allocation_ratio = allocation_ratio});
      ++next_;
    }
  }
  std::vector<LoadPoint> Take() { return std::move(points_); }

 private:
  std::vector<double> levels_;
  size_t next_ = 0;
  std::vector<LoadPoint> points_;
};

ReplayReport EmptyReport(const Trace& trace, const ReplayOptions& options,
                         const ReplayCluster& cluster) {
  ReplayReport report{.scorer = options.scorer,
                      .seed = options.seed,
                      .load = options.load,
                      .nodes = static_cast<int64_t>(trace.nodes.size())};
  report.gpus = cluster.total_milli() / kTraceMilliPerGpu;
  return report;
}

// One arrival: the policy observes the pod and places it, or it fails.
absl::Status Submit(const ReplayPod& pod, PlacementPolicy& policy,
                    ReplayCluster& cluster, ReplayReport& report) {
  ++report.arrived_pods;
  report.arrived_milli += pod.trace->GpuMilliRequest();
  policy.Observe(pod);
  std::optional<Choice> choice = policy.Choose(pod, cluster);
  if (!choice) {
    ++report.failed_pods;
    report.failed_milli += pod.trace->GpuMilliRequest();
    return absl::OkStatus();
  }
  ++report.placed_pods;
  if (choice->gpus.gpu_ids.size() >= 2) {
    ++report.multi_gpu_pods;
    // A running sum until RunReplay divides it.
    report.multi_gpu_topology_score += TopologyScore(
        ScoreInput{pod.view, cluster.node(choice->node).state, choice->gpus});
  }
  return cluster.Place(pod, choice->node, choice->gpus);
}

}  // namespace

absl::StatusOr<ReplayReport> RunReplay(const Trace& trace,
                                       const ReplayOptions& options) {
  ReplayCluster cluster(trace.nodes);
  absl::StatusOr<std::vector<int>> arrivals = SampleArrivals(
      trace.pods, cluster.total_milli(), options.load, options.seed);
  if (!arrivals.ok()) return arrivals.status();
  const ReplayPods pods(trace.pods);
  absl::StatusOr<std::unique_ptr<PlacementPolicy>> policy =
      MakePolicy(options.scorer, pods.shape_count(), options.seed);
  if (!policy.ok()) return policy.status();

  ReplayReport report = EmptyReport(trace, options, cluster);
  LoadRecorder checkpoints(CheckpointLoads(options.load));
  LoadRecorder curve(CurveLoads(options.load, options.curve_step));
  const double capacity = static_cast<double>(cluster.total_milli());
  for (int index : *arrivals) {
    if (absl::Status s = Submit(pods.at(index), **policy, cluster, report);
        !s.ok()) {
      return s;
    }
    const double arrived = static_cast<double>(report.arrived_milli) / capacity;
    const double ratio =
        static_cast<double>(cluster.allocated_milli()) / capacity;
    checkpoints.Record(arrived, ratio);
    curve.Record(arrived, ratio);
  }
  if (report.multi_gpu_pods > 0) {
    report.multi_gpu_topology_score /=
        static_cast<double>(report.multi_gpu_pods);
  }
  report.allocated_milli = cluster.allocated_milli();
  report.checkpoints = checkpoints.Take();
  report.curve = curve.Take();
  return report;
}

}  // namespace gpusched::replay
