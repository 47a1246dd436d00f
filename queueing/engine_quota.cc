// Admission's quota check: what must be free for a workload on one flavor,
// and why it waits when that is not free (for a while, or for good).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "queueing/engine_internal.h"

namespace gpusched {
namespace {

// More than the queue could take with every queue of its cohort idle can
// never fit; less waits for quota to be given back.
WaitReason QuotaShortfall(const QuotaTree& quota, const std::string& cq,
                          const FlavorResource& fr, int64_t need) {
  auto format = [&](int64_t amount) {
    return ResourceList::FormatAmount(fr.resource, amount);
  };
  const int64_t nominal = quota.Nominal(cq, fr);
  const int64_t own_free = std::max<int64_t>(0, nominal - quota.Usage(cq, fr));
  const int64_t lend = std::max<int64_t>(0, quota.Available(cq, fr) - own_free);
  std::string text = absl::StrCat(
      "queue ", cq, ": needs ", format(need), " ", fr.resource, " of flavor ",
      fr.flavor, "; ", format(own_free), " free of nominal ", format(nominal),
      ", cohort has ", format(lend), " to lend");
  // When the ClusterQueue's own borrowingLimit binds, say so: the cohort
  // may have more unused quota than the queue is allowed to take.
  const int64_t unlimited_lend = std::max<int64_t>(
      0, quota.AvailableWithoutBorrowingLimit(cq, fr) - own_free);
  if (auto limit = quota.BorrowingLimit(cq, fr);
      limit && unlimited_lend > lend) {
    absl::StrAppend(&text, " (borrowingLimit ", format(*limit), " reached; ",
                    format(unlimited_lend), " unused in the cohort)");
  }
  return {need > quota.MaxAvailable(cq, fr) ? ReasonCode::kExceedsMaxQuota
                                            : ReasonCode::kWaitingForQuota,
          std::move(text)};
}

// What must be free for the workload to take `demand`: the demand itself,
// raised to Volcano's minResources before a gang's first admission (a
// gang whose queue cannot hold its declared minimum does not start).
FrAmounts QuotaToCheck(const Workload& w, const ResourceGroup& group,
                       const std::string& flavor, const FrAmounts& demand) {
  if (w.admitted() || w.min_resources.entries().empty()) return demand;
  FrAmounts check = demand;
  for (const std::string& r : group.covered_resources) {
    const int64_t minimum = w.min_resources.Get(r);
    int64_t& need = check[{flavor, r}];
    need = std::max(need, minimum);
    if (need == 0) check.erase({flavor, r});
  }
  return check;
}

}  // namespace

bool QueueingEngine::QuotaFits(const Workload& w, const ClusterQueue& cq,
                               const ResourceGroup& group,
                               const std::string& flavor,
                               const FrAmounts& demand,
                               WaitReason* why) const {
  bool fits = true;
  for (const auto& [fr, need] : QuotaToCheck(w, group, flavor, demand)) {
    if (need > quota_.Available(cq.name, fr)) {
      fits = false;
      if (why->empty()) *why = QuotaShortfall(quota_, cq.name, fr, need);
    }
  }
  return fits;
}

}  // namespace gpusched
