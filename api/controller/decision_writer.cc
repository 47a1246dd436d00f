#include "api/controller/decision_writer.h"

#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "api/controller/podgroup_status_write.h"
#include "api/kube/eviction.h"
#include "api/kube/pod_admission.h"
#include "api/kube/podgroup_api.h"
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

}  // namespace

DecisionWriter::DecisionWriter(kube::KubeClient& client,
                               DecisionWriterOptions options)
    : client_(client),
      options_(options),
      events_(client, {.reporting_instance =
                           InstanceName(options_.reporting_instance)}) {
  for (int i = 0; i < std::max(1, options_.max_in_flight); ++i) {
    workers_.emplace_back([this](std::stop_token stop) { Work(stop); });
  }
}

DecisionWriter::~DecisionWriter() { Stop(); }

void DecisionWriter::Stop() {
  if (workers_.empty()) return;
  for (std::jthread& worker : workers_) worker.request_stop();
  cv_.notify_all();
  workers_.clear();  // joins
  events_.Stop();
}

namespace {

// What a decision writes: the object, the node and workload it is about,
// and whether it takes an admission back.
struct Target {
  std::string object;
  std::string node;
  std::string workload;
  bool revoke = false;
};

Target TargetOf(const QueueDecision& decision) {
  if (const auto* admit = std::get_if<AdmitMember>(&decision)) {
    return {admit->pod.pod_namespace + "/" + admit->pod.pod_name, admit->node,
            admit->workload, false};
  }
  if (const auto* revoke = std::get_if<RevokeMember>(&decision)) {
    return {revoke->pod.pod_namespace + "/" + revoke->pod.pod_name,
            revoke->node, revoke->workload, true};
  }
  const std::string& workload = std::get<WorkloadStatus>(decision).workload;
  return {workload, "", workload, false};
}

std::string_view KindOf(const QueueDecision& decision) {
  if (std::holds_alternative<AdmitMember>(decision)) return "admit";
  if (std::holds_alternative<RevokeMember>(decision)) return "revoke";
  return "status";
}

// The HTTP status the API server answered, or the fault's name.
std::string CodeOf(const absl::Status& status) {
  if (std::optional<kube::HttpFailure> http = kube::HttpFailureOf(status)) {
    return absl::StrCat(http->code);
  }
  return absl::StatusCodeToString(status.code());
}

}  // namespace

void DecisionWriter::Publish(std::vector<QueueDecision> decisions) {
  {
    std::lock_guard lock(mu_);
    if (!writing_) return;  // a standby writes nothing
    for (QueueDecision& d : decisions) {
      Target target = TargetOf(d);
      const bool status = std::holds_alternative<WorkloadStatus>(d);
      if (std::holds_alternative<AdmitMember>(d)) {
        ++admits_pending_[target.workload];
      }
      (status ? statuses_ : queue_)
          .push_back(Pending{.decision = std::move(d),
                             .object = std::move(target.object),
                             .node = std::move(target.node),
                             .workload = std::move(target.workload),
                             .revoke = target.revoke});
    }
    ++changes_;
  }
  cv_.notify_all();
}

void DecisionWriter::SetWriting(bool writing) {
  {
    std::lock_guard lock(mu_);
    if (writing_ == writing) return;
    writing_ = writing;
    size_t dropped = 0;
    for (PendingList* list : {&queue_, &statuses_}) {
      for (auto it = list->begin(); it != list->end();) {
        auto next = std::next(it);
        if (!writing && !it->in_flight) {
          Erase(*list, it);
          ++dropped;
        }
        it = next;
      }
    }
    if (!writing) {
      spdlog::info("decision writer: standing by; {} queued writes dropped",
                   dropped);
    }
    ++changes_;
  }
  cv_.notify_all();
}

DecisionWriter::Counts DecisionWriter::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

std::map<WriteFailureKey, int64_t> DecisionWriter::failure_counts() const {
  std::lock_guard lock(mu_);
  return failures_;
}

absl::StatusOr<DecisionWriter::Written> DecisionWriter::Write(
    const QueueDecision& decision) {
  const kube::CallOptions call{.deadline = std::chrono::steady_clock::now() +
                                           options_.call_timeout};
  if (const auto* admit = std::get_if<AdmitMember>(&decision)) {
    return WriteAdmit(*admit, call);
  }
  if (const auto* status = std::get_if<WorkloadStatus>(&decision)) {
    absl::Status written = WriteStatus(*status, call);
    if (!written.ok()) return written;
    return Written::kDone;
  }
  return WriteRevoke(std::get<RevokeMember>(decision), call);
}

