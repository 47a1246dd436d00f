// QueueingEngine, the facade: object-in calls go to the WorkloadStore,
// Schedule to the AdmissionCycle, each with what it needs lent for the
// call. What stays here is what spans both: the policy and what is built
// from it, and the gang timers.
#include "queueing/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/invariants.h"

namespace gpusched {

absl::StatusOr<std::unique_ptr<QueueingEngine>> QueueingEngine::Create(
    Policy policy, ClusterModel* model, EngineOptions options) {
  absl::StatusOr<QuotaTree> quota = QuotaTree::Build(policy);
  if (!quota.ok()) return quota.status();
  return std::unique_ptr<QueueingEngine>(
      new QueueingEngine(std::move(policy), *std::move(quota), model, options));
}

QueueingEngine::QueueingEngine(Policy policy, QuotaTree quota,
                               ClusterModel* model, EngineOptions options)
    : policy_(std::move(policy)),
      quota_(std::move(quota)),
      model_(model),
      options_(options),
      weights_(ScoringWeights::Defaults()) {
  std::string text;
  for (const auto& [name, weight] : policy_.config.scoring) {
    absl::StrAppend(&text, text.empty() ? "" : ",", name, "=", weight);
  }
  if (auto parsed = ScoringWeights::Parse(text); parsed.ok())
    weights_ = *parsed;
  // Signatures read the queues: index them first.
  flavors_.Rebuild(policy_, quota_);
  afs_.Configure(policy_);
  // Positions follow Admission Fair Sharing's order; the ledger lives as
  // long as the engine and the store.
  store_.SetQueueOrder([this](const Workload* a, const Workload* b) {
    return afs_.Before(a, b);
  });
  store_.RebuildIndexes(flavors_);
}

void QueueingEngine::AddPod(const Pod& pod, int64_t now) {
  store_.AddPod(ForStore(), pod, now);
  requeues_.NotePod(store_, flavors_, pod.Key(),
                    policy_.config.requeuing_timestamp);
}

void QueueingEngine::AddPodGroup(const PodGroup& group, int64_t now) {
  store_.AddPodGroup(ForStore(), group, now);
}

Adoption QueueingEngine::Adopt(const Pod& pod, const std::string& node,
                               bool bound, int64_t now) {
  return store_.Adopt(ForStore(), pod, node, bound, now);
}

void QueueingEngine::WithdrawPlacements(const std::string& key,
                                        const std::vector<std::string>& pods) {
  store_.WithdrawPlacements(ForStore(), key, pods);
}

FinishOutcome QueueingEngine::Finish(const std::string& key, int64_t now) {
  return store_.Finish(ForStore(), key, now);
}

void QueueingEngine::AdoptSucceeded(const Pod& pod) {
  store_.AdoptSucceeded(pod);
}

DeleteOutcome QueueingEngine::Delete(const std::string& key, int64_t now) {
  return store_.Delete(ForStore(), key, now);
}

void QueueingEngine::NodeDown(const std::string& node, int64_t now) {
  store_.NodeDown(ForStore(), node, now);
}

void QueueingEngine::NodeUp(const std::string& node, int64_t now) {
  store_.NodeUp(*model_, node);
}

void QueueingEngine::MarkBound(const std::string& pod_key) {
  store_.MarkBound(pod_key);
}

void QueueingEngine::PostponeEvictions(int64_t ms) {
  store_.PostponeAdmissions(ms);
  timers_.Postpone(ms);
}

void QueueingEngine::EvictionBlocked(const std::string& workload,
                                     const std::string& message, int64_t now) {
  cycle_.EvictionBlocked(ForCycle(), workload, message, now);
}

void QueueingEngine::AdmissionRefused(const std::string& workload,
                                      const std::string& message, int64_t now) {
  cycle_.AdmissionRefused(ForCycle(), workload, message, now);
}

std::optional<PreemptionPreview> QueueingEngine::PreviewPreemption(
    const std::string& key, int64_t now) {
  auto it = store_.workloads().find(key);
  if (it == store_.workloads().end() ||
      it->second.state != Workload::State::kPending) {
    return std::nullopt;
  }
  return cycle_.PreviewPreemption(ForCycle(), it->second, now);
}

const Workload* QueueingEngine::FindWorkloadOfPod(
    const std::string& pod_key) const {
  return store_.FindWorkloadOfPod(pod_key);
}

absl::Status QueueingEngine::UpdatePolicy(Policy policy) {
  absl::StatusOr<QuotaTree> quota = QuotaTree::Build(policy);
  if (!quota.ok()) return quota.status();
  policy_ = std::move(policy);
  quota_ = *std::move(quota);
  flavors_.Rebuild(policy_, quota_);  // it pointed into the old policy
  afs_.Configure(policy_);
  store_.ResolveAgain(ForStore());
  // Signatures name queues and quotas of the old policy.
  store_.ForgetSignatures();
  cycle_.ForgetFailures();
  store_.RebuildIndexes(flavors_);
  return absl::OkStatus();
}

void QueueingEngine::Schedule(int64_t now) {
#ifdef GPUSCHED_INVARIANTS_ON
  // Debug and sanitizer builds: the pass must leave the invariants true,
  // and take no queue further over its limit than it was (invariants.h).
  const QuotaExcess over_before = QuotaOverLimits(quota_);
#endif
  cycle_.Schedule(ForCycle(), now);
#ifdef GPUSCHED_INVARIANTS_ON
  DieOnViolation(CheckInvariants(*this, *model_,
                                 {.now = now, .allowed_excess = &over_before}));
#endif
}

std::optional<int64_t> QueueingEngine::NextWakeup(int64_t now) const {
  std::optional<int64_t> next = timers_.NextWakeup(
      policy_.config, store_.workloads(), store_.live(), now);
  // A victim whose eviction was refused may be tried again.
  if (std::optional<int64_t> refusal = cycle_.NextRefusalExpiry(now);
      refusal && (!next || *refusal < *next)) {
    next = refusal;
  }
  return next;
}

std::vector<EngineEvent> QueueingEngine::TakeEvents() {
  cycle_.EventsTaken();
  return store_.TakeEvents();
}

size_t QueueingEngine::ForgetFinished(int64_t now) {
  const std::vector<Workload> forgotten = store_.ForgetFinished();
  requeues_.KeepForgotten(forgotten, now);
  for (const Workload& w : forgotten) {
    timers_.Forget(w.key);
    cycle_.Forget(w.key);
  }
  return forgotten.size();
}

std::vector<const Workload*> QueueingEngine::PendingOrder(
    const std::string& cq) const {
  return store_.PendingOrder(cq);
}

std::map<const Workload*, std::pair<size_t, size_t>>
QueueingEngine::PendingPositions() const {
  return store_.PendingPositions();
}

std::string QueueingEngine::PendingReason(const Workload& workload) const {
  return store_.PendingReason(workload);
}

std::string QueueingEngine::PendingReason(const Workload& workload,
                                          size_t position, size_t total) const {
  return store_.PendingReason(workload, position, total);
}

ReasonCode QueueingEngine::PendingCode(const Workload& workload) const {
  return store_.PendingCode(workload);
}

const PodGroup* QueueingEngine::FindPodGroup(const std::string& key) const {
  return store_.FindPodGroup(key);
}

void QueueingEngine::NoteCheckAttempt(const std::string& workload,
                                      const std::string& check, int attempt) {
  auto it = store_.workloads().find(workload);
  if (it == store_.workloads().end()) return;
  for (WorkloadCheck& c : it->second.checks) {
    if (c.name == check) c.retry_count = std::max(c.retry_count, attempt - 1);
  }
}

}  // namespace gpusched
