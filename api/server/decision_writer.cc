#include "api/server/decision_writer.h"

#include <unistd.h>

#include <utility>

#include "api/kube/eviction.h"
#include "api/kube/pod_admission.h"
#include "api/kube/podgroup_status.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched {
namespace {

// Failures an API server recovers from by itself (kube/watch_stream.cc maps
// the HTTP codes: 5xx Unavailable, 504 DeadlineExceeded, 429
// ResourceExhausted; a connection refused or cut is Unavailable).
bool IsTransient(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kPermissionDenied:
      return true;
    default:
      return false;
  }
}

// retry_after, doubled for each attempt made, up to max_retry_after.
std::chrono::milliseconds TransientWait(const DecisionWriterOptions& options,
                                        int attempts) {
  std::chrono::milliseconds wait = options.retry_after;
  for (int i = 1; i < attempts && wait < options.max_retry_after; ++i) {
    wait *= 2;
  }
  return std::min(wait, options.max_retry_after);
}

std::string InstanceName(const std::string& configured) {
  if (!configured.empty()) return configured;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    return "gpusched";
  }
  return host;
}

std::string_view GroupApiVersion(PodGroup::Flavor flavor) {
  return flavor == PodGroup::Flavor::kVolcano ? "scheduling.volcano.sh/v1beta1"
                                              : "scheduling.x-k8s.io/v1alpha1";
}

// What gpusched did, as events.k8s.io wants it (one CamelCase word).
std::string_view ActionOf(ReasonCode code) {
  switch (code) {
    case ReasonCode::kPreempted:
      return "Preemption";
    case ReasonCode::kEvicted:
      return "Eviction";
    default:
      return "Admission";
  }
}

kube::VolcanoStatus VolcanoStatusOf(const WorkloadStatus& status) {
  kube::VolcanoStatus out{.running = status.bound};
  const auto now = std::chrono::system_clock::now();
  switch (status.phase) {
    case WorkloadPhase::kWaiting:
      out.phase = kube::VolcanoPhase::kPending;
      out.conditions.push_back(
          {.type = kube::VolcanoCondition::Type::kUnschedulable,
           .reason = std::string(ReasonCodeName(status.code)),
           .message = status.message,
           .last_transition = now});
      break;
    case WorkloadPhase::kAdmitted:
      out.phase = kube::VolcanoPhase::kInqueue;
      break;
    case WorkloadPhase::kRunning:
    case WorkloadPhase::kFinished:
      out.phase = status.phase == WorkloadPhase::kRunning
                      ? kube::VolcanoPhase::kRunning
                      : kube::VolcanoPhase::kCompleted;
      out.conditions.push_back(
          {.type = kube::VolcanoCondition::Type::kScheduled,
           .reason = std::string(ReasonCodeName(ReasonCode::kAdmitted)),
           .message = status.message,
           .last_transition = now});
      break;
  }
  return out;
}

kube::CoschedulingStatus CoschedulingStatusOf(const WorkloadStatus& status) {
  kube::CoschedulingStatus out{.running = status.bound};
  switch (status.phase) {
    case WorkloadPhase::kWaiting:
      out.phase = kube::CoschedulingPhase::kPending;
      break;
    case WorkloadPhase::kAdmitted:
      out.phase = kube::CoschedulingPhase::kScheduling;
      out.schedule_start_time = std::chrono::system_clock::now();
      break;
    case WorkloadPhase::kRunning:
      out.phase = kube::CoschedulingPhase::kRunning;
      break;
    case WorkloadPhase::kFinished:
      out.phase = kube::CoschedulingPhase::kFinished;
      break;
  }
  return out;
}

}  // namespace

DecisionWriter::DecisionWriter(kube::KubeClient& client,
                               DecisionWriterOptions options)
    : client_(client),
      options_(options),
      events_(client,
              {.reporting_instance = InstanceName(options_.reporting_instance)}),
      thread_([this](std::stop_token stop) { Run(stop); }) {}

DecisionWriter::~DecisionWriter() { Stop(); }

