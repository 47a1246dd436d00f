// The queueing core's driver in a live server: a single writer thread that
// owns the QueueingEngine, woken by inputs and timers, never run inside a
// filter or bind request.
//
//   inputs (any thread)            the loop thread                 outputs
//   PodUpserted / PodDeleted  ->   drain the inbox, sync the  -> QueueDecisions
//   PodGroupUpserted / Deleted     replica, apply, Schedule(now)   to the sink,
//   NodeRemoved / NodeAdded        on it, commit what changed,     verdicts to
//   PolicyChanged, time passed     then publish                    Check()
//
// No pass holds the extender's lock while it plans: the engine works on
// the loop's own replica of the service's model, brought up to date at the
// start of each pass under the shared lock (only the nodes whose version
// changed are copied), and what the pass changed there is published to the
// service's model under the exclusive lock, pod by pod (CommitPass). A
// workload whose devices another scheduler took meanwhile (kube-scheduler
// binding a pod outside the queues) is published whole or not at all and,
// if not, withdrawn in the engine and planned again on a fresh replica.
//
// After a restart the engine starts empty: pods the list shows bound, or
// labelled admitted on a node, are adopted on that node (their queues
// charged) before any pending pod is queued, and are not admitted again.
//
// With await_lists (a live server) the loop runs no pass, so adopts,
// revokes, evicts and admits nothing, until it holds a complete list of
// each source (pods, nodes, every PodGroup API), and again while a source
// relists after its watch's history was compacted (410 Gone): a decision
// taken on half a picture (pods without their nodes) cannot be undone.
//
// Filter reads the published verdicts (Check) without waiting for a pass,
// so its latency does not grow with the backlog; a pod the loop has not seen
// yet is handed to it and answered "waiting for admission".
#ifndef GPUSCHED_API_CONTROLLER_ADMISSION_LOOP_H_
#define GPUSCHED_API_CONTROLLER_ADMISSION_LOOP_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "api/controller/decision_log.h"
#include "api/controller/queue_event_counter.h"
#include "api/controller/status_tracker.h"
#include "queueing/engine.h"
#include "queueing/queue_decision.h"
#include "queueing/queue_view.h"
#include "queueing/requeue_state.h"
#include "queueing/runtime_log.h"
#include "queueing/victim_guard.h"
#include "queueing/workload_explanation.h"
#include "scheduler/admission_gate.h"
#include "scheduler/extender_service.h"

