#include "queueing/start_forecast.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/engine.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

constexpr size_t kNamedBlockers = 3;

// One member's estimate: its annotation, else its deadline.
std::optional<int64_t> MemberEstimate(const Pod& pod) {
  if (pod.runtime.expected_ms) return pod.runtime.expected_ms;
  return pod.runtime.deadline_ms;
}

std::string UnknownWhy(const std::vector<const Pod*>& members) {
  for (const Pod* pod : members) {
    if (!pod->runtime.rejected.empty()) {
      return absl::StrCat("pod ", pod->Key(), ": ", pod->runtime.rejected);
    }
  }
  return "no member has gpusched.io/expected-runtime or "
         "activeDeadlineSeconds, and no workload of its queue and shape has "
         "finished yet";
}

}  // namespace

std::string_view RuntimeSourceName(RuntimeEstimate::Source source) {
  switch (source) {
    case RuntimeEstimate::Source::kExpected:
      return "expected-runtime";
    case RuntimeEstimate::Source::kDeadline:
      return "activeDeadlineSeconds";
    case RuntimeEstimate::Source::kHistory:
      return "history";
    case RuntimeEstimate::Source::kUnknown:
      break;
  }
  return "unknown";
}

std::string WorkloadShape(const std::vector<const Pod*>& members) {
  std::string shape = absl::StrCat(members.size(), "x");
  if (members.empty()) return shape;
  const ResourceList requests = EffectiveRequests(*members.front());
  for (const auto& [name, amount] : requests.entries()) {
    if (name == "nvidia.com/gpu" || name.rfind("nvidia.com/mig-", 0) == 0) {
      absl::StrAppend(&shape, " ", name, "=", amount);
    }
  }
  return shape;
}

RuntimeEstimate EstimateRuntime(const std::vector<const Pod*>& members,
                                const std::string& cluster_queue,
                                const RuntimeHistory* history) {
  RuntimeEstimate out;
  bool every_member_known = !members.empty();
  bool every_member_bounded = !members.empty();
  bool every_member_expected = !members.empty();
  int64_t longest = 0;
  int64_t longest_bound = 0;
  for (const Pod* pod : members) {
    const std::optional<int64_t> estimate = MemberEstimate(*pod);
    every_member_known &= estimate.has_value();
    every_member_expected &= pod->runtime.expected_ms.has_value();
    every_member_bounded &= pod->runtime.deadline_ms.has_value();
    longest = std::max(longest, estimate.value_or(0));
    longest_bound =
        std::max(longest_bound, pod->runtime.deadline_ms.value_or(0));
  }
  if (every_member_bounded) out.upper_bound_ms = longest_bound;
  if (every_member_known) {
    out.source = every_member_expected ? RuntimeEstimate::Source::kExpected
                                       : RuntimeEstimate::Source::kDeadline;
    out.expected_ms = longest;
    return out;
  }
  if (history != nullptr) {
    if (std::optional<int64_t> typical =
            history->TypicalRuntimeMs(cluster_queue, WorkloadShape(members))) {
      out.source = RuntimeEstimate::Source::kHistory;
      out.expected_ms = *typical;
      return out;
    }
  }
  out.why_unknown = UnknownWhy(members);
  return out;
}

namespace {

std::vector<const Pod*> MembersOf(const Workload& w) {
  std::vector<const Pod*> out;
  for (const auto& [key, pod] : w.pods) out.push_back(&pod);
  return out;
}

void AddAdmitted(const Workload& w, ForecastSnapshot& out) {
  for (const auto& [key, placement] : w.placements) {
    auto pod = w.pods.find(key);
    if (pod == w.pods.end()) continue;
    out.admitted.push_back({.pod = pod->second,
                            .node = placement.node,
                            .bound = w.bound.contains(key)});
  }
  // Members beyond those placed (a running gang's extras) join it again.
  for (const auto& [key, pod] : w.pods) {
    if (!w.placements.contains(key)) out.pending.push_back(pod);
  }
  out.admitted_at_ms[w.key] = w.RunStartMs();
}

}  // namespace

ForecastSnapshot TakeForecastSnapshot(const QueueingEngine& engine,
                                      const ClusterModel& model, int64_t now,
                                      const RuntimeHistory* history) {
  auto copy = std::make_shared<ClusterModel>();
  copy->SyncFrom(model);
  ForecastSnapshot out{
      .now_ms = now, .policy = engine.policy(), .model = std::move(copy)};
  // The copy orders by Admission Fair Sharing's usage as it stands.
  out.policy.afs_usage_at_start.clear();
  for (const auto& [local_queue, usage] : engine.AfsUsages()) {
    out.policy.afs_usage_at_start[local_queue] = usage.consumed;
  }
  for (const auto& [key, w] : engine.workloads()) {
    if (w.state == Workload::State::kFinished || w.pods.empty()) continue;
    out.runtimes[key] = EstimateRuntime(MembersOf(w), w.cluster_queue, history);
    if (w.declared_by_podgroup) {
      if (const PodGroup* group = engine.FindPodGroup(key)) {
        out.groups.push_back(*group);
      }
    }
    if (w.admitted()) {
      AddAdmitted(w, out);
    } else {
      for (const auto& [pod_key, pod] : w.pods) out.pending.push_back(pod);
      out.created_ms[key] = w.created_ms;
    }
  }
  return out;
}

