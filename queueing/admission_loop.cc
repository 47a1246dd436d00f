#include "queueing/admission_loop.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/quota_tree.h"

namespace gpusched {
namespace {

constexpr char kNotSeenYet[] =
    "waiting for admission: gpusched's queueing core has not seen this pod "
    "yet";

bool HasOurGate(const Pod& pod) {
  return std::find(pod.scheduling_gates.begin(), pod.scheduling_gates.end(),
                   kAdmissionGate) != pod.scheduling_gates.end();
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
      published_(std::make_shared<Published>()) {}

AdmissionLoop::~AdmissionLoop() { Stop(); }

void AdmissionLoop::Start(ExtenderService& service, DecisionSink* sink) {
  service_ = &service;
  sink_ = sink;
  service.Write([&](ClusterModel& model) {
    // Create validated the policy, so this cannot fail.
    engine_ = *QueueingEngine::Create(std::move(policy_), &model);
  });
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void AdmissionLoop::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  inbox_cv_.notify_all();
  thread_.join();
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

void AdmissionLoop::PodUpserted(Pod pod) { Push(std::move(pod)); }
void AdmissionLoop::PodDeleted(Pod pod) { Push(Deleted{std::move(pod)}); }
void AdmissionLoop::PodsListed(std::vector<Pod> pods) {
  Push(Listed{std::move(pods)});
}
void AdmissionLoop::PodGroupUpserted(PodGroup group) {
  Push(std::move(group));
}
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

void AdmissionLoop::WaitIdle() {
  std::unique_lock lock(inbox_mu_);
  const uint64_t pushed = inputs_pushed_;
  const uint64_t passes = passes_;
  pass_requested_ = true;
  inbox_cv_.notify_one();
  idle_cv_.wait(lock, [&] {
    return (inputs_applied_ >= pushed && passes_ > passes) ||
           !thread_.joinable();
  });
}

uint64_t AdmissionLoop::passes() const {
  std::lock_guard lock(inbox_mu_);
  return passes_;
}

// Sleeps until an input arrives, a pass is asked for, the engine's next
// timer is due, or max_idle_ms passed; then runs one pass over everything
// that arrived meanwhile (a burst of pod events costs one pass).
void AdmissionLoop::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    const int64_t now = Now();
    std::optional<int64_t> wakeup = service_->Read(
        [&](const ClusterModel&) { return engine_->NextWakeup(now); });
    int64_t sleep_ms = options_.max_idle_ms;
    if (wakeup) sleep_ms = std::clamp<int64_t>(*wakeup - now, 0, sleep_ms);
    std::vector<Input> inputs;
    {
      std::unique_lock lock(inbox_mu_);
      inbox_cv_.wait_for(lock, stop, std::chrono::milliseconds(sleep_ms),
                         [&] { return !inbox_.empty() || pass_requested_; });
      if (stop.stop_requested()) break;
      inputs = std::exchange(inbox_, {});
      pass_requested_ = false;
    }
    Pass(std::move(inputs));
  }
  std::lock_guard lock(inbox_mu_);
  idle_cv_.notify_all();
}

void AdmissionLoop::Pass(std::vector<Input> inputs) {
  std::vector<QueueDecision> decisions;
  std::shared_ptr<const Published> published;
  service_->Write([&](ClusterModel&) {
    const int64_t now = Now();
    for (Input& input : inputs) Apply(input, now);
    engine_->Schedule(now);
    decisions = Diff(now);
    (void)engine_->TakeEvents();
    engine_->ForgetFinished();
    published = Publish();
  });
  {
    std::lock_guard lock(published_mu_);
    published_ = std::move(published);
  }
  if (sink_ != nullptr && !decisions.empty()) {
    sink_->Publish(std::move(decisions));
  }
  // Last: WaitIdle promises the pass's decisions were handed on.
  {
    std::lock_guard lock(inbox_mu_);
    inputs_applied_ += inputs.size();
    ++passes_;
  }
  idle_cv_.notify_all();
}

void AdmissionLoop::Apply(Input& input, int64_t now) {
  if (Pod* pod = std::get_if<Pod>(&input)) {
    ApplyPod(*pod, now);
  } else if (Deleted* gone = std::get_if<Deleted>(&input)) {
    gated_.erase(gone->pod.Key());
    if (Manages(gone->pod)) engine_->Delete(gone->pod.Key(), now);
  } else if (Listed* listed = std::get_if<Listed>(&input)) {
    ApplyList(listed->pods, now);
  } else if (PodGroup* group = std::get_if<PodGroup>(&input)) {
    engine_->AddPodGroup(*group, now);
  } else if (NodeGone* node = std::get_if<NodeGone>(&input)) {
    engine_->NodeDown(node->node, now);
  } else if (Policy* policy = std::get_if<Policy>(&input)) {
    // Validated by the caller; a rejected one keeps the old policy.
    (void)engine_->UpdatePolicy(std::move(*policy));
  }
  // A deleted PodGroup leaves its pods' workload as it is: the pods go with
  // it (owner references) and each deletion arrives as its own input. A node
  // that returns is back in the model through the node watch.
}

// A pod update: terminal pods give back their quota and devices at once;
// bound ones confirm their admission; pending ones (re)enter their
// workload, which keeps its admission when it has one.
void AdmissionLoop::ApplyPod(const Pod& pod, int64_t now) {
  if (!Manages(pod)) return;
  const std::string key = pod.Key();
  if (IsTerminal(pod)) {
    gated_.erase(key);
    if (engine_->FindWorkloadOfPod(key) != nullptr) engine_->Finish(key, now);
    return;
  }
  if (!pod.node_name.empty()) {
    engine_->MarkBound(key);
    if (engine_->FindWorkloadOfPod(key) != nullptr) return;
  }
  if (HasOurGate(pod)) gated_[key] = true;
  engine_->AddPod(pod, now);
}

void AdmissionLoop::ApplyList(const std::vector<Pod>& pods, int64_t now) {
  std::set<std::string> listed;
  for (const Pod& pod : pods) {
    listed.insert(pod.Key());
    ApplyPod(pod, now);
  }
  std::vector<std::string> gone;
  for (const auto& [key, w] : engine_->workloads()) {
    for (const auto& [pod, unused] : w.pods) {
      if (!listed.contains(pod)) gone.push_back(pod);
    }
  }
  for (const std::string& pod : gone) {
    gated_.erase(pod);
    engine_->Delete(pod, now);
  }
}

// Compares the admitted members after the pass with those before it: new
// ones are admissions to carry out, vanished ones (pod still there) are
// admissions taken back.
std::vector<QueueDecision> AdmissionLoop::Diff(int64_t now) {
  std::map<std::string, MemberState> current;
  std::vector<QueueDecision> out;
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
          .gated = m.gated});
    }
  }
  for (const auto& [pod_key, before] : members_) {
    auto now_at = current.find(pod_key);
    if (now_at != current.end() && now_at->second.node == before.node) continue;
    const Workload* w = engine_->FindWorkloadOfPod(pod_key);
    if (w == nullptr) continue;  // the pod is gone: nothing to take back
    const Pod& pod = w->pods.at(pod_key);
    out.insert(out.begin(),
               RevokeMember{.pod = {pod.meta.namespace_name, pod.meta.name,
                                    before.uid},
                            .node = before.node,
                            .workload = w->key,
                            .evict = before.bound || before.gated,
                            .reason = w->reason});
  }
  members_ = std::move(current);
  (void)now;
  return out;
}

