#include "scheduler/node_predicates.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_demand.h"
#include "scheduler/gpu_request.h"

namespace gpusched {
namespace {

constexpr char kUnschedulableTaintKey[] = "node.kubernetes.io/unschedulable";

bool Contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool CompareInt(std::string_view label, const std::vector<std::string>& values,
                bool greater) {
  int64_t have = 0;
  int64_t want = 0;
  if (values.size() != 1 || !absl::SimpleAtoi(Sv(label), &have) ||
      !absl::SimpleAtoi(values[0], &want)) {
    return false;
  }
  return greater ? have > want : have < want;
}

std::string DescribeRequirement(const NodeSelectorRequirement& r) {
  if (r.op == "Exists" || r.op == "DoesNotExist") {
    return absl::StrCat(r.key, " ", r.op);
  }
  return absl::StrCat(r.key, " ", r.op, " [", absl::StrJoin(r.values, ","),
                      "]");
}

std::string DescribeLabel(const StringMap& labels, std::string_view key) {
  auto it = labels.find(key);
  if (it == labels.end()) return absl::StrCat("node has no label ", Sv(key));
  return absl::StrCat("node has ", Sv(key), "=", it->second);
}

// Returns the first requirement of `term` the node fails, or nullptr.
const NodeSelectorRequirement* FirstUnmet(const NodeSelectorTerm& term,
                                          const Node& node) {
  for (const NodeSelectorRequirement& r : term.match_expressions) {
    if (!MatchesRequirement(r, node.meta.labels)) return &r;
  }
  StringMap fields{{"metadata.name", node.meta.name}};
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if (!MatchesRequirement(r, fields)) return &r;
  }
  return nullptr;
}

bool ToleratesAll(const std::vector<Toleration>& tolerations,
                  const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return Tolerates(t, taint); });
}

}  // namespace

bool MatchesRequirement(const NodeSelectorRequirement& requirement,
                        const StringMap& labels) {
  auto it = labels.find(requirement.key);
  const bool present = it != labels.end();
  const std::string& op = requirement.op;
  if (op == "In") return present && Contains(requirement.values, it->second);
  if (op == "NotIn") {
    return !present || !Contains(requirement.values, it->second);
  }
  if (op == "Exists") return present;
  if (op == "DoesNotExist") return !present;
  if (op == "Gt")
    return present && CompareInt(it->second, requirement.values, true);
  if (op == "Lt")
    return present && CompareInt(it->second, requirement.values, false);
  return false;  // unknown operators never match, as in kube-scheduler
}

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) {
    return false;
  }
  if (toleration.op == "Exists") {
    return toleration.key.empty() || toleration.key == taint.key;
  }
  return toleration.key == taint.key && toleration.value == taint.value;
}

FitVerdict CheckUnschedulable(const PodView& pod, const NodeState& node) {
  if (!node.node().unschedulable) return FitVerdict::Fits();
  Taint cordon{.key = kUnschedulableTaintKey, .effect = "NoSchedule"};
  if (ToleratesAll(pod.pod->tolerations, cordon)) return FitVerdict::Fits();
  return FitVerdict::Infeasible("node is cordoned (spec.unschedulable)");
}

