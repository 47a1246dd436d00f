#include "api/server/decision_writer.h"

#include <utility>

#include "api/kube/eviction.h"
#include "api/kube/pod_admission.h"
#include "scheduler/string_util.h"
#include "spdlog/spdlog.h"

namespace gpusched {
namespace {

absl::Status WriteAdmit(kube::KubeClient& client, const AdmitMember& admit,
                        const kube::CallOptions& call) {
  absl::StatusOr<kube::AdmitResult> result = kube::AdmitPod(
      client,
      {admit.pod.pod_namespace, admit.pod.pod_name, admit.pod.uid},
      admit.node, call);
  if (!result.ok()) return result.status();
  spdlog::info("admitted pod={}/{} workload={} node={} outcome={} {}",
               admit.pod.pod_namespace, admit.pod.pod_name, admit.workload,
               admit.node, kube::AdmitOutcomeName(result->outcome),
               result->message);
  return absl::OkStatus();
}

// A disruption budget's refusal is retried like a fault: the budget lets
// the eviction through once a replacement runs elsewhere.
absl::Status WriteRevoke(kube::KubeClient& client, const RevokeMember& revoke,
                         const kube::CallOptions& call) {
  const kube::PodTarget pod{revoke.pod.pod_namespace, revoke.pod.pod_name,
                            revoke.pod.uid};
  if (revoke.evict) {
    absl::StatusOr<kube::EvictionResult> result = kube::EvictPod(
        client, {pod.namespace_name, pod.name, pod.uid}, call);
    if (!result.ok()) return result.status();
    if (result->outcome == kube::EvictionOutcome::kBlockedByDisruptionBudget) {
      return absl::UnavailableError(result->message);
    }
  } else {
    absl::StatusOr<kube::ClearResult> result =
        kube::ClearAdmission(client, pod, call);
    if (!result.ok()) return result.status();
  }
  spdlog::info("revoked pod={}/{} workload={} node={} evicted={} reason=\"{}\"",
               pod.namespace_name, pod.name, revoke.workload, revoke.node,
               revoke.evict, revoke.reason);
  return absl::OkStatus();
}

}  // namespace

DecisionWriter::DecisionWriter(kube::KubeClient& client,
                               DecisionWriterOptions options)
    : client_(client),
      options_(options),
      thread_([this](std::stop_token stop) { Run(stop); }) {}

DecisionWriter::~DecisionWriter() { Stop(); }

void DecisionWriter::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
}

void DecisionWriter::Publish(std::vector<QueueDecision> decisions) {
  {
    std::lock_guard lock(mu_);
    for (QueueDecision& d : decisions) {
      queue_.push_back(Pending{.decision = std::move(d)});
    }
  }
  cv_.notify_one();
}

DecisionWriter::Counts DecisionWriter::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

absl::Status DecisionWriter::Write(const QueueDecision& decision) {
  const kube::CallOptions call{
      .deadline = std::chrono::steady_clock::now() + options_.call_timeout};
  if (const auto* admit = std::get_if<AdmitMember>(&decision)) {
    return WriteAdmit(client_, *admit, call);
  }
  return WriteRevoke(client_, std::get<RevokeMember>(decision), call);
}

// In order, one at a time: a revocation and a later admission of the same
// pod reach the API server in the order the loop decided them.
void DecisionWriter::Run(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (queue_.empty()) {
      cv_.wait(lock, stop, [&] { return !queue_.empty(); });
      continue;
    }
    Pending next = std::move(queue_.front());
    queue_.pop_front();
    if (next.not_before > std::chrono::steady_clock::now()) {
      cv_.wait_until(lock, stop, next.not_before, [] { return false; });
    }
    lock.unlock();
    absl::Status written = Write(next.decision);
    lock.lock();
    if (written.ok()) {
      ++counts_.written;
    } else if (++next.attempts < options_.max_attempts) {
      ++counts_.retried;
      spdlog::warn("decision write failed, retrying: {}", Message(written));
      next.not_before = std::chrono::steady_clock::now() + options_.retry_after;
      queue_.push_front(std::move(next));
    } else {
      ++counts_.failed;
      spdlog::error("decision write failed {} times, giving up: {}",
                    next.attempts, Message(written));
    }
  }
}

}  // namespace gpusched
