#include "api/controller/admission_loop.h"

#include <algorithm>
#include <future>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/quota_tree.h"
#include "queueing/start_forecast.h"

namespace gpusched {

ListKind GroupListKind(PodGroup::Flavor flavor) {
  switch (flavor) {
    case PodGroup::Flavor::kVolcano:
      return ListKind::kVolcanoGroups;
    case PodGroup::Flavor::kCoscheduling:
      return ListKind::kCoschedulingGroups;
    case PodGroup::Flavor::kNative:
      return ListKind::kNativeGroups;
  }
  return ListKind::kNativeGroups;
}

namespace {

// The sentence of a member's Admitted Event.
std::string AdmittedSentence(const Workload& w, const std::string& node) {
  std::string sentence = absl::StrCat("admitted on node ", node);
  if (!w.cluster_queue.empty()) {
    absl::StrAppend(&sentence, " by ClusterQueue ", w.cluster_queue);
  }
  if (w.is_gang) {
    absl::StrAppend(&sentence, " with its gang ", w.key, " (",
                    w.placements.size(), " of ", w.pods.size(),
                    " pods placed)");
  }
  return sentence;
}

// An admitted gang with fewer members placed (or already succeeded) than
// make it: adopted from a replica stopped in the middle of the gang's
// admission writes, or short of members it lost. Its unbound members are not
// let bind until the rest are placed (or the gang is evicted after its grace),
// so a gang never starts half.
bool PartlyPlacedGang(const Workload& w) {
  return w.admitted() && w.is_gang &&
         static_cast<int>(w.placements.size() + w.succeeded.size()) <
             w.min_member;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AdmissionLoop>> AdmissionLoop::Create(
    Policy policy, AdmissionLoopOptions options) {
  if (absl::StatusOr<QuotaTree> tree = QuotaTree::Build(policy); !tree.ok()) {
    return tree.status();
  }
  return std::unique_ptr<AdmissionLoop>(
      new AdmissionLoop(std::move(policy), std::move(options)));
}

AdmissionLoop::AdmissionLoop(Policy policy, AdmissionLoopOptions options)
    : options_(std::move(options)),
      policy_(std::move(policy)),
      published_(std::make_shared<Published>()) {
  deciding_ = options_.start_deciding;
  if (!options_.keep_requeue_state) {
    listed_[static_cast<size_t>(ListKind::kRequeueState)] = ListState::kListed;
  }
}

void AdmissionLoop::SetDeciding(bool deciding) {
  deciding_ = deciding;
  {
    std::lock_guard lock(inbox_mu_);
    pass_requested_ = true;
  }
  inbox_cv_.notify_one();
}

AdmissionLoop::~AdmissionLoop() { Stop(); }

void AdmissionLoop::Start(ExtenderService& service, DecisionSink* sink) {
  service_ = &service;
  sink_ = sink;
  // Create validated the policy, so this cannot fail.
  engine_ = *QueueingEngine::Create(std::move(policy_), &replica_);
  replica_.RecordPodChanges(true);
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void AdmissionLoop::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  inbox_cv_.notify_all();
  thread_.join();
  // Unanswered questions are dropped: their askers hear Unavailable.
  std::lock_guard lock(inbox_mu_);
  questions_.clear();
}

int64_t AdmissionLoop::Now() const {
  return options_.clock ? options_.clock() : service_->NowMs();
}

void AdmissionLoop::Push(Input input) {
  {
    std::lock_guard lock(inbox_mu_);
    inbox_.push_back(std::move(input));
    ++inputs_pushed_;
  }
  inbox_cv_.notify_one();
}

// The source counts as listed from the moment its list is in the inbox: a
// pass takes the whole inbox, so it applies the list with what came before.
void AdmissionLoop::PushListed(ListKind kind, Input input, ListState state) {
  {
    std::lock_guard lock(inbox_mu_);
    inbox_.push_back(std::move(input));
    ++inputs_pushed_;
    listed_[static_cast<size_t>(kind)] = state;
  }
  inbox_cv_.notify_one();
}

// A PodGroup API that keeps failing holds only its own gangs (the engine
// knows which): the rest of the cluster is not held hostage to it.
bool AdmissionLoop::ListsComplete() const {
  if (!options_.await_lists) return true;
  for (size_t kind = 0; kind < kListKinds; ++kind) {
    const bool group = kind >= static_cast<size_t>(ListKind::kVolcanoGroups) &&
                       kind <= static_cast<size_t>(ListKind::kNativeGroups);
    if (listed_[kind] == ListState::kListed) continue;
    if (group && listed_[kind] == ListState::kFailing) continue;
    return false;
  }
  return true;
}

void AdmissionLoop::PodUpserted(Pod pod) { Push(std::move(pod)); }
void AdmissionLoop::PodDeleted(Pod pod) { Push(Deleted{std::move(pod)}); }
void AdmissionLoop::PodsListed(std::vector<Pod> pods,
                               std::vector<std::string> undecodable) {
  PushListed(ListKind::kPods, Listed{std::move(pods), std::move(undecodable)});
}
void AdmissionLoop::NodesListed(std::vector<std::string> undecodable) {
  PushListed(ListKind::kNodes, NodesComplete{std::move(undecodable)});
}
void AdmissionLoop::DraListed() { PushListed(ListKind::kDra, DraComplete{}); }
void AdmissionLoop::PodGroupsListed(PodGroup::Flavor flavor,
                                    std::vector<PodGroup> groups) {
  PushListed(GroupListKind(flavor), GroupsListed{flavor, std::move(groups)});
}
void AdmissionLoop::PodGroupApiFailing(PodGroup::Flavor flavor,
                                       std::string error) {
  PushListed(GroupListKind(flavor), GroupApiFailing{flavor, std::move(error)},
             ListState::kFailing);
}
void AdmissionLoop::Relisting(ListKind kind) {
  std::lock_guard lock(inbox_mu_);
  listed_[static_cast<size_t>(kind)] = ListState::kWaiting;
  if (options_.await_lists && passes_ > 0 && !relisting_since_) {
    relisting_since_ = Now();
  }
}
void AdmissionLoop::PodGroupUpserted(PodGroup group) { Push(std::move(group)); }
void AdmissionLoop::PodGroupDeleted(std::string key) {
  Push(GroupDeleted{std::move(key)});
}
void AdmissionLoop::NodeRemoved(std::string node) {
  Push(NodeGone{std::move(node)});
}
void AdmissionLoop::NodeAdded(std::string node) {
  Push(NodeBack{std::move(node)});
}
void AdmissionLoop::PolicyChanged(Policy policy) { Push(std::move(policy)); }
void AdmissionLoop::EvictionBlocked(EvictionRefusal refusal) {
  Push(std::move(refusal));
}
void AdmissionLoop::AdmissionRefused(AdmissionRefusal refusal) {
  Push(std::move(refusal));
}
void AdmissionLoop::CheckStateChanged(std::string workload, std::string check,
                                      CheckState state, std::string message,
                                      PodSetUpdate update) {
  Push(CheckChanged{std::move(workload), std::move(check), state,
                    std::move(message), std::move(update)});
}

void AdmissionLoop::CheckAttemptSeen(std::string workload, std::string check,
                                     int attempt) {
  Push(CheckAttempt{std::move(workload), std::move(check), attempt});
}

void AdmissionLoop::WaitIdle() {
  std::unique_lock lock(inbox_mu_);
  const uint64_t pushed = inputs_pushed_;
  // A pass under way now may have read the clock before the caller moved
  // it: only one begun after this call counts (passes end in order).
  const uint64_t begun = passes_begun_;
  pass_requested_ = true;
  inbox_cv_.notify_one();
  idle_cv_.wait(lock, [&] {
    return (inputs_applied_ >= pushed && passes_ > begun) ||
           !thread_.joinable();
  });
}

uint64_t AdmissionLoop::passes() const {
  std::lock_guard lock(inbox_mu_);
  return passes_;
}

uint64_t AdmissionLoop::refused_commits() const {
  std::lock_guard lock(inbox_mu_);
  return refused_commits_;
}

// Sleeps until an input arrives, a pass is asked for, the engine's next
// timer is due, or max_idle_ms passed; then runs one pass over everything
// that arrived meanwhile (a burst of pod events costs one pass).
void AdmissionLoop::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    const int64_t now = Now();
    // The loop thread's own engine: no lock to read it here.
    std::optional<int64_t> wakeup = engine_->NextWakeup(now);
    int64_t sleep_ms = options_.max_idle_ms;
    if (wakeup) sleep_ms = std::clamp<int64_t>(*wakeup - now, 0, sleep_ms);
    std::vector<Input> inputs;
    std::vector<Question> questions;
    int64_t paused = 0;
    {
      std::unique_lock lock(inbox_mu_);
      const bool pass = AwaitPass(stop, lock, sleep_ms);
      questions = std::exchange(questions_, {});
      if (!pass) {
        lock.unlock();
        Answer(questions);
        if (stop.stop_requested()) break;
        continue;
      }
      inputs = std::exchange(inbox_, {});
      last_pass_began_ = std::chrono::steady_clock::now();
      pass_requested_ = false;
      ++passes_begun_;
      if (relisting_since_) {
        paused = Now() - *std::exchange(relisting_since_, std::nullopt);
      }
    }
    Pass(std::move(inputs), paused);
    Answer(questions);  // after the pass: from the freshest state
    std::lock_guard lock(inbox_mu_);
    last_pass_took_ = std::chrono::steady_clock::now() - last_pass_began_;
  }
  std::lock_guard lock(inbox_mu_);
  idle_cv_.notify_all();
}

void AdmissionLoop::Answer(const std::vector<Question>& questions) {
  if (questions.empty()) return;
  std::lock_guard engine_lock(engine_mu_);
  const int64_t now = Now();
  for (const Question& question : questions) question(*engine_, replica_, now);
}

bool AdmissionLoop::AwaitPass(std::stop_token stop,
                              std::unique_lock<std::mutex>& lock,
                              int64_t sleep_ms) {
  inbox_cv_.wait_for(lock, stop, std::chrono::milliseconds(sleep_ms), [&] {
    return !questions_.empty() ||
           (ListsComplete() && (!inbox_.empty() || pass_requested_));
  });
  // Half a picture decides nothing, timers included (await_lists).
  if (stop.stop_requested() || !ListsComplete()) return false;
  if (!pass_requested_ && !questions_.empty()) return false;  // answer first
  if (!pass_requested_ && !inbox_.empty()) {
    const auto pace = std::max<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(options_.min_pass_interval_ms),
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            last_pass_took_ / std::max(options_.max_pass_share, 0.01)));
    const auto due = last_pass_began_ + pace;
    inbox_cv_.wait_until(lock, stop, due, [&] {
      return pass_requested_ || !questions_.empty();
    });
    if (!pass_requested_ && !questions_.empty()) return false;
  }
  return !stop.stop_requested() && ListsComplete();
}

