#include "queueing/queue_gate.h"

#include "absl/strings/str_cat.h"

namespace gpusched {

bool QueueGate::Manages(const Pod& pod) const {
  return pod.meta.labels.contains(kQueueNameLabel) ||
         WorkloadOf(pod).kind != WorkloadRef::Kind::kSinglePod;
}

QueueingEngine& QueueGate::EngineFor(ClusterModel& model) {
  if (engine_ == nullptr) {
    // The policy was validated when loaded; Create only fails on cycles,
    // which validation rejects, so an empty policy is the safe fallback.
    auto engine = QueueingEngine::Create(policy_, &model);
    engine_ = engine.ok() ? *std::move(engine)
                          : *QueueingEngine::Create(Policy{}, &model);
  }
  return *engine_;
}

GateVerdict QueueGate::Check(const Pod& pod, ClusterModel& model,
                             int64_t now_ms) {
  QueueingEngine& engine = EngineFor(model);
  const Workload* w = engine.FindWorkloadOfPod(pod.Key());
  if (w == nullptr || !w->pods.contains(pod.Key())) engine.AddPod(pod, now_ms);
  engine.Schedule(now_ms);
  CollectPatches();
  w = engine.FindWorkloadOfPod(pod.Key());
  if (w == nullptr) return {.waiting_reason = "not known to the queueing core"};
  if (auto it = w->placements.find(pod.Key()); it != w->placements.end()) {
    return {.assigned_node = it->second.node};
  }
  std::string reason = engine.PendingReason(*w);
  if (w->admitted()) {
    reason = absl::StrCat("workload ", w->key,
                          " is admitted; this member waits for capacity",
                          reason.empty() ? "" : ": ", reason);
  }
  return {.waiting_reason = reason.empty() ? "waiting for admission" : reason};
}

void QueueGate::Bound(const Pod& pod, int64_t now_ms) {
  if (engine_ != nullptr) engine_->MarkBound(pod.Key());
}

void QueueGate::Tick(ClusterModel& model, int64_t now_ms) {
  EngineFor(model).Schedule(now_ms);
  CollectPatches();
}

absl::Status QueueGate::UpdatePolicy(Policy policy) {
  if (engine_ != nullptr) {
    if (absl::Status s = engine_->UpdatePolicy(policy); !s.ok()) return s;
  }
  policy_ = std::move(policy);
  return absl::OkStatus();
}

void QueueGate::CollectPatches() {
  for (const auto& [key, w] : engine_->workloads()) {
    for (const auto& [pod, placement] : w.placements) {
      if (!patched_.insert(pod).second) continue;
      const size_t slash = pod.find('/');
      patches_.push_back(AdmissionPatch{pod.substr(0, slash),
                                        pod.substr(slash + 1), placement.node});
    }
  }
  // Members that lost their placement (preempted, timed out) may be
  // admitted again later and must be patched again then.
  for (auto it = patched_.begin(); it != patched_.end();) {
    const Workload* w = engine_->FindWorkloadOfPod(*it);
    it = (w == nullptr || !w->placements.contains(*it)) ? patched_.erase(it)
                                                        : std::next(it);
  }
}

std::vector<AdmissionPatch> QueueGate::TakePatches() {
  return std::exchange(patches_, {});
}

}  // namespace gpusched
