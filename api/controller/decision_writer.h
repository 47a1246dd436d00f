// Carries the admission loop's decisions out against the API server, on
// threads of its own, so the loop never waits for the API: admissions lift
// the gate (or nominate), revocations evict or clear, and a workload's new
// reason code becomes Events (on its pods and its PodGroup; Admitted once
// per workload) and the PodGroup's status. Up to max_in_flight writes run
// at once; writes of one object, and admissions after a revocation, keep
// the order the loop decided them in.
//
// PodGroup status, per phase of the workload:
//   waiting   Volcano Pending, condition Unschedulable=True with the code
//             as reason and the sentence as message; coscheduling Pending
//   admitted  Volcano Inqueue (quota and nodes held, no condition);
//             coscheduling Scheduling, scheduleStartTime set
//   running   Running on both, Volcano condition Scheduled=True (Admitted)
//   finished  Volcano Completed; coscheduling Finished
// `running` counts the members bound to their nodes. A native PodGroup
// (scheduling.k8s.io) has no phase or counts: its condition
// gpusched.io/Admitted is False while it waits (the code as reason, the
// sentence as message) and True from admission on (Admitted, then
// Finished), beside kube-scheduler's own conditions.
#ifndef GPUSCHED_API_CONTROLLER_DECISION_WRITER_H_
#define GPUSCHED_API_CONTROLLER_DECISION_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/kube/event_recorder.h"
#include "api/kube/kube_client.h"
#include "api/kube/watched_pods.h"
#include "queueing/queue_decision.h"

namespace gpusched {

struct DecisionWriterOptions {
  // Each API call's own deadline.
  std::chrono::milliseconds call_timeout{5000};
  // A decision whose write failed is tried again this often, at most
  // max_attempts times in all.
  std::chrono::milliseconds retry_after{1000};
  int max_attempts = 5;
  // A failure the API server recovers from (unreachable, 5xx, 429, or 403
  // while a restarted one loads its roles) is tried again after a wait
  // that doubles from retry_after up to max_retry_after, at most
  // max_transient_attempts times (about 95 s by default): an admission
  // dropped in an outage would leave its member admitted and gated until
  // the bind timeout evicts it. Nothing else can be written meanwhile.
  std::chrono::milliseconds max_retry_after{10000};
  int max_transient_attempts = 12;
  // The Events' reportingInstance; empty: this host's name (the pod's name
  // in a cluster), which tells two replicas apart.
  std::string reporting_instance;
  // Writes in flight at once (at most the client's kept-alive connections
  // are reused; more open new ones). An admission costs a round trip to
  // the API server, not CPU: one at a time, the queue drained at about 60
  // pods/s.
  int max_in_flight = 16;
  // The pods the watch holds: an admission patches against its pod there
  // and reads the pod only after a conflict. Null: every write reads first.
  // Must outlive the writer.
  const kube::WatchedPods* watched = nullptr;
  // An eviction a PodDisruptionBudget refused (429) is not retried: the
  // refusal goes back to the admission loop here (on the writer's thread;
  // must not block), whose planner waits or chooses other victims.
  std::function<void(EvictionRefusal)> on_eviction_blocked;
  // An admission the API server refused for good (a policy or webhook
  // denied the write, 422, a 403 that stayed, or the pod is pinned to
  // another node) goes back to the loop here, which withdraws it (on the
  // writer's thread; must not block). The workload's Admitted status and
  // Event, still queued, are dropped with it: nothing says admitted before
  // every member's admission write has landed.
  std::function<void(AdmissionRefusal)> on_admission_refused;
};

// A write given up, by what it wrote and how the API server answered:
// kind "admit", "revoke" or "status"; code the HTTP status ("422"), or the
// fault's name when no answer came ("Unavailable").
struct WriteFailureKey {
  std::string kind;
  std::string code;
  auto operator<=>(const WriteFailureKey&) const = default;
};

class DecisionWriter : public DecisionSink {
 public:
  DecisionWriter(kube::KubeClient& client, DecisionWriterOptions options = {});
  ~DecisionWriter() override;  // Stop()