// The inputs were drained before the sync: the service's model already
// holds what the node and pod watches did before pushing them.
void AdmissionLoop::Plan(std::vector<Input>& inputs, int64_t paused_ms,
                         int64_t now, bool deciding) {
  service_->Read([&](const ClusterModel& model) { replica_.SyncFrom(model); });
  if (paused_ms > 0) engine_->PostponeEvictions(paused_ms);
  // The replica holds the node list already: the nodes it could not read
  // are known before any pod is adopted on them.
  for (const Input& input : inputs) {
    if (const auto* nodes = std::get_if<NodesComplete>(&input)) {
      undecodable_nodes_ = {nodes->undecodable.begin(),
                            nodes->undecodable.end()};
    }
  }
  for (Input& input : inputs) Apply(input, now);
  if (!orphans_.empty()) SettleOrphans(now);
  if (requeue_restore_) {
    engine_->RestoreRequeueStates(*requeue_restore_, now);
    requeue_restore_.reset();
  }
  if (deciding) engine_->Schedule(now);
}

void AdmissionLoop::Pass(std::vector<Input> inputs, int64_t paused_ms) {
  PassOutcome outcome;
  {
    std::lock_guard engine_lock(engine_mu_);
    const int64_t now = Now();
    const bool deciding = deciding_;
    Plan(inputs, paused_ms, now, deciding);
    if (options_.before_commit) options_.before_commit(replica_);
    // Published before the verdicts are: a member filter passes on its
    // node holds its devices in the service's model.
    CommitPass();
    outcome = Decide(now, deciding);
  }
  HandOn(std::move(outcome), inputs.size());
}

