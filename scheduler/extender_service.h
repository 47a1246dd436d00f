#ifndef GPUSCHED_SCHEDULER_EXTENDER_SERVICE_H_
#define GPUSCHED_SCHEDULER_EXTENDER_SERVICE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "scheduler/admission_gate.h"
#include "scheduler/cluster_model.h"
#include "scheduler/fit_verdict.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/node_fit.h"
#include "scheduler/node_memo.h"
#include "scheduler/pending_pods.h"
#include "scheduler/scoring.h"
#include "scheduler/verdict_cache.h"

namespace gpusched {

// A node kube-scheduler names that gpusched's watch has not delivered (yet):
// a retryable verdict (FailedNodes), since the watch may be a moment behind
// kube-scheduler's own; before the first complete list every verb answers
// an Error instead.
inline constexpr char kUnknownNodeReason[] = "node not known to gpusched";

// Filter verdicts per node, in the order the nodes were asked about.
struct FilterOutcome {
  std::vector<std::string> passed;
  std::vector<std::pair<std::string, std::string>> failed;  // may fit later
  std::vector<std::pair<std::string, std::string>> unresolvable;  // never fits
  std::vector<std::string> not_chosen;  // fit, left out (filter_keep_best)
};

// Receives Filter's verdicts one candidate at a time, in the order asked;
// `reason` is empty when the pod fits and valid only during the call.
using FilterVisitor =
    absl::FunctionRef<void(FitVerdict::Code code, std::string_view reason)>;

struct HostScore {
  std::string host;
  int64_t score = 0;  // 0..10, the extender protocol's range
  friend bool operator==(const HostScore&, const HostScore&) = default;
};

struct PreemptionCandidate {
  std::string node;
  std::vector<std::string> victim_uids;
  int64_t pdb_violations = 0;
  friend bool operator==(const PreemptionCandidate&,
                         const PreemptionCandidate&) = default;
};

struct BindRequest {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};

struct BindOutcome {
  std::string error;  // empty on success
  GpuAssignment assignment;
  bool already_bound = false;
};

// Where a binding goes once gpusched has chosen the devices: nowhere in
// standalone mode (the model is the cluster), the API server in live mode.
class BindSink {
 public:
  virtual ~BindSink() = default;
  // Writes gpusched.io/gpu-ids on the pod and creates its pods/binding.
  // OK: bound. DeadlineExceeded, Unavailable, Cancelled or Unknown: the
  // outcome is not known, the binding may still land (see
  // BindMayHaveLanded). Any other error: the pod was not bound.
  virtual absl::Status Bind(const Pod& pod, const std::string& node,
                            const GpuAssignment& assignment) = 0;
};

// A status payload (type URL) marking a call that failed before its request
// could reach the server (resolve, connect, TLS handshake): whatever its
// code, nothing was sent, so nothing can land.
inline constexpr char kRequestNotSentPayload[] = "gpusched.io/request-not-sent";

// True for a BindSink status after which the binding may still land.
bool BindMayHaveLanded(const absl::Status& status);

struct ServiceOptions {
  ScoringWeights weights = ScoringWeights::Defaults();
  size_t pending_pod_capacity = 100000;
  BindSink* bind_sink = nullptr;  // not owned; null in standalone mode
  // The queueing core for the pods it manages; null: GPU engine only.
  AdmissionGate* gate = nullptr;  // not owned
  // Milliseconds on the scheduler's clock (injected for tests).
  std::function<int64_t()> clock;
  // How long the devices of a bind whose outcome is unknown stay held when
  // nothing (a watch event, a deletion, a retried bind) settles it first.
  // Longer than the API server takes to finish or drop a request.
  int64_t bind_in_doubt_hold_ms = 30000;
  // Filter answers with at most this many fitting nodes, the best by the
  // prioritize scorers (ties: the order asked); the other fitting nodes are
  // left out of the reply. 0: every fitting node. With 1, kube-scheduler
  // skips its scoring and the prioritize call for the pod: the node is
  // gpusched's choice, and kube-scheduler's own soft preferences (preferred
  // affinity, ScheduleAnyway spread) no longer weigh in. Pods the queueing
  // core manages pass on their assigned node only, whatever this says.
  size_t filter_keep_best = 0;
};

struct GpuCounts {
  int64_t nodes = 0;
  int64_t free = 0;    // whole GPUs with nothing on them
  int64_t used = 0;    // whole GPUs fully taken
  int64_t shared = 0;  // GPUs partly taken by shares/replicas
  int64_t unhealthy = 0;
  int64_t mig_free = 0;  // MIG instances
  int64_t mig_used = 0;
};

// The extender verbs over one cluster model.
//
// Concurrency: filter, prioritize and preempt read under a shared lock;
// model updates and bind write under the exclusive lock, and bind re-checks
// the fit there, so two binds can never take the same GPU.
class ExtenderService {
 public:
  explicit ExtenderService(ServiceOptions options = {});

