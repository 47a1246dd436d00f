#include "queueing/simulator.h"

#include <chrono>
#include <queue>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "queueing/engine.h"
#include "queueing/invariants.h"
#include "scheduler/cluster_model.h"

namespace gpusched {
namespace {

// Bounds a scenario whose timers keep firing (a gang that never gets its
// pods backs off forever): past this many steps the run stops.
constexpr int kMaxSteps = 1'000'000;

void Apply(const ScenarioEvent& event, QueueingEngine& engine,
           ClusterModel& model, int64_t now) {
  for (const PodGroup& group : event.create_groups)
    engine.AddPodGroup(group, now);
  for (const Pod& pod : event.create_pods) {
    if (!pod.node_name.empty()) {
      (void)model.AddRunningPod(pod);
      continue;
    }
    Pod created = pod;
    if (created.meta.creation_unix_seconds == 0) {
      created.meta.creation_unix_seconds = now / 1000;
    }
    engine.AddPod(created, now);
  }
  for (const std::string& key : event.finish) engine.Finish(key, now);
  for (const std::string& key : event.remove) engine.Delete(key, now);
  for (const std::string& node : event.node_down) engine.NodeDown(node, now);
  for (const std::string& node : event.node_up) engine.NodeUp(node, now);
  for (const ScenarioCheckState& update : event.check_states) {
    engine.SetCheckState(update.workload, update.check, update.state,
                         update.message, now);
  }
}

const char* StateName(Workload::State state) {
  switch (state) {
    case Workload::State::kPending:
      return "Pending";
    case Workload::State::kAdmitted:
      return "Admitted";
    case Workload::State::kFinished:
      return "Finished";
  }
  return "Pending";
}

double GpuAllocationRatio(const ClusterModel& model) {
  int64_t total = 0;
  int64_t free = 0;
  for (const NodeState* node : model.SortedNodes()) {
    total += node->gpus().total_milli();
    free += node->gpus().free_milli();
  }
  return total == 0 ? 0 : static_cast<double>(total - free) / total;
}

void AddWorkloads(const QueueingEngine& engine, SimulationReport& report) {
  const auto positions = engine.PendingPositions();
  for (const auto& [key, w] : engine.workloads()) {
    auto position = positions.find(&w);
    ReportWorkload out{
        .name = key,
        .queue = w.cluster_queue,
        .priority = w.priority,
        .state = StateName(w.state),
        .admitted_at_ms = w.admitted_at_ms,
        .preemptions = w.preemptions,
        .reason = position == positions.end()
                      ? w.reason
                      : engine.PendingReason(w, position->second.first,
                                             position->second.second)};
    for (const auto& [pod, placement] : w.placements)
      out.placements[pod] = placement.node;
    if (w.admitted()) ++report.summary.admitted;
    if (w.state == Workload::State::kPending) ++report.summary.pending;
    report.workloads.push_back(std::move(out));
  }
}

void AddEvents(const QueueingEngine& engine, SimulationReport& report) {
  for (const EngineEvent& e : engine.events()) {
    report.events.push_back(ReportEvent{e.at_ms,
                                        std::string(EngineEventName(e.type)),
                                        e.workload, e.by, e.reason});
    if (e.type == EngineEvent::Type::kPreempted) ++report.summary.preemptions;
  }
}

// What `cq` uses, by "flavor/resource", of the quotas it defines (only
// those it uses some of).
std::map<std::string, int64_t> QueueUsage(const QueueingEngine& engine,
                                          const std::string& cq) {
  std::map<std::string, int64_t> usage;
  for (const ClusterQueue& def : engine.policy().cluster_queues) {
    if (def.name != cq) continue;
    for (const ResourceGroup& g : def.resource_groups) {
      for (const FlavorQuotas& f : g.flavors) {
        for (const ResourceQuota& r : f.resources) {
          int64_t used = engine.quota().Usage(cq, {f.flavor, r.name});
          if (used != 0) usage[f.flavor + "/" + r.name] = used;
        }
      }
    }
  }
  return usage;
}

void AddQueues(const QueueingEngine& engine, SimulationReport& report) {
  std::map<std::string, std::pair<int, int>> counts;  // pending, admitted
  for (const auto& [key, w] : engine.workloads()) {
    counts[w.cluster_queue].first += w.state == Workload::State::kPending;
    counts[w.cluster_queue].second += w.admitted();
  }
  for (const std::string& cq : engine.quota().ClusterQueueNames()) {
    report.queues.push_back(ReportQueue{.name = cq,
                                        .usage = QueueUsage(engine, cq),
                                        .pending = counts[cq].first,
                                        .admitted = counts[cq].second});
  }
}

SimulationReport BuildReport(const QueueingEngine& engine,
                             const ClusterModel& model) {
  SimulationReport report;
  AddWorkloads(engine, report);
  AddEvents(engine, report);
  AddQueues(engine, report);
  report.summary.gpu_allocation_ratio = GpuAllocationRatio(model);
  return report;
}

// Finishes workloads whose pods carry a simulated runtime, that long after
// their admission. An entry is stale when the workload was preempted or
// re-admitted since: the admission time no longer matches.
class RuntimeFinisher {
 public:
  // Looks at admissions the engine reported since the last call.
  void Track(const QueueingEngine& engine) {
    const std::vector<EngineEvent>& events = engine.events();
    for (; seen_ < events.size(); ++seen_) {
      if (events[seen_].type != EngineEvent::Type::kAdmitted) continue;
      auto it = engine.workloads().find(events[seen_].workload);
      if (it == engine.workloads().end() || !it->second.admitted()) continue;
      const int64_t runtime = RuntimeOf(it->second);
      if (runtime < 0) continue;
      due_.emplace(it->second.admitted_at_ms + runtime, it->first,
                   it->second.admitted_at_ms);
    }
  }
  std::optional<int64_t> NextDue() const {
    if (due_.empty()) return std::nullopt;
    return std::get<0>(due_.top());
  }
  void FinishDue(QueueingEngine& engine, int64_t now) {
    while (!due_.empty() && std::get<0>(due_.top()) <= now) {
      auto [at, key, admitted_at] = due_.top();
      due_.pop();
      auto it = engine.workloads().find(key);
      if (it != engine.workloads().end() && it->second.admitted() &&
          it->second.admitted_at_ms == admitted_at) {
        engine.Finish(key, now);
      }
    }
  }

