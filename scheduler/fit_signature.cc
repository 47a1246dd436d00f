#include "scheduler/fit_signature.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "scheduler/dra_demand.h"

namespace gpusched {
namespace {

// Length-prefixed, so that no two different field lists can spell the same
// text ("a","bc" vs "ab","c").
void AppendText(std::string& out, std::string_view text) {
  absl::StrAppend(&out, text.size(), ":");
  out.append(text);
}

void AppendRequirements(std::string& out,
                        const std::vector<NodeSelectorRequirement>& list) {
  absl::StrAppend(&out, "[", list.size());
  for (const NodeSelectorRequirement& r : list) {
    AppendText(out, r.key);
    AppendText(out, r.op);
    absl::StrAppend(&out, "(", r.values.size());
    for (const std::string& value : r.values) AppendText(out, value);
    out += ')';
  }
  out += ']';
}

}  // namespace

std::string FitSignature(const PodView& pod) {
  std::string out;
  out.reserve(128);
  AppendText(out, pod.invalid_reason);
  absl::StrAppend(&out, "R", pod.requests.entries().size());
  for (const auto& [name, amount] : pod.requests.entries()) {
    AppendText(out, name);
    absl::StrAppend(&out, "=", amount, ";");
  }
  const GpuRequest& gpu = pod.gpu;
  absl::StrAppend(&out, "G", gpu.gpus, ",", gpu.milli, ",",
                  gpu.require_nvlink ? 1 : 0, ",", gpu.mig.size());
  for (const auto& [profile, count] : gpu.mig) {
    AppendText(out, profile);
    absl::StrAppend(&out, "=", count, ";");
  }
  absl::StrAppend(&out, "S", pod.pod->node_selector.size());
  for (const auto& [key, value] : pod.pod->node_selector) {
    AppendText(out, key);
    AppendText(out, value);
  }
  absl::StrAppend(&out, "A", pod.pod->required_affinity_terms.size());
  for (const NodeSelectorTerm& term : pod.pod->required_affinity_terms) {
    AppendRequirements(out, term.match_expressions);
    AppendRequirements(out, term.match_fields);
  }
  absl::StrAppend(&out, "T", pod.pod->tolerations.size());
  for (const Toleration& t : pod.pod->tolerations) {
    AppendText(out, t.key);
    AppendText(out, t.op);
    AppendText(out, t.value);
    AppendText(out, t.effect);
  }
  if (pod.pod->dra_demand != nullptr) {
    AppendText(out, DraDemandSignature(*pod.pod->dra_demand));
  }
  return out;
}

}  // namespace gpusched