  // Model updates. A node whose resourceVersion is unchanged is skipped.
  // Returns warnings worth logging.
  std::vector<std::string> UpsertNodes(std::vector<Node> nodes);
  // Node `name`'s DRA devices are now `devices` (the rest of its Node
  // object stays): its GPU inventory is rebuilt, its pods put back.
  std::vector<std::string> SetDraDevices(
      std::string_view name, std::shared_ptr<const DraNodeDevices> devices);
  std::vector<std::string> AddRunningPods(const std::vector<Pod>& pods);
  // The node is gone; what its pods hold is kept aside and put back if a
  // node of that name registers again (a kubelet re-registering), since no
  // pod event would bring those pods back. Deleting a pod forgets it.
  bool RemoveNode(std::string_view name);
  // UIDs of pods kept aside from removed nodes (a relist forgets those no
  // longer listed).
  std::vector<std::string> DetachedPodUids() const;
  // True when the model holds node `name` at `resource_version` (an upsert
  // of that object would change nothing).
  bool HasNodeVersion(std::string_view name,
                      std::string_view resource_version) const;
  bool RemovePod(std::string_view uid);

  FilterOutcome Filter(const Pod& pod, std::span<const std::string> nodes);
  // Filter without copying names or reasons: `visit` runs once per node,
  // in order, under the model's lock (it must not call the service).
  // Verdicts are remembered per pod fit signature and node generation, in
  // a cache per calling thread (VerdictCache).
  void FilterEach(const Pod& pod, std::span<const std::string> nodes,
                  FilterVisitor visit);
  // Scores are remembered like filter verdicts, per pod fit signature,
  // workload-model version and node generation.
  std::vector<HostScore> Prioritize(const Pod& pod,
                                    std::span<const std::string> nodes) const;
  // kube-scheduler's preemption victims per node, checked: a node stays
  // only when removing its victims frees room for the pod; victims not
  // needed are reprieved, highest priority first, at least one kept. With a
  // gate, the queueing core's pods are reviewed first (ReviewVictims): the
  // ones it keeps are dropped from the victims (the node stays only if the
  // pod fits without them), and a workload's members are reprieved all or
  // none. `notes`, when given, receives a sentence per node changed so.
  std::vector<PreemptionCandidate> Preempt(
      const Pod& pod, std::vector<PreemptionCandidate> candidates,
      std::vector<std::string>* notes = nullptr) const;
  // Preempt, but a node kube-scheduler may know newer than gpusched does
  // (unknown to the model, or changed within `fresh_ms`) is not dropped on
  // a state that is about to change: when such a node would be dropped,
  // waits up to `catch_up` for the node watch to deliver a change of such
  // a node (not of any other) and decides again. kube-scheduler retries a pod
  // refused here only on a later cluster event, which a quiet cluster may not
  // have for minutes.
  std::vector<PreemptionCandidate> PreemptCatchingUp(
      const Pod& pod, std::vector<PreemptionCandidate> candidates,
      std::vector<std::string>* notes, int64_t fresh_ms,
      std::chrono::milliseconds catch_up) const;
  BindOutcome Bind(const BindRequest& request);

  // The API server says pod `pod` is bound to pod.node_name (a watch event
  // or a list). Settles a bind in doubt or an assumed placement: marks it
  // bound where it is, or moves it where the server says. Returns warnings.
  std::vector<std::string> ObserveBound(const Pod& pod);
  // Releases the devices of binds still in doubt after their hold; returns
  // the UIDs released (call periodically in live mode).
  std::vector<std::string> ReleaseExpiredBinds();
  size_t binds_in_doubt() const;