void DecisionWriter::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
  events_.Stop();
}

void DecisionWriter::Publish(std::vector<QueueDecision> decisions) {
  {
    std::lock_guard lock(mu_);
    for (QueueDecision& d : decisions) {
      auto& queue =
          std::holds_alternative<WorkloadStatus>(d) ? statuses_ : queue_;
      queue.push_back(Pending{.decision = std::move(d)});
    }
  }
  cv_.notify_one();
}

DecisionWriter::Counts DecisionWriter::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

absl::StatusOr<DecisionWriter::Written> DecisionWriter::Write(
    const QueueDecision& decision) {
  const kube::CallOptions call{
      .deadline = std::chrono::steady_clock::now() + options_.call_timeout};
  absl::Status written;
  if (const auto* admit = std::get_if<AdmitMember>(&decision)) {
    written = WriteAdmit(*admit, call);
  } else if (const auto* status = std::get_if<WorkloadStatus>(&decision)) {
    written = WriteStatus(*status, call);
  } else {
    return WriteRevoke(std::get<RevokeMember>(decision), call);
  }
  if (!written.ok()) return written;
  return Written::kDone;
}

// The member's Admitted Event follows its admission, once it took effect.
absl::Status DecisionWriter::WriteAdmit(const AdmitMember& admit,
                                        const kube::CallOptions& call) {
  absl::StatusOr<kube::AdmitResult> result = kube::AdmitPod(
      client_, {admit.pod.pod_namespace, admit.pod.pod_name, admit.pod.uid},
      admit.node, call);
  if (!result.ok()) return result.status();
  spdlog::info("admitted pod={}/{} workload={} node={} outcome={} {}",
               admit.pod.pod_namespace, admit.pod.pod_name, admit.workload,
               admit.node, kube::AdmitOutcomeName(result->outcome),
               result->message);
  if (result->outcome == kube::AdmitOutcome::kPodGone ||
      result->outcome == kube::AdmitOutcome::kNodeConflict) {
    return absl::OkStatus();
  }
  events_.Record({.regarding = {.namespace_name = admit.pod.pod_namespace,
                                .name = admit.pod.pod_name,
                                .uid = admit.pod.uid},
                  .type = kube::EventType::kNormal,
                  .reason = std::string(ReasonCodeName(ReasonCode::kAdmitted)),
                  .action = std::string(ActionOf(ReasonCode::kAdmitted)),
                  .note = admit.reason});
  return absl::OkStatus();
}

// A disruption budget's refusal is no fault to retry: the budget lets the
// eviction through only once a replacement runs elsewhere, which may be
// never. It goes back to the loop, whose planner decides again.
absl::StatusOr<DecisionWriter::Written> DecisionWriter::WriteRevoke(
    const RevokeMember& revoke, const kube::CallOptions& call) {
  const kube::PodTarget pod{revoke.pod.pod_namespace, revoke.pod.pod_name,
                            revoke.pod.uid};
  if (revoke.evict) {
    absl::StatusOr<kube::EvictionResult> result = kube::EvictPod(
        client_, {pod.namespace_name, pod.name, pod.uid}, call);
    if (!result.ok()) return result.status();
    if (result->outcome == kube::EvictionOutcome::kBlockedByDisruptionBudget) {
      spdlog::warn("eviction refused pod={}/{} workload={}: {}",
                   pod.namespace_name, pod.name, revoke.workload,
                   result->message);
      if (options_.on_eviction_blocked) {
        options_.on_eviction_blocked(
            EvictionRefusal{.pod = revoke.pod,
                            .node = revoke.node,
                            .workload = revoke.workload,
                            .message = result->message});
      }
      return Written::kBlockedByBudget;
    }
  } else {
    absl::StatusOr<kube::ClearResult> result =
        kube::ClearAdmission(client_, pod, call);
    if (!result.ok()) return result.status();
  }
  spdlog::info("revoked pod={}/{} workload={} node={} evicted={} reason=\"{}\"",
               pod.namespace_name, pod.name, revoke.workload, revoke.node,
               revoke.evict, revoke.reason);
  return Written::kDone;
}