std::optional<Pod> DecisionWriter::Watched(const PodRef& pod) const {
  if (options_.watched == nullptr) return std::nullopt;
  return options_.watched->Find(pod.pod_namespace + "/" + pod.pod_name);
}

// The workload's Admitted Event goes with its status (RecordEvents): one
// per workload, not one per member. A pod pinned to another node can never
// take this admission: refused at once, not retried.
absl::StatusOr<DecisionWriter::Written> DecisionWriter::WriteAdmit(
    const AdmitMember& admit, const kube::CallOptions& call) {
  const std::optional<Pod> watched = Watched(admit.pod);
  absl::StatusOr<kube::AdmitResult> result = kube::AdmitPod(
      client_, {admit.pod.pod_namespace, admit.pod.pod_name, admit.pod.uid},
      admit.node, call, watched ? &*watched : nullptr, admit.update);
  if (!result.ok()) return result.status();
  if (result->outcome == kube::AdmitOutcome::kNodeConflict) {
    return absl::FailedPreconditionError(result->message);
  }
  spdlog::info("admitted pod={}/{} workload={} node={} outcome={} {}",
               admit.pod.pod_namespace, admit.pod.pod_name, admit.workload,
               admit.node, kube::AdmitOutcomeName(result->outcome),
               result->message);
  return Written::kDone;
}

