// The loop's read side: what the extender, the visibility API and the
// gate ask of it, answered from the last published pass or, for explain,
// by the engine on the loop thread; and the requeue state kept outside.
#include <memory>
#include <string>
#include <utility>

#include "api/controller/admission_loop.h"

namespace gpusched {
namespace {

constexpr char kNotSeenYet[] =
    "waiting for admission: gpusched's queueing core has not seen this pod "
    "yet";

}  // namespace

void AdmissionLoop::RequeueStateLoaded(std::vector<RequeueRecord> records,
                                       bool initial) {
  RequeueLoaded loaded{std::move(records), initial};
  if (initial) {
    PushListed(ListKind::kRequeueState, std::move(loaded));
  } else {
    Push(std::move(loaded));
  }
}

std::shared_ptr<const std::vector<RequeueRecord>>
AdmissionLoop::RequeueRecords() const {
  std::lock_guard lock(published_mu_);
  return requeue_records_;
}

std::shared_ptr<const AdmissionLoop::Published> AdmissionLoop::Latest() const {
  std::lock_guard lock(published_mu_);
  return published_;
}

absl::Status AdmissionLoop::Enqueue(Question question) {
  {
    std::lock_guard lock(inbox_mu_);
    if (!thread_.joinable()) {
      return absl::UnavailableError("the admission loop is not running");
    }
    questions_.push_back(std::move(question));
  }
  inbox_cv_.notify_one();
  return absl::OkStatus();
}

absl::StatusOr<WorkloadExplanation> AdmissionLoop::Explain(
    std::string key, std::chrono::milliseconds timeout) {
  // A gang member's name asks about its gang.
  {
    std::shared_ptr<const Published> published = Latest();
    auto workload = published->workload_of_pod.find(key);
    if (workload != published->workload_of_pod.end()) key = workload->second;
  }
  DraLookup dra;
  {
    std::lock_guard lock(dra_mu_);
    dra = dra_lookup_;
  }
  absl::StatusOr<absl::StatusOr<WorkloadExplanation>> answer =
      Ask<absl::StatusOr<WorkloadExplanation>>(
          [key = std::move(key), dra = std::move(dra)](
              const QueueingEngine& engine, const ClusterModel& model,
              int64_t now) {
            absl::StatusOr<WorkloadExplanation> out =
                ExplainWorkload(engine, model, key, dra);
            if (out.ok()) {
              out->preemption_preview =
                  PreviewPreemptionOnCopy(engine, model, out->key, now);
            }
            return out;
          },
          timeout);
  if (!answer.ok()) return answer.status();
  return *std::move(answer);
}

void AdmissionLoop::SetDraLookup(DraLookup lookup) {
  std::lock_guard lock(dra_mu_);
  dra_lookup_ = std::move(lookup);
}

std::shared_ptr<const QueueView> AdmissionLoop::Queues() const {
  static const auto* const kEmpty =
      new std::shared_ptr<const QueueView>(std::make_shared<const QueueView>());
  std::lock_guard lock(published_mu_);
  return queues_ != nullptr ? queues_ : *kEmpty;
}

GateVerdict AdmissionLoop::Check(const Pod& pod) {
  std::shared_ptr<const Published> published = Latest();
  const std::string key = pod.Key();
  if (auto node = published->node_of_pod.find(key);
      node != published->node_of_pod.end()) {
    return {.assigned_node = node->second};
  }
  auto workload = published->workload_of_pod.find(key);
  if (workload == published->workload_of_pod.end()) {
    // Without a watch (serve --cluster) filter is how pods arrive.
    PodUpserted(pod);
    return {.waiting_reason = kNotSeenYet};
  }
  auto reason = published->reason_of_workload.find(workload->second);
  return {.waiting_reason = reason == published->reason_of_workload.end()
                                ? std::string("waiting for admission")
                                : reason->second};
}

VictimReview AdmissionLoop::ReviewVictims(
    std::span<const std::string> victim_uids) const {
  return Latest()->guard.Review(victim_uids);
}

}  // namespace gpusched