void LoadSnapshot(const ForecastSnapshot& snapshot, QueueingEngine& engine) {
  const int64_t now = snapshot.now_ms;
  for (const PodGroup& group : snapshot.groups) engine.AddPodGroup(group, now);
  // The copied model holds every admitted member's devices already, bound
  // or assumed: adopted as bound, the engine takes them as they are.
  for (const auto& member : snapshot.admitted) {
    engine.Adopt(member.pod, member.node, /*bound=*/true, now);
  }
  for (const Pod& pod : snapshot.pending) {
    auto created = snapshot.created_ms.find(WorkloadOf(pod).key);
    engine.AddPod(pod, created == snapshot.created_ms.end()
                           ? now
                           : std::min(now, created->second));
  }
}

std::optional<PreemptionPreview> PreviewPreemptionOnCopy(
    const QueueingEngine& engine, const ClusterModel& model,
    const std::string& key, int64_t now) {
  auto live = engine.workloads().find(key);
  if (live == engine.workloads().end() ||
      live->second.state != Workload::State::kPending) {
    return std::nullopt;
  }
  const ForecastSnapshot snapshot =
      TakeForecastSnapshot(engine, model, now, nullptr);
  ClusterModel copy;
  copy.SyncFrom(*snapshot.model);
  absl::StatusOr<std::unique_ptr<QueueingEngine>> dry =
      QueueingEngine::Create(snapshot.policy, &copy);
  if (!dry.ok()) return std::nullopt;
  LoadSnapshot(snapshot, **dry);
  return (*dry)->PreviewPreemption(key, now);
}

namespace {

// One run of the engine forward: when each pending workload is first
// admitted, with every admitted workload ending after its runtime (the
// expected one, or the upper bound).
class ForwardRun {
 public:
  ForwardRun(const ForecastSnapshot& snapshot, bool upper_bounds,
             const ForecastOptions& options,
             std::chrono::steady_clock::time_point deadline)
      : snapshot_(snapshot),
        upper_bounds_(upper_bounds),
        options_(options),
        deadline_(deadline) {
    model_.SyncFrom(*snapshot.model);
  }

  // Starts by workload key; steps counts the passes run.
  std::map<std::string, int64_t> Run(int& steps) {
    auto engine = QueueingEngine::Create(snapshot_.policy, &model_);
    if (!engine.ok()) return {};
    engine_ = *std::move(engine);
    Load();
    int64_t now = snapshot_.now_ms;
    const int64_t until = now + options_.horizon_ms;
    const size_t waiting = snapshot_.created_ms.size();
    for (; steps < options_.max_steps; ++steps) {
      if (std::chrono::steady_clock::now() > deadline_) {
        cut_short_ = true;
        break;
      }
      engine_->Schedule(now);
      NoteStarts(now);
      // Every pending workload has its start: what runs after tells
      // nothing more (and each finish would cost a pass).
      if (starts_.size() >= waiting) break;
      std::optional<int64_t> next = NextEvent(now);
      if (!next || *next > until) break;
      now = Batched(*next);
      FinishDue(now);
    }
    return starts_;
  }

  // The run stopped at its wall budget, not at its end.
  bool cut_short() const { return cut_short_; }

  // Why `key` still waits when the run ends ("" if it is not known).
  std::string LastReason(const std::string& key) const {
    auto it = engine_->workloads().find(key);
    return it == engine_->workloads().end() ? "" : it->second.reason;
  }

  // Admitted workloads at the end whose runtime is not known: what the
  // ones that never started may be waiting for.
  std::vector<std::string> UnendingAdmitted() const {
    std::vector<std::string> out;
    for (const auto& [key, w] : engine_->workloads()) {
      if (w.admitted() && !RuntimeOf(key)) out.push_back(key);
    }
    return out;
  }

 private:
  void Load() {
    const int64_t now = snapshot_.now_ms;
    LoadSnapshot(snapshot_, *engine_);
    for (const auto& [key, admitted_at] : snapshot_.admitted_at_ms) {
      if (std::optional<int64_t> runtime = RuntimeOf(key)) {
        finish_at_.insert({std::max(now, admitted_at + *runtime), key});
      }
    }
  }

  std::optional<int64_t> RuntimeOf(const std::string& key) const {
    auto it = snapshot_.runtimes.find(key);
    if (it == snapshot_.runtimes.end()) return std::nullopt;
    if (upper_bounds_) return it->second.upper_bound_ms;
    if (it->second.source == RuntimeEstimate::Source::kUnknown) {
      return std::nullopt;
    }
    return it->second.expected_ms;
  }