namespace gpusched {

// The sources whose complete list the loop waits for (await_lists). kDra:
// the DRA objects, and every pod with claims charged against them.
enum class ListKind {
  kPods,
  kNodes,
  kVolcanoGroups,
  kCoschedulingGroups,
  kNativeGroups,
  kDra,
  // The requeue state the deciding replica kept (keep_requeue_state).
  kRequeueState
};
inline constexpr size_t kListKinds = 7;
ListKind GroupListKind(PodGroup::Flavor flavor);

struct AdmissionLoopOptions {
  // Milliseconds on the service's clock; default ExtenderService::NowMs.
  std::function<int64_t()> clock;
  // The longest sleep between passes when nothing happens: timers (bind
  // timeout, backoff) are checked at least this often.
  int64_t max_idle_ms = 1000;
  // False: start as a standby replica (SetDeciding).
  bool start_deciding = true;
  // True: no pass before every source was listed (PodsListed, NodesListed,
  // PodGroupsListed for each API, DraListed) nor while one relists
  // (Relisting); a PodGroup API whose list keeps failing
  // (PodGroupApiFailing) stops holding the passes and holds only its own
  // gangs. A node then missing from the model is gone from the cluster.
  // False (serve --cluster, tests): passes run at once, and a node the
  // model lacks is only not known yet.
  bool await_lists = false;
  // While inputs keep arriving, a pass begins at most this often (explicit
  // requests such as WaitIdle's excepted); what arrives meanwhile waits
  // for it. A pass costs about the same for one input as for a hundred
  // (it walks every workload to diff, publish and tell statuses), and a
  // burst of queued pods sends about three watch events each: unpaced,
  // the loop ran a pass per event. 10 ms is under a pod's own round trips.
  int64_t min_pass_interval_ms = 10;
  // ... and at most this share of the loop thread's time goes to passes
  // while inputs keep arriving: the pace widens to the last pass's
  // duration over this share, so thousands of workloads cost a bounded
  // share of a core, not one pass per event each (a small cluster's passes
  // are short and keep the 10 ms pace).
  double max_pass_share = 0.1;
  // Tests: runs on the loop thread after a pass planned on its replica
  // (given, as planned) and before it commits to the service's model, to
  // race a bind against it.
  std::function<void(const ClusterModel& planned)> before_commit;
  // True: the requeue state is kept outside (api/kube/requeue_state_store.h):
  // no pass before its first read arrives (RequeueStateLoaded, with
  // await_lists), and each deciding pass publishes it (RequeueRecords).
  bool keep_requeue_state = false;
  // Where finished workloads' runtimes go (the forecast's history arm);
  // null: nowhere. Must outlive the loop.
  RuntimeLog* runtimes = nullptr;
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
  // knows that are not in it (deleted while no watch was open), but for
  // those named ("namespace/name") in `undecodable`: listed, not readable,
  // kept as they were.
  void PodsListed(std::vector<Pod> pods,
                  std::vector<std::string> undecodable = {});
  void PodGroupUpserted(PodGroup group);
  void PodGroupDeleted(std::string key);
  // A complete PodGroup list of one API (none: the API is not served),
  // applied in one pass; deletions come as PodGroupDeleted.
  void PodGroupsListed(PodGroup::Flavor flavor, std::vector<PodGroup> groups);
  void NodeRemoved(std::string node);
  void NodeAdded(std::string node);
  // The model now holds a complete node list (after the sync applied it):
  // admissions on nodes it lacks are taken back; a node named in
  // `undecodable` was listed but could not be read, and is not gone.
  void NodesListed(std::vector<std::string> undecodable = {});
  // The DRA objects are listed and pods with claims charged against them
  // (or the cluster has no DRA to wait for).
  void DraListed();
  // `flavor`'s PodGroup list keeps failing (`error`): passes go on without
  // it, its gangs waiting (PodGroupAPIUnavailable) until its list arrives.
  void PodGroupApiFailing(PodGroup::Flavor flavor, std::string error);
  // `kind`'s watch lost its history and lists again: no pass until that
  // list arrives (await_lists only).
  void Relisting(ListKind kind);
  void PolicyChanged(Policy policy);
  // The writer's eviction of a revoked member was refused by a disruption
  // budget: the member still runs where it was (see EvictionRefusal).
  void EvictionBlocked(EvictionRefusal refusal);
  // The writer could not carry out an admission (AdmissionRefusal): the
  // member never left its gate, so its workload's admission is withdrawn
  // (quota and nodes released, the gang backoff) and nothing is evicted
  // for it.
  void AdmissionRefused(AdmissionRefusal refusal);
  // An admission check of `workload` ("ns/name") has a new state, as its
  // controller says (the ProvisioningRequest watch): applied in the next
  // pass as QueueingEngine::SetCheckState (Ready on all admits, Retry
  // requeues, Rejected deactivates).
  void CheckStateChanged(std::string workload, std::string check,
                         CheckState state, std::string message,
                         PodSetUpdate update = {});
  // A request of that check for `attempt` exists: applied in the next pass
  // as QueueingEngine::NoteCheckAttempt.
  void CheckAttemptSeen(std::string workload, std::string check, int attempt);
  // The requeue state the deciding replica kept, read from where it keeps
  // it: applied once the pass's other inputs are (the first complete pod
  // list among them), as QueueingEngine::RestoreRequeueStates. The first
  // read is `initial` and always applied; a later one only while this
  // replica is a standby (the deciding replica's own state is newer).
  void RequeueStateLoaded(std::vector<RequeueRecord> records, bool initial);
  // The requeue state as the last pass of the deciding replica left it;
  // null before one, or while a standby (keep_requeue_state). Thread-safe.
  std::shared_ptr<const std::vector<RequeueRecord>> RequeueRecords() const;

  // AdmissionGate.
  bool Manages(const Pod& pod) const override;
  GateVerdict Check(const Pod& pod) override;
  VictimReview ReviewVictims(
      std::span<const std::string> victim_uids) const override;
  void Bound(const Pod& pod, int64_t now_ms) override;