 private:
  // The longest runtime among the members (they finish together).
  static int64_t RuntimeOf(const Workload& w) {
    int64_t longest = -1;
    for (const auto& [key, pod] : w.pods) {
      absl::StatusOr<int64_t> runtime = SimulatedRuntimeMs(pod);
      if (runtime.ok()) longest = std::max(longest, *runtime);
    }
    return longest;
  }

  using Due = std::tuple<int64_t, std::string, int64_t>;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  size_t seen_ = 0;
};

// --check-invariants after a step: the error says where the run was.
absl::Status CheckStep(const QueueingEngine& engine, const ClusterModel& model,
                       int step, int64_t now) {
  absl::Status checked =
      CheckInvariants(engine, model, {.now = now, .engine_owns_model = true});
  if (checked.ok()) return checked;
  return absl::FailedPreconditionError(absl::StrCat(
      "step ", step, " at ", absl::FormatDuration(absl::Milliseconds(now)),
      " (", now, " ms): ", checked.message()));
}

// The simulated clock's next stop: the next scenario event, engine
// wakeup or runtime end, whichever comes first; none when nothing is left.
std::optional<int64_t> NextStop(const Scenario& scenario, size_t next,
                                const QueueingEngine& engine,
                                const RuntimeFinisher& finisher, int64_t now) {
  std::optional<int64_t> at;
  auto earliest = [&at](std::optional<int64_t> other) {
    if (other && (!at || *other < *at)) at = other;
  };
  if (next < scenario.events.size()) at = scenario.events[next].at_ms;
  earliest(engine.NextWakeup(now));
  earliest(finisher.NextDue());
  return at;
}

// Steps the clock through the scenario; returns where it stopped.
absl::StatusOr<int64_t> RunSteps(const Scenario& scenario,
                                 const SimulationOptions& options,
                                 QueueingEngine& engine, ClusterModel& model) {
  size_t next = 0;
  int64_t now = 0;
  RuntimeFinisher finisher;
  for (int step = 0; step < kMaxSteps; ++step) {
    std::optional<int64_t> at = NextStop(scenario, next, engine, finisher, now);
    if (!at || (scenario.until_ms >= 0 && *at > scenario.until_ms)) break;
    now = std::max(now, *at);
    while (next < scenario.events.size() &&
           scenario.events[next].at_ms <= now) {
      Apply(scenario.events[next++], engine, model, now);
    }
    finisher.FinishDue(engine, now);
    engine.Schedule(now);
    finisher.Track(engine);
    if (options.check_invariants) {
      absl::Status checked = CheckStep(engine, model, step, now);
      if (!checked.ok()) return checked;
    }
  }
  return now;
}

}  // namespace

absl::StatusOr<int64_t> SimulatedRuntimeMs(const Pod& pod) {
  auto it = pod.meta.annotations.find(kSimulatedRuntimeAnnotation);
  if (it == pod.meta.annotations.end()) return -1;
  absl::Duration duration;
  if (!absl::ParseDuration(it->second, &duration) ||
      duration < absl::ZeroDuration() || duration == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        "must be a non-negative duration such as 20s or 1m30s");
  }
  return absl::ToInt64Milliseconds(duration);
}

SimulationReport RunSimulation(const Scenario& scenario) {
  // Without checks nothing can fail.
  return *RunSimulation(scenario, SimulationOptions{});
}

absl::StatusOr<SimulationReport> RunSimulation(
    const Scenario& scenario, const SimulationOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  ClusterModel model;
  for (const Node& node : scenario.nodes) model.UpsertNode(node);
  auto engine = QueueingEngine::Create(
      scenario.policy, &model,
      EngineOptions{.requeue_preempted = scenario.requeue_preempted,
                    .bind_on_admission = true});
  SimulationReport report;
  if (!engine.ok()) {
    report.summary.wall_seconds = 0;
    return report;
  }
  absl::StatusOr<int64_t> end = RunSteps(scenario, options, **engine, model);
  if (!end.ok()) return end.status();
  report = BuildReport(**engine, model);
  report.summary.simulated_ms =
      scenario.until_ms >= 0 ? scenario.until_ms : *end;
  report.summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                    wall_start)
          .count();
  return report;
}

}  // namespace gpusched
