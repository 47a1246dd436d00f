#include "queueing/runtime_log.h"

#include <algorithm>

#include "queueing/engine.h"

namespace gpusched {

void RuntimeLog::Record(const std::string& cluster_queue,
                        const std::string& shape, int64_t run_ms,
                        int64_t ended_ms) {
  if (run_ms < 0) return;
  std::lock_guard lock(mu_);
  Entry& entry = entries_[{cluster_queue, shape}];
  entry.cluster_queue = cluster_queue;
  entry.shape = shape;
  entry.runs_ms.push_back(run_ms);
  if (entry.runs_ms.size() > per_key_) {
    entry.runs_ms.erase(entry.runs_ms.begin(),
                        entry.runs_ms.end() - static_cast<ptrdiff_t>(per_key_));
  }
  entry.last_ms = std::max(entry.last_ms, ended_ms);
  if (entries_.size() > max_keys_) DropLeastRecent();
  ++version_;
}

void RuntimeLog::Observe(const QueueingEngine& engine,
                         const std::vector<EngineEvent>& events) {
  using Type = EngineEvent::Type;
  for (const EngineEvent& event : events) {
    auto it = engine.workloads().find(event.workload);
    if (event.type == Type::kAdmitted || event.type == Type::kAdopted) {
      if (it == engine.workloads().end()) continue;
      const Workload& w = it->second;
      if (w.cluster_queue.empty() || w.pods.empty()) continue;
      std::vector<const Pod*> members;
      for (const auto& [key, pod] : w.pods) members.push_back(&pod);
      running_[w.key] = {w.cluster_queue, WorkloadShape(members),
                         w.RunStartMs() >= 0 ? w.RunStartMs() : event.at_ms};
    } else if (event.type == Type::kFinished) {
      auto run = running_.find(event.workload);
      if (run == running_.end()) continue;
      Record(run->second.cluster_queue, run->second.shape,
             event.at_ms - run->second.admitted_ms, event.at_ms);
      running_.erase(run);
    } else {
      running_.erase(event.workload);
    }
  }
  // Deleted workloads leave without an event.
  std::erase_if(running_, [&](const auto& entry) {
    auto w = engine.workloads().find(entry.first);
    return w == engine.workloads().end() ||
           (!w->second.admitted() &&
            w->second.state != Workload::State::kFinished);
  });
}

std::optional<int64_t> RuntimeLog::TypicalRuntimeMs(
    const std::string& cluster_queue, const std::string& shape) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find({cluster_queue, shape});
  if (it == entries_.end() || it->second.runs_ms.empty()) return std::nullopt;
  std::vector<int64_t> runs = it->second.runs_ms;
  auto middle = runs.begin() + static_cast<ptrdiff_t>(runs.size() / 2);
  std::nth_element(runs.begin(), middle, runs.end());
  return *middle;
}

std::vector<RuntimeLog::Entry> RuntimeLog::Entries() const {
  std::lock_guard lock(mu_);
  std::vector<Entry> out;
  out.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) out.push_back(entry);
  return out;
}

void RuntimeLog::Load(std::vector<Entry> entries) {
  std::lock_guard lock(mu_);
  entries_.clear();
  for (Entry& entry : entries) {
    if (entry.runs_ms.size() > per_key_) {
      entry.runs_ms.erase(
          entry.runs_ms.begin(),
          entry.runs_ms.end() - static_cast<ptrdiff_t>(per_key_));
    }
    Key key{entry.cluster_queue, entry.shape};
    entries_[std::move(key)] = std::move(entry);
  }
  while (entries_.size() > max_keys_) DropLeastRecent();
  ++version_;
}

uint64_t RuntimeLog::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

void RuntimeLog::DropLeastRecent() {
  auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                 [](const auto& a, const auto& b) {
                                   return a.second.last_ms < b.second.last_ms;
                                 });
  if (oldest != entries_.end()) entries_.erase(oldest);
}

}  // namespace gpusched