AdmissionLoop::PassOutcome AdmissionLoop::Decide(int64_t now, bool deciding) {
  PassOutcome outcome;
  outcome.decisions = Diff();
  const PendingPositionMap positions = engine_->PendingPositions();
  const std::vector<EngineEvent> events = engine_->TakeEvents();
  for (QueueDecision& status :
       status_.Changes(*engine_, events, positions, now)) {
    outcome.decisions.push_back(std::move(status));
  }
  Observe(events, deciding);
  // A standby's baseline (admitted members, told statuses) follows the
  // cluster; what the deciding replica did is not written twice.
  if (!deciding) outcome.decisions.clear();
  outcome.published = Publish(positions);
  outcome.queues = std::make_shared<const QueueView>(
      BuildQueueView(*engine_, ++passes_planned_, now));
  if (options_.keep_requeue_state && deciding) {
    outcome.requeue_records =
        std::make_shared<const std::vector<RequeueRecord>>(
            engine_->RequeueRecords());
  }
  engine_->ForgetFinished(now);
  return outcome;
}

void AdmissionLoop::Observe(const std::vector<EngineEvent>& events,
                            bool deciding) {
  // The deciding replica's events only: each is counted once, where it
  // happened (a standby's adoptions echo the other's admissions).
  if (deciding) {
    const std::shared_ptr<const QueueView> before = Queues();
    counted_.Count(*engine_, events, *before);
    decisions_.Record(*engine_, events, *before);
  }
  // Both replicas: a standby that takes over knows the runs so far.
  if (options_.runtimes != nullptr) {
    options_.runtimes->Observe(*engine_, events);
  }
}