  // Blocks until every input given before the call went through a pass
  // (tests). With await_lists, that is once every source was listed.
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
  // Runs `read` with the engine (reports, tests) while no pass runs. The
  // engine is the loop thread's alone otherwise: the service's model lock
  // does not guard it (it plans on the loop's replica, not the service's
  // model).
  template <typename F>
  auto ReadEngine(F&& read) const {
    std::lock_guard lock(engine_mu_);
    return read(static_cast<const QueueingEngine&>(*engine_));
  }
  // Passes whose commit found a workload's devices taken meanwhile and
  // withdrew it (tests, metrics).
  uint64_t refused_commits() const;
  // The queues as the last pass left them (the read model every surface
  // reads); never null once Start ran a pass, an empty view before. Takes
  // no engine lock: the snapshot is immutable.
  std::shared_ptr<const QueueView> Queues() const;
  // `explain` for one workload ("ns/name" of a PodGroup or a single pod;
  // a gang member's key answers for its gang), answered on the loop thread
  // between passes (the engine is the loop's own; the caller takes no
  // lock of it), waiting at most `timeout` for a pass under way to end.
  absl::StatusOr<WorkloadExplanation> Explain(
      std::string key, std::chrono::milliseconds timeout);
  // Where Explain reads the DRA claims' full demand and charge (the live
  // DRA sync, once it runs); until set, only what the pods carry.
  // Thread-safe; the lookup's functions must be, and outlive the loop.
  void SetDraLookup(DraLookup lookup);
  // Runs `question(engine, model, now)` on the loop thread between passes
  // (without a pass of its own, and without waiting for the pace) and
  // returns what it returns; waits at most `timeout`. The question must
  // only read: the engine and model are the loop's.
  template <typename Answer, typename F>
  absl::StatusOr<Answer> Ask(F question, std::chrono::milliseconds timeout) {
    auto answer = std::make_shared<std::promise<Answer>>();
    std::future<Answer> future = answer->get_future();
    absl::Status queued = Enqueue(
        [answer, question = std::move(question)](
            const QueueingEngine& engine, const ClusterModel& model,
            int64_t now) { answer->set_value(question(engine, model, now)); });
    if (!queued.ok()) return queued;
    if (future.wait_for(timeout) != std::future_status::ready) {
      return absl::DeadlineExceededError(
          "the admission loop did not answer in time: a pass is under way");
    }
    try {
      return future.get();
    } catch (const std::future_error&) {  // dropped by Stop
      return absl::UnavailableError("the admission loop stopped");
    }
  }
  // What the passes this replica decided did to the queues (admissions,
  // evictions, preemptions), counted once per event. Thread-safe.
  QueueEventCounts QueueCounts() const { return counted_.Snapshot(); }
  // The last admissions, preemptions and evictions this replica decided,
  // newest first (DecisionLog). Thread-safe; takes no engine lock.
  std::shared_ptr<const RecentDecisions> Decisions() const {
    return decisions_.Latest();
  }

 private:
  struct Deleted {
    Pod pod;
  };
  struct Listed {
    std::vector<Pod> pods;
    std::vector<std::string> undecodable;
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
  struct NodesComplete {
    std::vector<std::string> undecodable;
  };
  struct GroupsListed {
    PodGroup::Flavor flavor = PodGroup::Flavor::kVolcano;
    std::vector<PodGroup> groups;
  };
  // The DRA lists are in: nothing to apply, the pods came before it.
  struct DraComplete {};
  struct GroupApiFailing {
    PodGroup::Flavor flavor = PodGroup::Flavor::kVolcano;
    std::string error;
  };
  // bind confirmed a managed pod (Bound, called under the service's lock).
  struct BoundMember {
    std::string pod_key;
  };
  struct CheckChanged {
    std::string workload;
    std::string check;
    CheckState state = CheckState::kPending;
    std::string message;
    PodSetUpdate update;
  };
  struct CheckAttempt {
    std::string workload;
    std::string check;
    int attempt = 0;
  };
  struct RequeueLoaded {
    std::vector<RequeueRecord> records;
    bool initial = false;
  };
  using Input = std::variant<Pod, Deleted, Listed, PodGroup, GroupDeleted,
                             NodeGone, NodeBack, NodesComplete, GroupsListed,
                             Policy, EvictionRefusal, BoundMember,
                             AdmissionRefusal, GroupApiFailing, DraComplete,
                             CheckChanged, CheckAttempt, RequeueLoaded>;
  // Asked of the engine on the loop thread (Explain).
  using Question = std::function<void(const QueueingEngine&,
                                      const ClusterModel&, int64_t now)>;
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
  // A pod bound, or admitted, on a node the engine could not adopt it on
  // yet (node not in the model, or its devices not free there).
  struct Orphan {
    Pod pod;
    std::string node;
    bool bound = false;
  };