bool HasLabels(const StringMap& labels, const StringMap& wanted) {
  for (const auto& [key, value] : wanted) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

FitVerdict CheckNodeSelector(const PodView& pod, const NodeState& node) {
  const StringMap& labels = node.node().meta.labels;
  for (const auto& [key, value] : pod.pod->node_selector) {
    auto it = labels.find(key);
    if (it != labels.end() && it->second == value) continue;
    return FitVerdict::Infeasible(absl::StrCat("nodeSelector wants ", key, "=",
                                               value, "; ",
                                               DescribeLabel(labels, key)));
  }
  return FitVerdict::Fits();
}

FitVerdict CheckNodeAffinity(const PodView& pod, const NodeState& node) {
  const auto& terms = pod.pod->required_affinity_terms;
  if (terms.empty()) return FitVerdict::Fits();
  const NodeSelectorRequirement* first_unmet = nullptr;
  for (const NodeSelectorTerm& term : terms) {
    const NodeSelectorRequirement* unmet = FirstUnmet(term, node.node());
    if (unmet == nullptr) return FitVerdict::Fits();
    if (first_unmet == nullptr) first_unmet = unmet;
  }
  std::string have =
      first_unmet->key == "metadata.name"
          ? absl::StrCat("node is ", node.name())
          : DescribeLabel(node.node().meta.labels, first_unmet->key);
  return FitVerdict::Infeasible(
      absl::StrCat("required node affinity not met (", terms.size(),
                   terms.size() == 1 ? " term" : " terms",
                   "): ", DescribeRequirement(*first_unmet), "; ", have));
}

FitVerdict CheckTaints(const PodView& pod, const NodeState& node) {
  for (const Taint& taint : node.node().taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (ToleratesAll(pod.pod->tolerations, taint)) continue;
    return FitVerdict::Infeasible(
        absl::StrCat("node has taint ", taint.key,
                     taint.value.empty() ? "" : absl::StrCat("=", taint.value),
                     ":", taint.effect, " that the pod does not tolerate"));
  }
  return FitVerdict::Fits();
}

namespace {

// Finds `name` scanning forward from `it` in a name-sorted list: requests,
// allocatable and requested are all sorted, so one merge walk replaces a
// binary search per resource (the fit check runs for every candidate node).
int64_t AdvanceTo(const std::vector<ResourceList::Entry>& list, size_t& it,
                  const std::string& name) {
  while (it < list.size() && list[it].first < name) ++it;
  return it < list.size() && list[it].first == name ? list[it].second : 0;
}

}  // namespace

FitVerdict CheckResources(const PodView& pod, const NodeState& node) {
  const ResourceList& allocatable = node.node().allocatable;
  if (allocatable.Has(kPods) && node.pod_count() + 1 > allocatable.Get(kPods)) {
    return FitVerdict::Unavailable(absl::StrCat(
        "node already runs ", node.pod_count(), " pods, its maximum"));
  }
  size_t in_allocatable = 0;
  size_t in_requested = 0;
  for (const auto& [name, want] : pod.requests.entries()) {
    if (want <= 0 || IsGpuResource(name) || name == kPods) continue;
    const int64_t total =
        AdvanceTo(allocatable.entries(), in_allocatable, name);
    if (want > total) {
      return FitVerdict::Infeasible(absl::StrCat(
          "needs ", ResourceList::FormatAmount(name, want), " ", name,
          "; node has ", ResourceList::FormatAmount(name, total),
          " allocatable"));
    }
    const int64_t free =
        total - AdvanceTo(node.requested().entries(), in_requested, name);
    if (want > free) {
      return FitVerdict::Unavailable(absl::StrCat(
          "needs ", ResourceList::FormatAmount(name, want), " ", name, "; ",
          ResourceList::FormatAmount(name, std::max<int64_t>(free, 0)),
          " free of ", ResourceList::FormatAmount(name, total)));
    }
  }
  return FitVerdict::Fits();
}

// What the claims ask beyond their charged count, on the node's DRA
// devices (dra_demand.h); a request gpusched cannot decide never refuses.
FitVerdict CheckDynamicResources(const PodView& pod, const NodeState& node) {
  const DraDemand* demand = pod.pod->dra_demand.get();
  if (demand == nullptr) return FitVerdict::Fits();
  const DraNodeDevices* devices = node.node().dra_devices.get();
  static const DraNodeDevices kNone;
  DraNodeFit fit =
      FitDraDemand(*demand, node.name(), devices == nullptr ? kNone : *devices);
  if (fit.fits) return FitVerdict::Fits();
  return FitVerdict::Unavailable(fit.reason);
}

std::span<const NodePredicate> NodePredicates() {
  static constexpr NodePredicate kPredicates[] = {
      {"NodeUnschedulable", &CheckUnschedulable},
      {"NodeSelector", &CheckNodeSelector},
      {"NodeAffinity", &CheckNodeAffinity},
      {"TaintToleration", &CheckTaints},
      {"NodeResourcesFit", &CheckResources},
      {"DynamicResources", &CheckDynamicResources},
  };
  return kPredicates;
}

}  // namespace gpusched