void AdmissionLoop::HandOn(PassOutcome outcome, size_t inputs) {
  {
    std::lock_guard lock(published_mu_);
    published_ = std::move(outcome.published);
    queues_ = std::move(outcome.queues);
    requeue_records_ = std::move(outcome.requeue_records);
  }
  if (sink_ != nullptr && !outcome.decisions.empty()) {
    sink_->Publish(std::move(outcome.decisions));
  }
  // Last: WaitIdle promises the pass's decisions were handed on.
  {
    std::lock_guard lock(inbox_mu_);
    inputs_applied_ += inputs;
    ++passes_;
  }
  idle_cv_.notify_all();
}

void AdmissionLoop::Apply(Input& input, int64_t now) {
  if (Pod* pod = std::get_if<Pod>(&input)) {
    ApplyPod(*pod, now);
  } else if (Deleted* gone = std::get_if<Deleted>(&input)) {
    Forget(gone->pod.Key());
    if (Manages(gone->pod)) engine_->Delete(gone->pod.Key(), now);
  } else if (Listed* listed = std::get_if<Listed>(&input)) {
    ApplyList(*listed, now);
  } else if (PodGroup* group = std::get_if<PodGroup>(&input)) {
    engine_->AddPodGroup(*group, now);
  } else if (NodeGone* node = std::get_if<NodeGone>(&input)) {
    engine_->NodeDown(node->node, now);
    GiveUpOrphansOn(node->node, now);
  } else if (std::holds_alternative<NodesComplete>(input)) {
    DropVanishedNodes(now);
  } else if (auto* failing = std::get_if<GroupApiFailing>(&input)) {
    engine_->SetPodGroupApiFailing(failing->flavor, failing->error);
  } else if (auto* groups = std::get_if<GroupsListed>(&input)) {
    ApplyGroupsListed(*groups, now);
  } else if (auto* refusal = std::get_if<EvictionRefusal>(&input)) {
    ApplyRefusal(*refusal, now);
  } else if (auto* refused = std::get_if<AdmissionRefusal>(&input)) {
    ApplyAdmissionRefused(*refused, now);
  } else if (auto* bound = std::get_if<BoundMember>(&input)) {
    engine_->MarkBound(bound->pod_key);
  } else if (auto* check = std::get_if<CheckChanged>(&input)) {
    engine_->SetCheckState(check->workload, check->check, check->state,
                           std::move(check->message), now,
                           std::move(check->update));
  } else if (auto* seen = std::get_if<CheckAttempt>(&input)) {
    engine_->NoteCheckAttempt(seen->workload, seen->check, seen->attempt);
  } else if (auto* loaded = std::get_if<RequeueLoaded>(&input)) {
    // The deciding replica's own state is newer than what it saved.
    if (loaded->initial || !deciding_) {
      requeue_restore_ = std::move(loaded->records);
    }
  } else if (Policy* policy = std::get_if<Policy>(&input)) {
    // Validated by the caller; a rejected one keeps the old policy.
    (void)engine_->UpdatePolicy(std::move(*policy));
  }
  // A deleted PodGroup leaves its pods' workload as it is: the pods go with
  // it (owner references) and each deletion arrives as its own input. A node
  // that returns is back in the model through the node watch (the pass its
  // input wakes adopts the orphans it was missing for).
}