  // A pod whose placement the pass changed in the replica.
  struct PlacedMember {
    std::string uid;
    std::string key;
  };
  // What publishing one pod did to the service's model (CommitPass).
  struct PodPublish {
    bool published = false;  // placed (or moved) there by this call
    bool refused = false;    // an assumed placement it cannot take
    // An assumed placement the pod had there before a move: put back if
    // its workload is refused.
    std::optional<std::pair<std::string, DetachedPod>> before;
  };

  AdmissionLoop(Policy policy, AdmissionLoopOptions options);
  void Push(Input input);
  // Where each source's list stands (await_lists).
  enum class ListState { kWaiting, kListed, kFailing };
  // Marks `kind` as `state` and pushes `input` in one step.
  void PushListed(ListKind kind, Input input,
                  ListState state = ListState::kListed);
  bool ListsComplete() const;  // inbox_mu_ held
  void Run(std::stop_token stop);
  // Under inbox_mu_: waits until a pass may begin (inputs or a request,
  // paced by min_pass_interval_ms, or `sleep_ms` for timers); false on
  // stop or while lists are incomplete.
  bool AwaitPass(std::stop_token stop, std::unique_lock<std::mutex>& lock,
                 int64_t sleep_ms);
  // What a pass hands on once the engine's lock is let go.
  struct PassOutcome {
    std::vector<QueueDecision> decisions;
    std::shared_ptr<const Published> published;
    std::shared_ptr<const QueueView> queues;
    std::shared_ptr<const std::vector<RequeueRecord>> requeue_records;
  };
  // `paused_ms`: how long the loop waited for a relist before this pass.
  void Pass(std::vector<Input> inputs, int64_t paused_ms);
  // After the commit, engine_mu_ held: the writes, statuses and read
  // models the pass leads to.
  PassOutcome Decide(int64_t now, bool deciding);
  // Counts and records the pass's engine events for the read models.
  void Observe(const std::vector<EngineEvent>& events, bool deciding);
  // Publishes the outcome to filter and the writer, then wakes WaitIdle.
  void HandOn(PassOutcome outcome, size_t inputs);
  // Queues a question for the loop thread; Unavailable when it is not
  // running.
  absl::Status Enqueue(Question question);
  // Runs each question with the engine and its replica, engine_mu_ held.
  void Answer(const std::vector<Question>& questions);
  // The pass's work on the replica, engine_mu_ held and no service lock.
  void Plan(std::vector<Input>& inputs, int64_t paused_ms, int64_t now,
            bool deciding);
  // admission_loop_commit.cc: the replica's changes into the service's
  // model; withdraws in the engine what could not be published.
  void CommitPass();
  std::vector<std::string> PublishWorkload(
      ClusterModel& service, const std::vector<PlacedMember>& pods) const;
  PodPublish PublishPod(ClusterModel& service, const std::string& uid) const;
  static void TakeOff(ClusterModel& service, const std::string& uid,
                      bool was_bound);
  void Apply(Input& input, int64_t now);
  void ApplyPod(const Pod& pod, int64_t now);
  void ApplyTerminal(const Pod& pod, int64_t now);
  void ApplyRefusal(const EvictionRefusal& refusal, int64_t now);
  void ApplyAdmissionRefused(const AdmissionRefusal& refusal, int64_t now);
  // A pod being deleted that holds no admission: see ApplyPod.
  bool Leaving(const Pod& pod) const;
  void ApplyLeaving(const Pod& pod, int64_t now);
  void AddPending(const Pod& pod, int64_t now);
  void ApplyList(const Listed& listed, int64_t now);
  void ForgetUnlisted(const std::set<std::string>& listed, int64_t now);
  void Forget(const std::string& pod_key);
  // Pods that run, or that were admitted on a node before a restart, keep
  // their node (QueueingEngine::Adopt). True when the pod is settled so,
  // false when it is to be queued as pending.
  bool AdoptIfAdmitted(const Pod& pod, int64_t now);
  bool AdoptKueueAdmitted(const Pod& pod, int64_t now);
  void AdoptBound(const Pod& pod, int64_t now);
  // Adopts the orphans whose node the model has now; takes back the
  // admission of an unbound one whose node is gone or cannot hold it.
  void SettleOrphans(int64_t now);
  // The admission of an unbound pod on `node` cannot be kept: revoked, and
  // queued again unless pinned there. False when it is to be queued.
  bool GiveUpAdmission(const Pod& pod, const std::string& node,
                       const std::string& why, int64_t now);
  // The node's deletion was seen: admissions waiting for it end.
  void GiveUpOrphansOn(const std::string& node, int64_t now);
  // Whether a node the model lacks is gone from the cluster (not merely
  // not listed yet).
  bool NodeIsGone(const std::string& node) const;
  // Admitted members on nodes that a complete node list no longer has.
  void DropVanishedNodes(int64_t now);
  void ApplyGroupsListed(const GroupsListed& listed, int64_t now);
  void NoteAdopted(const Pod& pod, const std::string& node);
  void RevokeStale(const Pod& pod, const std::string& node, bool pinned,
                   const std::string& why);
  std::vector<QueueDecision> Diff();
  void TakenBack(const std::map<std::string, MemberState>& current,
                 std::vector<QueueDecision>& out);
  std::shared_ptr<const Published> Latest() const;
  std::shared_ptr<const Published> Publish(
      const PendingPositionMap& positions) const;
  int64_t Now() const;