  void NoteStarts(int64_t now) {
    for (const auto& [key, w] : engine_->workloads()) {
      if (!w.admitted() || snapshot_.admitted_at_ms.contains(key) ||
          starts_.contains(key)) {
        continue;
      }
      starts_[key] = now;
      // Nothing binds in the forecast: what is admitted is taken as bound
      // at once, so no bind timeout takes it back.
      for (const auto& [pod, placement] : w.placements) {
        engine_->MarkBound(pod);
      }
      if (std::optional<int64_t> runtime = RuntimeOf(key)) {
        finish_at_.insert({now + *runtime, key});
      }
    }
  }

  std::optional<int64_t> NextEvent(int64_t now) const {
    std::optional<int64_t> next = engine_->NextWakeup(now);
    if (!finish_at_.empty()) {
      const int64_t finish = std::max(now + 1, finish_at_.begin()->first);
      next = next ? std::min(*next, finish) : finish;
    }
    return next;
  }

  // The time of the pass that takes the event at `next`: the last finish
  // within its window (ForecastOptions::min_step_ms).
  int64_t Batched(int64_t next) const {
    const int64_t ahead = next - snapshot_.now_ms;
    const int64_t end =
        next + std::max(options_.min_step_ms,
                        static_cast<int64_t>(options_.step_fraction * ahead));
    int64_t at = next;
    for (auto it = finish_at_.begin();
         it != finish_at_.end() && it->first <= end; ++it) {
      at = std::max(at, it->first);
    }
    return at;
  }

  void FinishDue(int64_t now) {
    while (!finish_at_.empty() && finish_at_.begin()->first <= now) {
      engine_->Finish(finish_at_.begin()->second, now);
      finish_at_.erase(finish_at_.begin());
    }
  }

  const ForecastSnapshot& snapshot_;
  const bool upper_bounds_;
  const ForecastOptions& options_;
  const std::chrono::steady_clock::time_point deadline_;
  bool cut_short_ = false;
  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
  std::set<std::pair<int64_t, std::string>> finish_at_;
  std::map<std::string, int64_t> starts_;
};

std::string NeverStartedWhy(const std::vector<std::string>& unending,
                            const ForecastOptions& options) {
  if (unending.empty()) {
    return absl::StrCat("not admitted within the forecast's horizon of ",
                        options.horizon_ms / 3'600'000, " h");
  }
  std::vector<std::string> named(
      unending.begin(),
      unending.begin() + std::min(unending.size(), kNamedBlockers));
  return absl::StrCat(
      "it waits on workloads with no known runtime (",
      absl::StrJoin(named, ", "),
      unending.size() > named.size()
          ? absl::StrCat(" and ", unending.size() - named.size(), " more")
          : "",
      "): give them gpusched.io/expected-runtime or activeDeadlineSeconds");
}

}  // namespace

StartForecast RunForecast(const ForecastSnapshot& snapshot,
                          const ForecastOptions& options) {
  StartForecast out{.made_at_ms = snapshot.now_ms};
  const auto deadline =
      options.wall_budget
          ? std::chrono::steady_clock::now() + *options.wall_budget
          : std::chrono::steady_clock::time_point::max();
  ForwardRun expected(snapshot, /*upper_bounds=*/false, options, deadline);
  const std::map<std::string, int64_t> starts = expected.Run(out.steps);
  ForwardRun upper(snapshot, /*upper_bounds=*/true, options, deadline);
  const std::map<std::string, int64_t> latest = upper.Run(out.steps);
  // A run cut short by the pass budget says so: more passes might have
  // found the start.
  std::string never = NeverStartedWhy(expected.UnendingAdmitted(), options);
  if (expected.cut_short()) {
    never = absl::StrCat("not admitted within the forecast's time budget of ",
                         options.wall_budget->count(), " ms (", out.steps,
                         " passes)");
  } else if (out.steps >= options.max_steps) {
    never =
        absl::StrCat("not admitted within the forecast's ", options.max_steps,
                     " passes (where it stops, to bound its cost)");
  }
  for (const auto& [key, estimate] : snapshot.runtimes) {
    if (snapshot.admitted_at_ms.contains(key)) continue;
    ForecastStart& start = out.starts[key];
    if (auto it = starts.find(key); it != starts.end()) {
      start.expected_start_ms = it->second;
    } else if (const std::string last = expected.LastReason(key);
               !last.empty() && never.starts_with("not admitted")) {
      // Nothing it waits on is unbounded: the queue itself keeps it out
      // (a quota it can never fit, a node shape no node has).
      start.why_unknown = absl::StrCat(never, "; it still waits then: ", last);
    } else {
      start.why_unknown = never;
    }
    if (auto it = latest.find(key); it != latest.end()) {
      start.latest_start_ms = it->second;
    }
  }
  return out;
}

}  // namespace gpusched