void AdmissionLoop::ApplyGroupsListed(const GroupsListed& listed, int64_t now) {
  engine_->SetPodGroupApiFailing(listed.flavor, "");
  for (const PodGroup& group : listed.groups) engine_->AddPodGroup(group, now);
}

// A pod update: terminal pods give back their quota and devices at once;
// pods being deleted that hold no admission (an evicted gang's, whose
// controller may already have made their replacements under the same
// group) leave their workload, neither adopted nor queued; pods that run
// or were admitted on a node keep it (adopted when the engine does not
// hold them there, as after a restart); pending ones (re)enter their
// workload, which keeps its admission when it has one.
void AdmissionLoop::ApplyPod(const Pod& pod, int64_t now) {
  if (!Manages(pod)) return;
  if (IsTerminal(pod)) {
    ApplyTerminal(pod, now);
    return;
  }
  if (Leaving(pod)) {
    ApplyLeaving(pod, now);
    return;
  }
  if (!AdoptIfAdmitted(pod, now)) AddPending(pod, now);
  // Kueue's PodsReady reads the pods' Ready condition, not their binding.
  engine_->SetMemberReadiness(pod.Key(), pod.ready);
}

// A member that succeeded has done its part. One that failed leaves its
// gang short, as a deleted one does: a gang below minMember is evicted
// whole after its grace period rather than left running broken.
void AdmissionLoop::ApplyTerminal(const Pod& pod, int64_t now) {
  const std::string key = pod.Key();
  Forget(key);
  if (engine_->FindWorkloadOfPod(key) == nullptr) {
    if (pod.phase == PodPhase::kSucceeded) engine_->AdoptSucceeded(pod);
    return;
  }
  if (pod.phase == PodPhase::kFailed) {
    engine_->Delete(key, now);
  } else {
    engine_->SetMemberReadiness(key, true);  // Kueue counts Succeeded ready
    engine_->Finish(key, now);
  }
}

// A member the engine holds keeps its place until it is gone: its devices
// are in use until then.
bool AdmissionLoop::Leaving(const Pod& pod) const {
  if (!pod.meta.deleting) return false;
  const Workload* w = engine_->FindWorkloadOfPod(pod.Key());
  return w == nullptr || !w->placements.contains(pod.Key());
}

void AdmissionLoop::ApplyLeaving(const Pod& pod, int64_t now) {
  Forget(pod.Key());
  engine_->Delete(pod.Key(), now);
}

void AdmissionLoop::AddPending(const Pod& pod, int64_t now) {
  if (pod.admission.gated_by_us) gated_[pod.Key()] = true;
  engine_->AddPod(pod, now);
}

void AdmissionLoop::Forget(const std::string& pod_key) {
  gated_.erase(pod_key);
  refused_.erase(pod_key);
  orphans_.erase(pod_key);
  stale_revoked_.erase(pod_key);
}

