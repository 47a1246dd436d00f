// The queueing core's driver in a live server: a single writer thread that
// owns the QueueingEngine, woken by inputs and timers, never run inside a
// filter or bind request.
//
//   inputs (any thread)            the loop thread                 outputs
//   PodUpserted / PodDeleted  ->   drain the inbox, apply,    ->   QueueDecisions
//   PodGroupUpserted / Deleted     Schedule(now), under the        to the sink,
//   NodeRemoved / NodeAdded        service's exclusive model       verdicts to
//   PolicyChanged, time passed     lock; then publish              Check()
//
// After a restart the engine starts empty: pods the list shows bound, or
// labelled admitted on a node, are adopted on that node (their queues
// charged) before any pending pod is queued, and are not admitted again.
//
// Filter reads the published verdicts (Check) without waiting for a pass,
// so its latency does not grow with the backlog; a pod the loop has not seen
// yet is handed to it and answered "waiting for admission".
#ifndef GPUSCHED_QUEUEING_ADMISSION_LOOP_H_
#define GPUSCHED_QUEUEING_ADMISSION_LOOP_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "queueing/engine.h"
#include "queueing/queue_decision.h"
#include "queueing/status_tracker.h"
#include "queueing/victim_guard.h"
#include "scheduler/admission_gate.h"
#include "scheduler/extender_service.h"

namespace gpusched {

struct AdmissionLoopOptions {
  // Milliseconds on the service's clock; default ExtenderService::NowMs.
  std::function<int64_t()> clock;
  // The longest sleep between passes when nothing happens: timers (bind
  // timeout, backoff) are checked at least this often.
  int64_t max_idle_ms = 1000;
  // False: start as a standby replica (SetDeciding).
  bool start_deciding = true;
};

class AdmissionLoop : public AdmissionGate {
 public:
  // Fails only on a policy the quota tree rejects (validation catches it
  // first).
  static absl::StatusOr<std::unique_ptr<AdmissionLoop>> Create(
      Policy policy, AdmissionLoopOptions options = {});
  ~AdmissionLoop() override;  // Stop()

  // Starts the loop thread over `service`'s model. `sink` receives each
  // pass's decisions on the loop thread and must not block (the API writer
  // queues them); null drops them (standalone serve). Both must outlive the
  // loop or its Stop(). Call once.
  void Start(ExtenderService& service, DecisionSink* sink);
  // Joins the thread within milliseconds. Idempotent.
  void Stop();

  // The one way in. Thread-safe; each returns at once and wakes the loop.
  void PodUpserted(Pod pod);
  void PodDeleted(Pod pod);
  // A complete pod list: upserts every pod, and deletes the pods the core
  // knows that are not in it (deleted while no watch was open).
  void PodsListed(std::vector<Pod> pods);
  void PodGroupUpserted(PodGroup group);
  void PodGroupDeleted(std::string key);
  void NodeRemoved(std::string node);
  void NodeAdded(std::string node);
  void PolicyChanged(Policy policy);
  // The writer's eviction of a revoked member was refused by a disruption
  // budget: the member still runs where it was (see EvictionRefusal).
  void EvictionBlocked(EvictionRefusal refusal);

  // AdmissionGate.
  bool Manages(const Pod& pod) const override;
  GateVerdict Check(const Pod& pod) override;
  VictimReview ReviewVictims(
      std::span<const std::string> victim_uids) const override;
  void Bound(const Pod& pod, int64_t now_ms) override;

  // Blocks until every input given before the call went through a pass
  // (tests, and a server's startup before it answers).
  void WaitIdle();
  uint64_t passes() const;

  // A standby replica (another gpusched decides: the one beside the
  // leading kube-scheduler) keeps its state in step with the cluster and
  // decides nothing: it applies every input, adopts what the deciding
  // replica admitted (its labels are that replica's word), and runs no
  // admission pass, no timer and writes nothing. Switching to deciding
  // runs a pass at once, from the state it kept. Thread-safe.
  void SetDeciding(bool deciding);
  bool deciding() const { return deciding_; }
  // The engine, for reports; read it only with the service's model lock
  // held (the loop writes it under the exclusive lock).
  const QueueingEngine& engine() const { return *engine_; }