  // Held by the loop thread through each pass (ReadEngine).
  mutable std::mutex engine_mu_;
  std::unique_ptr<QueueingEngine> engine_;
  AdmissionLoopOptions options_;
  ExtenderService* service_ = nullptr;
  // The engine's model: the loop thread's copy of the service's, synced at
  // the start of each pass (ClusterModel::SyncFrom).
  ClusterModel replica_;
  DecisionSink* sink_ = nullptr;
  Policy policy_;  // the engine's, until Start creates the engine

  mutable std::mutex dra_mu_;
  DraLookup dra_lookup_;  // guarded by dra_mu_

  mutable std::mutex inbox_mu_;
  std::condition_variable_any inbox_cv_;
  std::vector<Input> inbox_;
  std::vector<Question> questions_;  // guarded by inbox_mu_
  uint64_t inputs_pushed_ = 0;       // guarded by inbox_mu_
  uint64_t inputs_applied_ = 0;      // guarded by inbox_mu_
  uint64_t passes_ = 0;              // guarded by inbox_mu_ (passes ended)
  uint64_t passes_begun_ = 0;        // guarded by inbox_mu_
  bool pass_requested_ = false;      // guarded by inbox_mu_
  std::chrono::steady_clock::time_point last_pass_began_;  // inbox_mu_
  std::chrono::steady_clock::duration last_pass_took_{};   // inbox_mu_
  uint64_t refused_commits_ = 0;                // guarded by inbox_mu_
  std::array<ListState, kListKinds> listed_{};  // guarded by inbox_mu_
  // When the loop began to wait for a relist, if it waits (inbox_mu_).
  std::optional<int64_t> relisting_since_;
  std::atomic<bool> deciding_{true};
  std::condition_variable idle_cv_;

  mutable std::mutex published_mu_;
  std::shared_ptr<const Published> published_;  // guarded by published_mu_
  std::shared_ptr<const QueueView> queues_;     // guarded by published_mu_
  // keep_requeue_state: the deciding passes' records (published_mu_).
  std::shared_ptr<const std::vector<RequeueRecord>> requeue_records_;
  uint64_t passes_planned_ = 0;  // loop thread only

  // Loop thread only. What the loop did to a pod (admitted, ungated,
  // pinned) is kept here, never written into the Pod it holds: a Pod's
  // admission record stays as api/codec decoded it, and changes only when
  // the watch delivers the pod again.
  std::map<std::string, MemberState> members_;  // admitted members by key
  StatusTracker status_;       // the codes and phases told so far
  QueueEventCounter counted_;  // Count on the loop thread only
  DecisionLog decisions_;      // Record on the loop thread only
  // Arrived with our gate, or adopted pinned to its node by the affinity
  // that replaced the gate: either way only eviction takes it back.
  absl::flat_hash_map<std::string, bool> gated_;
  // Pods bound or admitted on a node the model does not have yet (or that
  // cannot hold them now), by key: adopted once it has (the node watch
  // fills the model on its own thread). An unbound one's admission is
  // taken back only when its node is gone (NodeIsGone).
  std::map<std::string, Orphan> orphans_;
  // Admissions from before a restart that could not be kept (node gone or
  // full), taken back in the next pass's decisions; each pod once.
  std::vector<QueueDecision> stale_revokes_;
  std::set<std::string> stale_revoked_;
  // Members whose admission the API server refused: taking it back writes
  // nothing (Diff), as the pod never left its gate.
  std::set<std::string> refused_;
  // Nodes the last complete node list named but could not read: not gone.
  std::set<std::string> undecodable_nodes_;
  // A requeue state read this pass, restored once its inputs are applied.
  std::optional<std::vector<RequeueRecord>> requeue_restore_;

  std::jthread thread_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_ADMISSION_LOOP_H_