  void Publish(std::vector<QueueDecision> decisions) override;
  // Joins the writer threads; decisions not yet written are dropped (a
  // restarted gpusched rebuilds from the API objects). Idempotent.
  void Stop();
  // False (the replica lost the Lease): every queued write is dropped at
  // once, retries included, and nothing more is written, published or
  // not, until true again. A write already in flight ends as it ends.
  void SetWriting(bool writing);

  struct Counts {
    int64_t written = 0;
    int64_t retried = 0;
    int64_t failed = 0;   // gave up after max_attempts
    int64_t blocked = 0;  // evictions a disruption budget refused
  };
  Counts counts() const;
  // gpusched_decision_write_failures_total.
  std::map<WriteFailureKey, int64_t> failure_counts() const;
  kube::EventRecorderCounters event_counts() const {
    return events_.counters();
  }

 private:
  struct Pending {
    QueueDecision decision;
    // The object written: a pod ("namespace/name") or a workload. Writes of
    // one object are made one at a time, in the order they were published.
    std::string object;
    // The node an admission or revocation is about: an admission waits
    // only for revocations on its own node published before it.
    std::string node;
    // The workload an admission or status is about.
    std::string workload;
    bool revoke = false;
    bool in_flight = false;
    int attempts = 0;
    std::chrono::steady_clock::time_point not_before;
  };
  using PendingList = std::list<Pending>;
  struct Next {
    PendingList* list = nullptr;
    PendingList::iterator it;
  };
  void Work(std::stop_token stop);
  // The first write that may start now, under mu_; else sets `wake` to the
  // earliest time a held-back write becomes due (or leaves it).
  Next TakeNext(std::chrono::steady_clock::time_point now,
                std::chrono::steady_clock::time_point& wake);
  Next FirstReady(PendingList& list, bool order_after_revocations,
                  std::chrono::steady_clock::time_point now,
                  std::chrono::steady_clock::time_point& wake);
  enum class Written { kDone, kBlockedByBudget };
  // Counts the outcome; a failure is held back for another attempt or
  // given up. Under mu_.
  void Settle(Next next, const absl::StatusOr<Written>& written);
  // kDone when the decision took effect or no longer applies.
  absl::StatusOr<Written> Write(const QueueDecision& decision);
  absl::StatusOr<Written> WriteAdmit(const AdmitMember& admit,
                                     const kube::CallOptions& call);
  absl::StatusOr<Written> WriteRevoke(const RevokeMember& revoke,
                                      const kube::CallOptions& call);
  absl::StatusOr<Written> Evict(const RevokeMember& revoke,
                                const std::string& resource_version,
                                const kube::CallOptions& call);
  absl::Status WriteStatus(const WorkloadStatus& status,
                           const kube::CallOptions& call);
  void RecordEvents(const WorkloadStatus& status);
  // Under mu_: a write given up (or refused) is counted, and an admission's
  // goes back to the loop with its workload's queued statuses dropped.
  void GiveUp(const Pending& pending, const absl::Status& why);
  void Refuse(const Pending& pending, const std::string& message);
  void Erase(PendingList& list, PendingList::iterator it);
  std::optional<Pod> Watched(const PodRef& pod) const;

  kube::KubeClient& client_;
  const DecisionWriterOptions options_;
  // Deduplicates per object and code, so a status retried after a failed
  // PodGroup write records no Event twice.
  kube::EventRecorder events_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  PendingList queue_;     // admissions, revocations; guarded by mu_
  PendingList statuses_;  // WorkloadStatus; guarded by mu_
  Counts counts_;         // guarded by mu_
  std::map<WriteFailureKey, int64_t> failures_;  // guarded by mu_
  // Admissions queued or in flight, per workload: its statuses wait for
  // them (no Admitted Event before the admission landed).
  std::map<std::string, int> admits_pending_;  // guarded by mu_
  bool writing_ = true;                        // guarded by mu_
  // What Settle tells the loop, run once mu_ is let go.
  std::vector<std::function<void()>> deferred_;  // guarded by mu_
  uint64_t changes_ = 0;  // a publish or a finished write; guarded by mu_
  std::vector<std::jthread> workers_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_DECISION_WRITER_H_