namespace {

// Why a revocation that would evict writes nothing: the pod is gone, it
// ended (a member that succeeded did its part: evicting it would delete
// the record its gang counts), or it is still behind gpusched's gate (it
// never ran; a bare pod would be deleted). nullopt: evict.
std::optional<std::string_view> NothingToEvict(const RevokeMember& revoke,
                                               const kube::PodState& state) {
  using Kind = kube::PodState::Kind;
  switch (state.kind) {
    case Kind::kGone:
      return "the pod is gone";
    case Kind::kEnded:
      return "the pod already ended";
    case Kind::kGated:
      if (!revoke.bound) return "its gate was never lifted";
      return std::nullopt;
    case Kind::kUngated:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

// The pod is read first, and evicted only as read (resourceVersion
// precondition): one that ended meanwhile is never deleted.
absl::StatusOr<DecisionWriter::Written> DecisionWriter::WriteRevoke(
    const RevokeMember& revoke, const kube::CallOptions& call) {
  const kube::PodTarget pod{revoke.pod.pod_namespace, revoke.pod.pod_name,
                            revoke.pod.uid};
  if (revoke.evict) {
    absl::StatusOr<kube::PodState> state =
        kube::ReadPodState(client_, pod, call);
    if (!state.ok()) return state.status();
    if (std::optional<std::string_view> why = NothingToEvict(revoke, *state)) {
      spdlog::info(
          "withdrew admission pod={}/{} workload={} node={}: {}; nothing "
          "written",
          pod.namespace_name, pod.name, revoke.workload, revoke.node, *why);
      return Written::kDone;
    }
    absl::StatusOr<Written> evicted =
        Evict(revoke, state->resource_version, call);
    if (!evicted.ok() || *evicted != Written::kDone) return evicted;
  } else {
    const std::optional<Pod> watched = Watched(revoke.pod);
    absl::StatusOr<kube::ClearResult> result =
        kube::ClearAdmission(client_, pod, call, watched ? &*watched : nullptr);
    if (!result.ok()) return result.status();
  }
  spdlog::info("revoked pod={}/{} workload={} node={} evicted={} reason=\"{}\"",
               pod.namespace_name, pod.name, revoke.workload, revoke.node,
               revoke.evict, revoke.reason);
  return Written::kDone;
}

// A disruption budget's refusal is no fault to retry: the budget lets the
// eviction through only once a replacement runs elsewhere, which may be
// never. It goes back to the loop, whose planner decides again.
absl::StatusOr<DecisionWriter::Written> DecisionWriter::Evict(
    const RevokeMember& revoke, const std::string& resource_version,
    const kube::CallOptions& call) {
  absl::StatusOr<kube::EvictionResult> result =
      kube::EvictPod(client_,
                     {revoke.pod.pod_namespace, revoke.pod.pod_name,
                      revoke.pod.uid, resource_version},
                     call);
  if (!result.ok()) return result.status();
  if (result->outcome != kube::EvictionOutcome::kBlockedByDisruptionBudget) {
    return Written::kDone;
  }
  spdlog::warn("eviction refused pod={}/{} workload={}: {}",
               revoke.pod.pod_namespace, revoke.pod.pod_name, revoke.workload,
               result->message);
  if (options_.on_eviction_blocked) {
    options_.on_eviction_blocked(EvictionRefusal{.pod = revoke.pod,
                                                 .node = revoke.node,
                                                 .workload = revoke.workload,
                                                 .message = result->message});
  }
  return Written::kBlockedByBudget;
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
      WriteGroupStatus(client_, status.group->flavor, target, status, call);
  if (!written.ok()) return written.status();
  spdlog::info("podgroup status workload={} podgroup={}/{} code={} outcome={}",
               status.workload, target.namespace_name, target.name,
               ReasonCodeName(status.code), written->message);
  return absl::OkStatus();
}

// One Event per change of reason: on each member (the pods someone
// describes to learn why they wait) and on the PodGroup. Admitted is told
// once per workload: on its PodGroup, or on its members when it has none
// (most often a single pod). Nothing relies on these Events after a
// restart: the pod's own affinity, label and annotation say it was
// admitted, so one per gang loses nothing. A finished workload has no
// pods left to tell, and its PodGroup's phase says it.
void DecisionWriter::RecordEvents(const WorkloadStatus& status) {
  if (status.code == ReasonCode::kFinished || !status.code_changed) return;
  const kube::EventType type = IsWarning(status.code)
                                   ? kube::EventType::kWarning
                                   : kube::EventType::kNormal;
  auto record = [&](kube::EventSubject subject) {
    events_.Record({.regarding = std::move(subject),
                    .type = type,
                    .reason = std::string(ReasonCodeName(status.code)),
                    .action = std::string(ActionOf(status.code)),
                    .note = status.message});
  };
  if (status.code != ReasonCode::kAdmitted || !status.group) {
    for (const PodRef& pod : status.members) {
      record({.namespace_name = pod.pod_namespace,
              .name = pod.pod_name,
              .uid = pod.uid});
    }
  }
  if (status.group) {
    record({.api_version = std::string(
                kube::PodGroupApiOf(status.group->flavor).group_version),
            .kind = "PodGroup",
            .namespace_name = status.group->group_namespace,
            .name = status.group->name,
            .uid = status.group->uid});
  }
}

// Order where it matters, many in flight where it does not: the writes of
// one object go in the order the loop decided them (a revocation, then a
// later admission of the same pod), and no admission starts while a
// revocation on its node published before it is still to be written (an
// eviction lands before its preemptor's admission); one waiting for a
// retry holds up no admission elsewhere. A gang's members are independent
// writes, started together. Admissions and revocations go before
// statuses: a burst of PodGroup status writes never delays a gang's
// start, and a workload's status waits for its admission writes to land.
DecisionWriter::Next DecisionWriter::FirstReady(
    PendingList& list, bool order_after_revocations,
    std::chrono::steady_clock::time_point now,
    std::chrono::steady_clock::time_point& wake) {
  absl::flat_hash_set<std::string_view> held;  // objects with earlier writes
  absl::flat_hash_set<std::string_view> revoking;  // nodes
  for (auto it = list.begin(); it != list.end(); ++it) {
    const bool blocked =
        it->in_flight || held.contains(it->object) ||
        (order_after_revocations && !it->revoke &&
         revoking.contains(it->node)) ||
        (!order_after_revocations && admits_pending_.contains(it->workload));
    if (!blocked && it->not_before <= now) return {&list, it};
    if (!blocked) wake = std::min(wake, it->not_before);
    held.insert(it->object);
    if (it->revoke) revoking.insert(it->node);
  }
  return {};
}

DecisionWriter::Next DecisionWriter::TakeNext(
    std::chrono::steady_clock::time_point now,
    std::chrono::steady_clock::time_point& wake) {
  if (!writing_) return {};
  Next next = FirstReady(queue_, /*order_after_revocations=*/true, now, wake);
  if (next.list == nullptr) {
    next = FirstReady(statuses_, /*order_after_revocations=*/false, now, wake);
  }
  if (next.list != nullptr) next.it->in_flight = true;
  return next;
}

void DecisionWriter::Erase(PendingList& list, PendingList::iterator it) {
  if (std::holds_alternative<AdmitMember>(it->decision)) {
    auto count = admits_pending_.find(it->workload);
    if (count != admits_pending_.end() && --count->second <= 0) {
      admits_pending_.erase(count);
    }
  }
  list.erase(it);
}

// A pod pinned elsewhere (FailedPrecondition) is refused at once; a
// replica that stopped writing retries nothing.
void DecisionWriter::Settle(Next next, const absl::StatusOr<Written>& written) {
  Pending& pending = *next.it;
  pending.in_flight = false;
  if (written.ok()) {
    ++(*written == Written::kDone ? counts_.written : counts_.blocked);
    Erase(*next.list, next.it);
    return;
  }
  const bool transient = IsTransient(written.status());
  const bool refused = absl::IsFailedPrecondition(written.status());
  if (++pending.attempts < (transient ? options_.max_transient_attempts
                                      : options_.max_attempts) &&
      !refused && writing_) {
    ++counts_.retried;
    const std::chrono::milliseconds wait =
        transient ? TransientWait(options_, pending.attempts)
                  : options_.retry_after;
    spdlog::warn("decision write failed, retrying in {} ms: {}", wait.count(),
                 Message(written.status()));
    pending.not_before = std::chrono::steady_clock::now() + wait;
    return;
  }
  if (writing_) GiveUp(pending, written.status());
  Erase(*next.list, next.it);
}

void DecisionWriter::GiveUp(const Pending& pending, const absl::Status& why) {
  ++counts_.failed;
  ++failures_[{std::string(KindOf(pending.decision)), CodeOf(why)}];
  spdlog::error("decision write failed {} times, giving up: {}",
                pending.attempts, Message(why));
  if (std::holds_alternative<AdmitMember>(pending.decision)) {
    const std::optional<kube::HttpFailure> http = kube::HttpFailureOf(why);
    Refuse(pending, http && !http->message.empty() ? http->message
                                                   : std::string(Message(why)));
  } else if (const auto* revoke = std::get_if<RevokeMember>(&pending.decision);
             revoke != nullptr && revoke->evict &&
             options_.on_eviction_blocked) {
    // The pod may still run where it was: the loop keeps it there.
    EvictionRefusal refusal{.pod = revoke->pod,
                            .node = revoke->node,
                            .workload = revoke->workload,
                            .message = std::string(Message(why))};
    deferred_.push_back([this, refusal = std::move(refusal)]() mutable {
      options_.on_eviction_blocked(std::move(refusal));
    });
  }
}

// The workload's statuses still queued told of an admission that did not
// land: dropped (the loop tells the withdrawal instead).
void DecisionWriter::Refuse(const Pending& pending,
                            const std::string& message) {
  const auto& admit = std::get<AdmitMember>(pending.decision);
  for (auto it = statuses_.begin(); it != statuses_.end();) {
    auto next = std::next(it);
    if (!it->in_flight && it->workload == pending.workload) {
      Erase(statuses_, it);
    }
    it = next;
  }
  if (!options_.on_admission_refused) return;
  deferred_.push_back(
      [this, refusal = AdmissionRefusal{.pod = admit.pod,
                                        .node = admit.node,
                                        .workload = admit.workload,
                                        .message = message}]() mutable {
        options_.on_admission_refused(std::move(refusal));
      });
}

void DecisionWriter::Work(std::stop_token stop) {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    Clock::time_point wake = Clock::time_point::max();
    Next next = TakeNext(Clock::now(), wake);
    if (next.list == nullptr) {
      const uint64_t seen = changes_;
      auto changed = [&] { return changes_ != seen; };
      if (wake == Clock::time_point::max()) {
        cv_.wait(lock, stop, changed);
      } else {
        cv_.wait_until(lock, stop, wake, changed);
      }
      continue;
    }
    lock.unlock();
    absl::StatusOr<Written> written = Write(next.it->decision);
    lock.lock();
    Settle(next, written);
    ++changes_;
    cv_.notify_all();  // a write of the same object, or after it, may start
    // The loop's inputs are pushed without the writer's lock held.
    std::vector<std::function<void()>> deferred = std::exchange(deferred_, {});
    if (!deferred.empty()) {
      lock.unlock();
      for (std::function<void()>& tell : deferred) tell();
      lock.lock();
    }
  }
}

}  // namespace gpusched
