// Carries the admission loop's decisions out against the API server, on
// its own thread, so the loop never waits for the API: admissions lift the
// gate (or nominate), revocations evict or clear, and a workload's new
// reason code becomes an Event on each of its pods and its PodGroup, and
// the PodGroup's status.
//
// PodGroup status, per phase of the workload:
//   waiting   Volcano Pending, condition Unschedulable=True with the code
//             as reason and the sentence as message; coscheduling Pending
//   admitted  Volcano Inqueue (quota and nodes held, no condition);
//             coscheduling Scheduling, scheduleStartTime set
//   running   Running on both, Volcano condition Scheduled=True (Admitted)
//   finished  Volcano Completed; coscheduling Finished
// `running` counts the members bound to their nodes.
#ifndef GPUSCHED_API_SERVER_DECISION_WRITER_H_
#define GPUSCHED_API_SERVER_DECISION_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "api/kube/event_recorder.h"
#include "api/kube/kube_client.h"
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
  // An eviction a PodDisruptionBudget refused (429) is not retried: the
  // refusal goes back to the admission loop here (on the writer's thread;
  // must not block), whose planner waits or chooses other victims.
  std::function<void(EvictionRefusal)> on_eviction_blocked;
};

class DecisionWriter : public DecisionSink {
 public:
  DecisionWriter(kube::KubeClient& client, DecisionWriterOptions options = {});
  ~DecisionWriter() override;  // Stop()

  void Publish(std::vector<QueueDecision> decisions) override;
  // Joins the writer thread; decisions not yet written are dropped (a
  // restarted gpusched rebuilds from the API objects). Idempotent.
  void Stop();

  struct Counts {
    int64_t written = 0;
    int64_t retried = 0;
    int64_t failed = 0;  // gave up after max_attempts
    int64_t blocked = 0;  // evictions a disruption budget refused
  };
  Counts counts() const;
  kube::EventRecorderCounters event_counts() const {
    return events_.counters();
  }

 private:
  struct Pending {
    QueueDecision decision;
    int attempts = 0;
    std::chrono::steady_clock::time_point not_before;
  };
  void Run(std::stop_token stop);
  enum class Written { kDone, kBlockedByBudget };
  // kDone when the decision took effect or no longer applies.
  absl::StatusOr<Written> Write(const QueueDecision& decision);
  absl::Status WriteAdmit(const AdmitMember& admit,
                          const kube::CallOptions& call);
  absl::StatusOr<Written> WriteRevoke(const RevokeMember& revoke,
                                      const kube::CallOptions& call);
  absl::Status WriteStatus(const WorkloadStatus& status,
                           const kube::CallOptions& call);
  void RecordEvents(const WorkloadStatus& status);

  kube::KubeClient& client_;
  const DecisionWriterOptions options_;
  // Deduplicates per object and code, so a status retried after a failed
  // PodGroup write records no Event twice.
  kube::EventRecorder events_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Pending> queue_;     // admissions, revocations; guarded by mu_
  std::deque<Pending> statuses_;  // WorkloadStatus; guarded by mu_
  Counts counts_;              // guarded by mu_
  std::jthread thread_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_DECISION_WRITER_H_
