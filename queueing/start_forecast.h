// When will a queued workload start: the same engine run forward on a
// virtual clock from a copy of the live state. Running workloads end after
// their expected remaining runtime; the first pass that admits a pending
// workload gives its expected start. A second run that ends every workload
// at its upper bound (activeDeadlineSeconds) gives the latest start, when
// every workload it waits for has one. Where nothing bounds a wait, the
// start is unknown and the forecast says why; it never makes one up.
//
// The copy is taken on the admission loop's thread (TakeForecastSnapshot,
// cheap: the pods, the placements and the model) and the runs happen on
// the forecaster's own thread (RunForecast), so a forecast never holds up
// a pass.
#ifndef GPUSCHED_QUEUEING_START_FORECAST_H_
#define GPUSCHED_QUEUEING_START_FORECAST_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "queueing/policy.h"
#include "queueing/workload_explanation.h"
#include "queueing/workload_types.h"
#include "scheduler/cluster_model.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

class QueueingEngine;

// A workload's runtime as the forecast takes it, and where that came from.
struct RuntimeEstimate {
  enum class Source { kUnknown, kExpected, kDeadline, kHistory };
  Source source = Source::kUnknown;
  int64_t expected_ms = 0;                // with any source but kUnknown
  std::optional<int64_t> upper_bound_ms;  // activeDeadlineSeconds
  std::string why_unknown;                // with kUnknown
};
std::string_view RuntimeSourceName(RuntimeEstimate::Source source);

// Runtimes observed for finished workloads, by queue and shape (history
// arm); empty is allowed.
class RuntimeHistory {
 public:
  virtual ~RuntimeHistory() = default;
  virtual std::optional<int64_t> TypicalRuntimeMs(
      const std::string& cluster_queue, const std::string& shape) const = 0;
};

// The longest of the members' estimates (a gang ends when its last member
// does): the annotation's estimate first, else the deadline as an upper
// bound, else what `history` says of its queue and shape.
RuntimeEstimate EstimateRuntime(const std::vector<const Pod*>& members,
                                const std::string& cluster_queue,
                                const RuntimeHistory* history);
// The shape history keys runtimes by: what the members ask for.
std::string WorkloadShape(const std::vector<const Pod*>& members);

struct ForecastSnapshot {
  struct AdmittedMember {
    Pod pod;
    std::string node;
    bool bound = false;
  };
  int64_t now_ms = 0;
  Policy policy;
  // A copy of the engine's (SyncFrom); never null once taken.
  std::shared_ptr<const ClusterModel> model;
  std::vector<AdmittedMember> admitted;
  std::map<std::string, int64_t> admitted_at_ms;    // by workload key
  std::map<std::string, RuntimeEstimate> runtimes;  // by workload key
  std::vector<PodGroup> groups;
  std::vector<Pod> pending;  // pods of pending workloads
  // When each pending workload was created, by key: its pods join the
  // forecast's engine at that time so that queue order stays as it is.
  std::map<std::string, int64_t> created_ms;
};

// On the loop thread, with the engine and the model it plans on.
ForecastSnapshot TakeForecastSnapshot(const QueueingEngine& engine,
                                      const ClusterModel& model, int64_t now,
                                      const RuntimeHistory* history);

// Loads the snapshot into a fresh engine on a copy of its model: admitted
// members adopted where they run, pending pods at their creation time.
void LoadSnapshot(const ForecastSnapshot& snapshot, QueueingEngine& engine);

// Explain's dry run (QueueingEngine::PreviewPreemption) on a copy of the
// engine and model, taken on the loop thread: the live engine's caches stay
// as they are. None when `key` is not a pending workload.
std::optional<PreemptionPreview> PreviewPreemptionOnCopy(
    const QueueingEngine& engine, const ClusterModel& model,
    const std::string& key, int64_t now);

struct ForecastStart {
  std::optional<int64_t> expected_start_ms;
  std::optional<int64_t> latest_start_ms;
  std::string why_unknown;  // when expected_start_ms is unset
};

struct StartForecast {
  int64_t made_at_ms = 0;                       // the snapshot's time
  std::map<std::string, ForecastStart> starts;  // pending workloads by key
  int steps = 0;                                // passes run, both runs
};

struct ForecastOptions {
  // The forecast looks this far ahead; a start later than that is unknown.
  int64_t horizon_ms = 30LL * 24 * 3600 * 1000;
  // Passes of both runs together; a start beyond them is unknown, and
  // says so.
  int max_steps = 100'000;
  // Finishes close together share one pass: from the next event, every
  // finish within max(min_step_ms, step_fraction × how far ahead it is)
  // happens at the last of them. A start moves later by at most that
  // window (0.5 % of how far ahead it is, at least 1 s: finer than anyone
  // reads a start), and a forecast of thousands of running workloads
  // runs hundreds of passes instead of one per finish.
  int64_t min_step_ms = 1000;
  double step_fraction = 0.005;
  // Wall time for both runs together (live forecasts); unset: none, so
  // that the simulator and benchmarks stay deterministic.
  std::optional<std::chrono::milliseconds> wall_budget;
};

StartForecast RunForecast(const ForecastSnapshot& snapshot,
                          const ForecastOptions& options = {});

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_START_FORECAST_H_
