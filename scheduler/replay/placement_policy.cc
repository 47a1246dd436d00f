#include "scheduler/replay/placement_policy.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/base/strings.h"
#include "scheduler/replay/baseline_policies.h"
#include "scheduler/replay/live_scoring_policy.h"
#include "scheduler/scoring.h"

namespace gpusched::replay {

std::span<const std::string_view> PolicyNames() {
  static constexpr std::string_view kNames[] = {"default", "random", "bestfit",
                                                "dotprod", "packing"};
  return kNames;
}

absl::StatusOr<std::unique_ptr<PlacementPolicy>> MakePolicy(
    std::string_view name, int shape_count, uint64_t seed) {
  if (name == "default") {
    return std::make_unique<LiveScoringPolicy>(ScoringWeights::Defaults(),
                                               shape_count, seed);
  }
  if (name == "random") return MakeRandomPolicy(seed);
  if (name == "bestfit") return MakeBestFitPolicy(seed);
  if (name == "dotprod") return MakeDotProductPolicy(seed);
  if (name == "packing") return MakePackingPolicy(seed);
  // Anything with weights ("fragmentation=1") is the live path with those
  // weights, as `gpusched serve --scoring` would configure it.
  if (name.find('=') != std::string_view::npos) {
    absl::StatusOr<ScoringWeights> weights = ScoringWeights::Parse(name);
    if (!weights.ok()) return weights.status();
    return std::make_unique<LiveScoringPolicy>(*std::move(weights), shape_count,
                                               seed);
  }
  std::vector<absl::string_view> known;
  for (std::string_view known_name : PolicyNames()) {
    known.push_back(Sv(known_name));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown scorer \"", Sv(name), "\" (known: ", absl::StrJoin(known, ", "),
      ", or live scoring weights such as \"fragmentation=1\")"));
}

}  // namespace gpusched::replay