// Events first: they never fail the decision (the recorder counts its own
// failures); a failed status write is retried like any other write.
absl::Status DecisionWriter::WriteStatus(const WorkloadStatus& status,
                                         const kube::CallOptions& call) {
  RecordEvents(status);
  if (!status.group) return absl::OkStatus();
  const kube::PodGroupTarget target{status.group->group_namespace,
                                    status.group->name};
  absl::StatusOr<kube::PodGroupWriteResult> written =
      status.group->flavor == PodGroup::Flavor::kVolcano
          ? kube::WriteVolcanoStatus(client_, target, VolcanoStatusOf(status),
                                     call)
          : kube::WriteCoschedulingStatus(client_, target,
                                          CoschedulingStatusOf(status), call);
  if (!written.ok()) return written.status();
  spdlog::info("podgroup status workload={} podgroup={}/{} code={} outcome={}",
               status.workload, target.namespace_name, target.name,
               ReasonCodeName(status.code), written->message);
  return absl::OkStatus();
}

// One Event per member and one on the PodGroup. A finished workload has
// no pods left to tell, and its PodGroup's phase says it.
void DecisionWriter::RecordEvents(const WorkloadStatus& status) {
  if (status.code == ReasonCode::kFinished || !status.code_changed) return;
  const kube::EventType type =
      IsWarning(status.code) ? kube::EventType::kWarning
                             : kube::EventType::kNormal;
  auto record = [&](kube::EventSubject subject) {
    events_.Record({.regarding = std::move(subject),
                    .type = type,
                    .reason = std::string(ReasonCodeName(status.code)),
                    .action = std::string(ActionOf(status.code)),
                    .note = status.message});
  };
  // Each admitted member was told with its own admission (WriteAdmit).
  if (status.code != ReasonCode::kAdmitted) {
    for (const PodRef& pod : status.members) {
      record({.namespace_name = pod.pod_namespace,
              .name = pod.pod_name,
              .uid = pod.uid});
    }
  }
  if (status.group) {
    record({.api_version = std::string(GroupApiVersion(status.group->flavor)),
            .kind = "PodGroup",
            .namespace_name = status.group->group_namespace,
            .name = status.group->name,
            .uid = status.group->uid});
  }
}

// In order, one at a time: a revocation and a later admission of the same
// pod reach the API server in the order the loop decided them. Admissions
// and revocations go before statuses: a burst of PodGroup status writes
// never delays a gang's start.
void DecisionWriter::Run(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (queue_.empty() && statuses_.empty()) {
      cv_.wait(lock, stop,
               [&] { return !queue_.empty() || !statuses_.empty(); });
      continue;
    }
    std::deque<Pending>& from = queue_.empty() ? statuses_ : queue_;
    Pending next = std::move(from.front());
    from.pop_front();
    if (next.not_before > std::chrono::steady_clock::now()) {
      cv_.wait_until(lock, stop, next.not_before, [] { return false; });
    }
    lock.unlock();
    absl::StatusOr<Written> written = Write(next.decision);
    lock.lock();
    if (written.ok()) {
      ++(*written == Written::kDone ? counts_.written : counts_.blocked);
    } else if (const bool transient = IsTransient(written.status());
               ++next.attempts < (transient ? options_.max_transient_attempts
                                            : options_.max_attempts)) {
      ++counts_.retried;
      const std::chrono::milliseconds wait =
          transient ? TransientWait(options_, next.attempts)
                    : options_.retry_after;
      spdlog::warn("decision write failed, retrying in {} ms: {}",
                   wait.count(), Message(written.status()));
      next.not_before = std::chrono::steady_clock::now() + wait;
      from.push_front(std::move(next));
    } else {
      ++counts_.failed;
      spdlog::error("decision write failed {} times, giving up: {}",
                    next.attempts, Message(written.status()));
    }
  }
}

}  // namespace gpusched