std::shared_ptr<const AdmissionLoop::Published> AdmissionLoop::Publish()
    const {
  auto published = std::make_shared<Published>();
  auto positions = engine_->PendingPositions();
  for (const auto& [key, w] : engine_->workloads()) {
    if (w.state == Workload::State::kFinished) continue;
    for (const auto& [pod, unused] : w.pods) {
      published->workload_of_pod[pod] = key;
    }
    for (const auto& [pod, placement] : w.placements) {
      published->node_of_pod[pod] = placement.node;
    }
    auto position = positions.find(&w);
    std::string reason =
        position == positions.end()
            ? engine_->PendingReason(w)
            : engine_->PendingReason(w, position->second.first,
                                     position->second.second);
    if (w.admitted()) {
      reason = absl::StrCat("workload ", key,
                            " is admitted; this member waits for capacity",
                            reason.empty() ? "" : ": ", reason);
    }
    published->reason_of_workload[key] =
        reason.empty() ? "waiting for admission" : std::move(reason);
  }
  return published;
}

bool AdmissionLoop::Manages(const Pod& pod) const {
  return pod.meta.labels.contains(kQueueNameLabel) ||
         WorkloadOf(pod).kind != WorkloadRef::Kind::kSinglePod;
}

GateVerdict AdmissionLoop::Check(const Pod& pod) {
  std::shared_ptr<const Published> published;
  {
    std::lock_guard lock(published_mu_);
    published = published_;
  }
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

// Called with the model under the exclusive lock, like every engine call.
void AdmissionLoop::Bound(const Pod& pod, int64_t now_ms) {
  (void)now_ms;
  if (engine_ != nullptr) engine_->MarkBound(pod.Key());
}

}  // namespace gpusched
