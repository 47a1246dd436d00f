#include "queueing/admission_fair_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/pending_classes.h"
#include "scheduler/resource_list.h"

namespace gpusched {
namespace {

// amount * factor + into, per resource.
void AddScaled(const ConsumedResources& amounts, double factor,
               ConsumedResources& into) {
  for (const auto& [resource, amount] : amounts) {
    into[resource] += amount * factor;
  }
}

}  // namespace

double AfsAlpha(int64_t elapsed_ms, int64_t half_life_ms) {
  if (half_life_ms == 0) return 0.0;
  return 1.0 - std::pow(0.5, static_cast<double>(elapsed_ms) /
                                 static_cast<double>(half_life_ms));
}

ConsumedResources FlattenToKueueUnits(const FrAmounts& amounts) {
  ConsumedResources out;
  for (const auto& [fr, amount] : amounts) {
    // ResourceList keeps cpu in milli-CPU; Kueue's quantities are cores.
    const double scale = fr.resource == kCpu ? 1e-3 : 1.0;
    out[fr.resource] += static_cast<double>(amount) * scale;
  }
  return out;
}

std::string LocalQueueKeyOf(const Workload& w) {
  return absl::StrCat(w.namespace_name, "/", w.local_queue);
}

void AdmissionFairSharing::Configure(const Policy& policy) {
  config_ = policy.config.admission_fair_sharing;
  usage_based_.clear();
  weight_milli_.clear();
  if (!config_) {
    usages_.clear();
    pending_.clear();
    return;
  }
  for (const ClusterQueue& cq : policy.cluster_queues) {
    if (cq.admission_mode == AdmissionMode::kUsageBased) {
      usage_based_.insert(cq.name);
    }
  }
  for (const LocalQueue& lq : policy.local_queues) {
    weight_milli_[absl::StrCat(lq.namespace_name, "/", lq.name)] =
        lq.fair_weight_milli;
  }
  for (const auto& [local_queue, consumed] : policy.afs_usage_at_start) {
    Restore(local_queue, consumed);
  }
  // A LocalQueue deleted from the policy loses its history (Kueue deletes
  // the ledger entry with the object).
  const auto dropped = [&](const auto& entry) {
    return !weight_milli_.contains(entry.first);
  };
  std::erase_if(usages_, dropped);
  std::erase_if(pending_, dropped);
}

void AdmissionFairSharing::Restore(const std::string& local_queue,
                                   ConsumedResources consumed) {
  if (usages_.contains(local_queue)) return;
  restored_[local_queue] = std::move(consumed);
}

AfsQueueUsage& AdmissionFairSharing::EntryAt(const std::string& local_queue,
                                             int64_t now) {
  auto [it, inserted] = usages_.try_emplace(local_queue);
  if (inserted) {
    it->second.last_update_ms = now;
    if (auto seed = restored_.find(local_queue); seed != restored_.end()) {
      it->second.consumed = std::move(seed->second);
      restored_.erase(seed);
    }
  }
  return it->second;
}

// consumed * (1 - alpha) + admitted * alpha over the time since the last
// update; a clock that went back counts as no time.
void AdmissionFairSharing::Decay(AfsQueueUsage& entry,
                                 const ConsumedResources& admitted,
                                 int64_t now) const {
  const int64_t elapsed = std::max<int64_t>(0, now - entry.last_update_ms);
  const double alpha = AfsAlpha(elapsed, config_->usage_half_life_ms);
  ConsumedResources next;
  AddScaled(entry.consumed, 1.0 - alpha, next);
  AddScaled(admitted, alpha, next);
  entry.consumed = std::move(next);
  entry.last_update_ms = std::max(entry.last_update_ms, now);
}

// Kueue samples each LocalQueue every interval after its last update. The
// admitted quota changes only through the engine's calls, so between two
// passes it stood as the last pass left it: every sample Kueue would have
// taken since folds into one decay to the last of them (two decays with the
// same admitted amounts are one over their sum).
void AdmissionFairSharing::CatchUp(int64_t now) {
  if (!config_) return;
  static const ConsumedResources kNone;
  const int64_t interval = config_->usage_sampling_interval_ms;
  for (const auto& [local_queue, weight] : weight_milli_) {
    const bool is_new = !usages_.contains(local_queue);
    AfsQueueUsage& entry = EntryAt(local_queue, now);
    if (is_new || now - entry.last_update_ms < interval) continue;
    const int64_t sampled_at =
        entry.last_update_ms +
        (now - entry.last_update_ms) / interval * interval;
    if (config_->usage_half_life_ms == 0) {
      entry = {.consumed = {}, .last_update_ms = sampled_at};
      continue;
    }
    auto it = admitted_.find(local_queue);
    Decay(entry, it == admitted_.end() ? kNone : it->second, sampled_at);
  }
}

void AdmissionFairSharing::Settle(const std::string& local_queue,
                                  const std::string& workload,
                                  const ConsumedResources& admitted,
                                  const ConsumedResources& charged,
                                  int64_t now) {
  if (!config_) return;
  AfsQueueUsage& entry = EntryAt(local_queue, now);
  Decay(entry, admitted, now);
  auto queue = pending_.find(local_queue);
  if (queue != pending_.end()) {
    if (auto pushed = queue->second.find(workload);
        pushed != queue->second.end()) {
      // Kueue folds exactly the amount it pushed at the reservation.
      AddScaled(pushed->second, 1.0, entry.consumed);
      queue->second.erase(pushed);
      return;
    }
  }
  AddScaled(charged, PenaltyFactor(), entry.consumed);
}

void AdmissionFairSharing::PushPenalty(const std::string& local_queue,
                                       const std::string& workload,
                                       const ConsumedResources& charged) {
  if (!config_) return;
  ConsumedResources penalty;
  AddScaled(charged, PenaltyFactor(), penalty);
  pending_[local_queue][workload] = std::move(penalty);
}

void AdmissionFairSharing::DropPenalty(const std::string& workload) {
  for (auto& [local_queue, by_workload] : pending_) by_workload.erase(workload);
}

// Kueue's CalculateEntryPenalty: alpha(usageSamplingInterval) of the quota.
double AdmissionFairSharing::PenaltyFactor() const {
  return AfsAlpha(config_->usage_sampling_interval_ms,
                  config_->usage_half_life_ms);
}

double AdmissionFairSharing::Usage(const std::string& local_queue) const {
  double usage = 0;
  const auto add_weighted = [&](const ConsumedResources& amounts) {
    for (const auto& [resource, amount] : amounts) {
      auto weight = config_->resource_weights.find(resource);
      usage +=
          (weight == config_->resource_weights.end() ? 1.0 : weight->second) *
          amount;
    }
  };
  if (auto it = usages_.find(local_queue); it != usages_.end()) {
    add_weighted(it->second.consumed);
  }
  // Kueue's CalculateUsage counts the penalties not yet folded in.
  if (auto it = pending_.find(local_queue); it != pending_.end()) {
    for (const auto& [workload, penalty] : it->second) add_weighted(penalty);
  }
  // A LocalQueue missing from the policy weighs 1 (Kueue's
  // ResolveLQWeight); a weight of 0 puts its queue last (v0.19.2; v0.17.0
  // divided 0 by 0 for an idle queue, and NaN sorted it first).
  auto weight = weight_milli_.find(local_queue);
  const int64_t milli =
      weight == weight_milli_.end() ? kDefaultFairWeightMilli : weight->second;
  if (milli <= 0) return std::numeric_limits<double>::infinity();
  return usage / (static_cast<double>(milli) / 1000.0);
}

bool AdmissionFairSharing::Before(const Workload* a, const Workload* b) const {
  if (a->cluster_queue == b->cluster_queue && Orders(a->cluster_queue) &&
      (a->namespace_name != b->namespace_name ||
       a->local_queue != b->local_queue)) {
    const double usage_a = Usage(LocalQueueKeyOf(*a));
    const double usage_b = Usage(LocalQueueKeyOf(*b));
    if (usage_a != usage_b) return usage_a < usage_b;
  }
  return QueueOrder(a, b);
}

}  // namespace gpusched
