#include "scheduler/dra_selector_memo.h"

#include <algorithm>

namespace gpusched {

std::shared_ptr<const SelectorVerdicts> DraSelectorMemo::VerdictsFor(
    const DraMemoKey& key,
    const std::function<SelectorVerdicts()>& compute) const {
  auto find = [&] {
    return std::find_if(
        entries_.begin(), entries_.end(), [&](const Entry& entry) {
          return entry.key.hash == key.hash && entry.key.text == key.text;
        });
  };
  {
    std::lock_guard lock(mu_);
    if (auto it = find(); it != entries_.end()) return it->verdicts;
  }
  auto computed = std::make_shared<const SelectorVerdicts>(compute());
  std::lock_guard lock(mu_);
  if (auto it = find(); it != entries_.end()) return it->verdicts;
  if (entries_.size() >= kMaxSets) entries_.erase(entries_.begin());
  entries_.push_back({key, computed});
  return computed;
}

}  // namespace gpusched