  // Runs `write` with the model under the exclusive lock (policy reloads,
  // the admission loop's timers).
  template <typename F>
  auto Write(F&& write) {
    std::unique_lock lock(mu_);
    return write(model_);
  }
  int64_t NowMs() const;
  // Runs `read` with the model under the shared lock.
  template <typename F>
  auto Read(F&& read) const {
    std::shared_lock lock(mu_);
    return read(model_);
  }
  GpuCounts CountGpus() const;
  // No bind sink: the model is the cluster (`serve --cluster FILE`), so
  // nothing but this process can complete a pod.
  bool standalone() const { return options_.bind_sink == nullptr; }
  const ScoringWeights& weights() const { return options_.weights; }

 private:
  NodeMemo<int>::Table& ScoreMemo(const PodView& view) const;
  // The scorers' combined 0..100 (-1 where the pod does not fit).
  int CombinedScore(const PodView& view, const NodeState& node) const;
  // Which of `found` filter keeps (filter_keep_best), by index; the
  // verdicts come from `shape`, filled as filter fills it.
  const std::vector<bool>& ChooseBest(
      const PodView& view, const std::vector<const NodeState*>& found,
      VerdictCache::Shape& shape, GpuVerdictMemo& memo) const;
  std::optional<PreemptionCandidate> CheckCandidate(
      const PodView& view, PreemptionCandidate candidate,
      const VictimReview& review, std::vector<std::string>* notes) const;
  // The victims of `candidate` put back on `without_victims` while the pod
  // still fits, workload by workload (`together`), highest priority first.
  std::vector<std::string> Reprieve(
      const PodView& view, const PreemptionCandidate& candidate,
      const std::vector<std::vector<std::string>>& together,
      NodeState& without_victims) const;
  BindOutcome PlaceForBind(const Pod& pod, const BindRequest& request);
  void GateFilter(const Pod& pod, std::span<const std::string> nodes,
                  FilterVisitor visit);
  BindOutcome SendBinding(const Pod* pod, const BindRequest& request,
                          GpuAssignment assignment,
                          std::unique_lock<std::shared_mutex>& lock);
  BindOutcome BindingFailed(const Pod* pod, const BindRequest& request,
                            const absl::Status& sent);
  void FilterInDoubt(const PlacedPod& placed,
                     std::span<const std::string> nodes, FilterVisitor visit);
  // FilterEach's two ways, mu_ held. A pod whose bind is in doubt (false
  // when it is not one)...
  bool FilteredInDoubt(const Pod& pod, std::span<const std::string> nodes,
                       FilterVisitor visit);
  // ...and every other: each node's verdict, from the cache when it has
  // one, less the fitting nodes filter_keep_best leaves out.
  void FilterNodes(const PodView& view, std::span<const std::string> nodes,
                   VerdictCache::Shape& shape, GpuVerdictMemo& memo,
                   FilterVisitor visit);

  // True when a node of `names` is unknown, or changed at or after
  // `since_ms`.
  bool AnyNodeChangedSince(std::span<const std::string> names,
                           int64_t since_ms) const;
  // Waits until one of `names` changed in the model after `seen` (a count
  // of node_changes_) or `timeout` passed; false on the timeout. Other
  // nodes' changes (status heartbeats) do not end the wait: deciding again
  // on them would drop the node kube-scheduler saw newer all the same.
  bool WaitForChangeOf(std::span<const std::string> names, uint64_t seen,
                       std::chrono::milliseconds timeout) const;

  ServiceOptions options_;
  mutable std::shared_mutex mu_;
  // Node upserts that changed the model, and when each node last changed:
  // at which count of node_changes_ and when (NowMs). Guarded by mu_;
  // node_changed_cv_ tells each change.
  struct NodeChange {
    uint64_t count = 0;
    int64_t ms = 0;
  };
  uint64_t node_changes_ = 0;
  StringKeyMap<NodeChange> node_changed_;
  mutable std::condition_variable_any node_changed_cv_;
  ClusterModel model_;
  PendingPods pending_;
  // Binds whose outcome is unknown, by pod UID: the time their devices are
  // released unless the API server settles them first. Guarded by mu_.
  StringKeyMap<int64_t> binds_in_doubt_;
  // Pods of removed nodes, by node name (see RemoveNode). Guarded by mu_.
  StringKeyMap<std::vector<DetachedPod>> detached_;

  void ReattachDetached(std::string_view node);
  void UpsertNodeLocked(Node node, int64_t now,
                        std::vector<std::string>& warnings);
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_EXTENDER_SERVICE_H_