 private:
  struct Deleted {
    Pod pod;
  };
  struct Listed {
    std::vector<Pod> pods;
  };
  struct GroupDeleted {
    std::string key;
  };
  struct NodeGone {
    std::string node;
  };
  struct NodeBack {
    std::string node;
  };
  using Input = std::variant<Pod, Deleted, Listed, PodGroup, GroupDeleted, NodeGone,
                             NodeBack, Policy, EvictionRefusal>;
  // What filter reads: per admitted member its node, per waiting workload
  // its code and sentence ("WaitingForQuota: queue team-a: ..."), per known
  // pod its workload; and what kube-scheduler's preemption may take.
  struct Published {
    absl::flat_hash_map<std::string, std::string> node_of_pod;
    absl::flat_hash_map<std::string, std::string> workload_of_pod;
    absl::flat_hash_map<std::string, std::string> reason_of_workload;
    VictimGuard guard;
  };
  // What the loop remembers of each admitted member between passes, to
  // tell which admissions a pass took back.
  struct MemberState {
    std::string node;
    std::string uid;
    bool bound = false;
    bool gated = false;
  };

  AdmissionLoop(Policy policy, AdmissionLoopOptions options);
  void Push(Input input);
  void Run(std::stop_token stop);
  void Pass(std::vector<Input> inputs);
  void Apply(Input& input, int64_t now);
  void ApplyPod(const Pod& pod, int64_t now);
  void ApplyTerminal(const Pod& pod, int64_t now);
  void ApplyRefusal(const EvictionRefusal& refusal, int64_t now);
  // A pod being deleted that holds no admission: see ApplyPod.
  bool Leaving(const Pod& pod) const;
  void ApplyLeaving(const Pod& pod, int64_t now);
  void AddPending(const Pod& pod, int64_t now);
  void ApplyList(const std::vector<Pod>& pods, int64_t now);
  void ForgetUnlisted(const std::set<std::string>& listed, int64_t now);
  void Forget(const std::string& pod_key);
  // Pods that run, or that were admitted on a node before a restart, keep
  // their node (QueueingEngine::Adopt). True when the pod is settled so,
  // false when it is to be queued as pending.
  bool AdoptIfAdmitted(const Pod& pod, int64_t now);
  void AdoptBound(const Pod& pod, int64_t now);
  void RetryOrphans(int64_t now);
  void NoteAdopted(const Pod& pod, const std::string& node);
  void RevokeStale(const Pod& pod, const std::string& node, bool pinned,
                   const std::string& why);
  std::vector<QueueDecision> Diff();
  std::shared_ptr<const Published> Latest() const;
  std::shared_ptr<const Published> Publish(
      const PendingPositionMap& positions) const;
  int64_t Now() const;

  std::unique_ptr<QueueingEngine> engine_;
  AdmissionLoopOptions options_;
  ExtenderService* service_ = nullptr;
  DecisionSink* sink_ = nullptr;
  Policy policy_;  // the engine's, until Start creates the engine

  mutable std::mutex inbox_mu_;
  std::condition_variable_any inbox_cv_;
  std::vector<Input> inbox_;
  uint64_t inputs_pushed_ = 0;    // guarded by inbox_mu_
  uint64_t inputs_applied_ = 0;   // guarded by inbox_mu_
  uint64_t passes_ = 0;           // guarded by inbox_mu_
  bool pass_requested_ = false;   // guarded by inbox_mu_
  std::atomic<bool> deciding_{true};
  std::condition_variable idle_cv_;

  mutable std::mutex published_mu_;
  std::shared_ptr<const Published> published_;  // guarded by published_mu_

  // Loop thread only.
  std::map<std::string, MemberState> members_;  // admitted members by key
  StatusTracker status_;  // the codes and phases told so far
  // Arrived with our gate, or adopted pinned to its node by the affinity
  // that replaced the gate: either way only eviction takes it back.
  absl::flat_hash_map<std::string, bool> gated_;
  // Bound pods whose node the model does not have yet, by key: adopted once
  // it has (the node watch fills the model on its own thread).
  std::map<std::string, Pod> orphans_;
  // Admissions from before a restart that could not be kept (node gone or
  // full), taken back in the next pass's decisions; each pod once.
  std::vector<QueueDecision> stale_revokes_;
  std::set<std::string> stale_revoked_;

  std::jthread thread_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ADMISSION_LOOP_H_
