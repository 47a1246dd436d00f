#include "scheduler/scoring.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scheduler/base/strings.h"

namespace gpusched {

std::span<const Scorer> Scorers() {
  static constexpr Scorer kScorers[] = {
      {"binpack", &BinpackScore,
       "prefer nodes whose GPUs are already partly used"},
      {"spread", &SpreadScore, "prefer the least used nodes"},
      {"topology", &TopologyScore,
       "prefer the GPU set with the best NVLink/PCIe links"},
      {"fragmentation", &FragmentationScore,
       "prefer placements that leave the fewest unusable GPU fragments",
       &FragmentationScorePrecise},
  };
  return kScorers;
}

const Scorer* FindScorer(std::string_view name) {
  for (const Scorer& scorer : Scorers()) {
    if (scorer.name == name) return &scorer;
  }
  return nullptr;
}

ScoringWeights ScoringWeights::Defaults() {
  return *Parse("binpack=1,spread=0,topology=2,fragmentation=3");
}

absl::StatusOr<ScoringWeights> ScoringWeights::Parse(std::string_view text) {
  ScoringWeights result;
  int total = 0;
  for (absl::string_view item :
       absl::StrSplit(Sv(text), ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    const Scorer* scorer =
        FindScorer(std::string_view(kv.first.data(), kv.first.size()));
    if (scorer == nullptr) {
      std::vector<absl::string_view> names;
      for (const Scorer& s : Scorers()) names.push_back(Sv(s.name));
      return absl::InvalidArgumentError(
          absl::StrCat("scoring: unknown scorer \"", kv.first,
                       "\" (known: ", absl::StrJoin(names, ", "), ")"));
    }
    int weight = 0;
    if (!absl::SimpleAtoi(kv.second, &weight) || weight < 0 || weight > 100) {
      return absl::InvalidArgumentError(
          absl::StrCat("scoring: weight of ", kv.first, " is \"", kv.second,
                       "\"; must be an integer from 0 to 100"));
    }
    for (const auto& [seen, unused] : result.weights_) {
      if (seen == scorer) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scoring: scorer \"", Sv(scorer->name), "\" is named twice"));
      }
    }
    result.weights_.emplace_back(scorer, weight);
    total += weight;
  }
  if (total == 0) {
    return absl::InvalidArgumentError(
        "scoring: at least one scorer needs a positive weight");
  }
  return result;
}

int ScoringWeights::Combined(const ScoreInput& input) const {
  // Exact for integer scores: a sum of integers and one division is
  // correctly rounded, so an integral mean is never floored below itself.
  return static_cast<int>(std::floor(Score(input)));
}

double ScoringWeights::Score(const ScoreInput& input) const {
  std::shared_ptr<const std::vector<TaskShape>> shapes;
  ScoreInput with_shapes = input;
  if (with_shapes.shapes.empty()) {
    shapes = workload_->Shapes();
    with_shapes.shapes = *shapes;
  }
  double sum = 0;
  int64_t total = 0;
  for (const auto& [scorer, weight] : weights_) {
    if (weight == 0) continue;
    const double score = scorer->precise != nullptr
                             ? scorer->precise(with_shapes)
                             : scorer->score(with_shapes);
    sum += weight * score;
    total += weight;
  }
  return total == 0 ? 0 : sum / static_cast<double>(total);
}

void ScoringWeights::ObservePod(const PodView& pod) const {
  if (pod.gpu.gpus <= 0) return;
  workload_->Observe(
      TaskShape{.gpus = pod.gpu.milli > 0 ? 1 : pod.gpu.gpus,
                .milli = pod.gpu.milli > 0 ? pod.gpu.milli : kMilliPerGpu,
                .cpu_milli = pod.requests.Get(kCpu),
                .memory_bytes = pod.requests.Get(kMemory)});
}

std::string ScoringWeights::ToString() const {
  return absl::StrJoin(weights_, ",", [](std::string* out, const auto& w) {
    absl::StrAppend(out, Sv(w.first->name), "=", w.second);
  });
}

}  // namespace gpusched