// Compares the admitted members after the pass with those before it: new
// ones are admissions to carry out, vanished ones (pod still there) are
// admissions taken back.
std::vector<QueueDecision> AdmissionLoop::Diff() {
  std::map<std::string, MemberState> current;
  std::vector<QueueDecision> out = std::exchange(stale_revokes_, {});
  for (const auto& [key, w] : engine_->workloads()) {
    for (const auto& [pod_key, placement] : w.placements) {
      auto pod = w.pods.find(pod_key);
      if (pod == w.pods.end()) continue;
      MemberState& m = current[pod_key];
      m = {.node = placement.node,
           .uid = PodUid(pod->second),
           .bound = w.bound.contains(pod_key) || !pod->second.node_name.empty(),
           .gated = gated_.contains(pod_key)};
      auto before = members_.find(pod_key);
      if (before != members_.end() && before->second.node == m.node) continue;
      out.push_back(AdmitMember{
          .pod = {pod->second.meta.namespace_name, pod->second.meta.name,
                  m.uid},
          .node = m.node,
          .workload = key,
          .gated = m.gated,
          .reason = AdmittedSentence(w, m.node),
          .update = m.gated ? MergedPodSetUpdate(w.checks) : PodSetUpdate{}});
    }
  }
  TakenBack(current, out);
  members_ = std::move(current);
  return out;
}

// Members admitted before the pass whose admission it took back (their pod
// still there), first in `out`: a revocation lands before the admissions
// that may reuse its devices.
void AdmissionLoop::TakenBack(const std::map<std::string, MemberState>& current,
                              std::vector<QueueDecision>& out) {
  for (const auto& [pod_key, before] : members_) {
    auto now_at = current.find(pod_key);
    if (now_at != current.end() && now_at->second.node == before.node) continue;
    const Workload* w = engine_->FindWorkloadOfPod(pod_key);
    if (w == nullptr) continue;  // the pod is gone: nothing to take back
    // Refused: the admission never landed, so there is nothing to undo.
    if (refused_.erase(pod_key) > 0) continue;
    const Pod& pod = w->pods.at(pod_key);
    out.insert(out.begin(), RevokeMember{.pod = {pod.meta.namespace_name,
                                                 pod.meta.name, before.uid},
                                         .node = before.node,
                                         .workload = w->key,
                                         .evict = before.bound || before.gated,
                                         .bound = before.bound,
                                         .reason = w->reason});
  }
}

std::shared_ptr<const AdmissionLoop::Published> AdmissionLoop::Publish(
    const PendingPositionMap& positions) const {
  auto published = std::make_shared<Published>();
  published->guard = VictimGuard::Of(*engine_);
  for (const auto& [key, w] : engine_->workloads()) {
    if (w.state == Workload::State::kFinished) continue;
    for (const auto& [pod, unused] : w.pods) {
      published->workload_of_pod[pod] = key;
    }
    const bool partly = PartlyPlacedGang(w);
    for (const auto& [pod, placement] : w.placements) {
      if (partly && !w.bound.contains(pod)) continue;
      published->node_of_pod[pod] = placement.node;
    }
    auto position = positions.find(&w);
    std::string reason = position == positions.end()
                             ? engine_->PendingReason(w)
                             : engine_->PendingReason(w, position->second.first,
                                                      position->second.second);
    if (partly) {
      reason = CodedReason(
          ReasonCode::kGangIncomplete,
          absl::StrCat("gang ", key, " is admitted with ", w.placements.size(),
                       " of minMember ", w.min_member,
                       " members placed; none binds until all are"));
    } else if (w.admitted()) {
      reason = absl::StrCat("workload ", key,
                            " is admitted; this member waits for capacity",
                            reason.empty() ? "" : ": ", reason);
    } else if (!reason.empty()) {
      reason = CodedReason(engine_->PendingCode(w), reason);
    }
    published->reason_of_workload[key] =
        reason.empty() ? "waiting for admission" : std::move(reason);
  }
  return published;
}

bool AdmissionLoop::Manages(const Pod& pod) const {
  return pod.admission.queue_name.has_value() ||
         pod.admission.group_kind != PodAdmissionState::GroupKind::kNone;
}

// Called under the service's exclusive lock, on a bind thread: the engine
// hears it in the next pass (the service's model holds the pod bound
// already, and the replica follows at that pass's sync).
void AdmissionLoop::Bound(const Pod& pod, int64_t now_ms) {
  (void)now_ms;
  Push(BoundMember{pod.Key()});
}

}  // namespace gpusched
