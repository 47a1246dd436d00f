#include "queueing/simulator.h"

#include <chrono>

#include "queueing/engine.h"
#include "scheduler/cluster_model.h"

namespace gpusched {
namespace {

// Bounds a scenario whose timers keep firing (a gang that never gets its
// pods backs off forever): past this many steps the run stops.
constexpr int kMaxSteps = 1'000'000;

void Apply(const ScenarioEvent& event, QueueingEngine& engine,
           ClusterModel& model, int64_t now) {
  for (const PodGroup& group : event.create_groups) engine.AddPodGroup(group, now);
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
}

const char* StateName(Workload::State state) {
  switch (state) {
    case Workload::State::kPending: return "Pending";
    case Workload::State::kAdmitted: return "Admitted";
    case Workload::State::kFinished: return "Finished";
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

SimulationReport BuildReport(const QueueingEngine& engine,
                             const ClusterModel& model) {
  SimulationReport report;
  for (const auto& [key, w] : engine.workloads()) {
    ReportWorkload out{.name = key,
                       .queue = w.cluster_queue,
                       .priority = w.priority,
                       .state = StateName(w.state),
                       .admitted_at_ms = w.admitted_at_ms,
                       .preemptions = w.preemptions,
                       .reason = engine.PendingReason(w)};
    for (const auto& [pod, placement] : w.placements) out.placements[pod] = placement.node;
    if (w.admitted()) ++report.summary.admitted;
    if (w.state == Workload::State::kPending) ++report.summary.pending;
    report.workloads.push_back(std::move(out));
  }
  for (const EngineEvent& e : engine.events()) {
    report.events.push_back(ReportEvent{e.at_ms, e.type, e.workload, e.by, e.reason});
    if (e.type == "Preempted") ++report.summary.preemptions;
  }
  for (const std::string& cq : engine.quota().ClusterQueueNames()) {
    ReportQueue queue{.name = cq};
    for (const ClusterQueue& def : engine.policy().cluster_queues) {
      if (def.name != cq) continue;
      for (const ResourceGroup& g : def.resource_groups) {
        for (const FlavorQuotas& f : g.flavors) {
          for (const ResourceQuota& r : f.resources) {
            int64_t used = engine.quota().Usage(cq, {f.flavor, r.name});
            if (used != 0) queue.usage[f.flavor + "/" + r.name] = used;
          }
        }
      }
    }
    for (const auto& [key, w] : engine.workloads()) {
      if (w.cluster_queue != cq) continue;
      queue.pending += w.state == Workload::State::kPending ? 1 : 0;
      queue.admitted += w.admitted() ? 1 : 0;
    }
    report.queues.push_back(std::move(queue));
  }
  report.summary.gpu_allocation_ratio = GpuAllocationRatio(model);
  return report;
}

}  // namespace

SimulationReport RunSimulation(const Scenario& scenario) {
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
  size_t next = 0;
  int64_t now = 0;
  for (int step = 0; step < kMaxSteps; ++step) {
    std::optional<int64_t> at;
    if (next < scenario.events.size()) at = scenario.events[next].at_ms;
    if (auto wake = (*engine)->NextWakeup(now); wake && (!at || *wake < *at)) {
      at = wake;
    }
    if (!at || (scenario.until_ms >= 0 && *at > scenario.until_ms)) break;
    now = std::max(now, *at);
    while (next < scenario.events.size() && scenario.events[next].at_ms <= now) {
      Apply(scenario.events[next++], **engine, model, now);
    }
    (*engine)->Schedule(now);
  }
  report = BuildReport(**engine, model);
  report.summary.simulated_ms = scenario.until_ms >= 0 ? scenario.until_ms : now;
  report.summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start)
          .count();
  return report;
}

}  // namespace gpusched
