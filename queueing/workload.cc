#include "queueing/workload.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/dra_demand.h"
#include "scheduler/gpu_request.h"

namespace gpusched {
namespace {

std::string NamespaceOf(const Pod& pod) {
  return pod.meta.namespace_name.empty() ? "default" : pod.meta.namespace_name;
}

}  // namespace

WorkloadRef WorkloadOf(const Pod& pod) {
  using Group = PodAdmissionState::GroupKind;
  const PodAdmissionState& admission = pod.admission;
  if (admission.group_kind == Group::kNone) {
    return {WorkloadRef::Kind::kSinglePod, pod.Key()};
  }
  WorkloadRef ref{.kind = WorkloadRef::Kind::kKueueGroup,
                  .key = NamespaceOf(pod) + "/" + admission.group_name};
  switch (admission.group_kind) {
    case Group::kKueue:
      ref.declared_count = admission.declared_count;
      break;
    case Group::kVolcano:
      ref.kind = WorkloadRef::Kind::kVolcanoGroup;
      break;
    case Group::kCoscheduling:
      ref.kind = WorkloadRef::Kind::kCoschedulingGroup;
      break;
    case Group::kNative:
      ref.kind = WorkloadRef::Kind::kNativeGroup;
      break;
    case Group::kNone:
      break;
  }
  return ref;
}

std::vector<const Pod*> Workload::MembersToAdmit() const {
  std::vector<const Pod*> members;
  for (const auto& [key, pod] : pods) {
    if (placements.contains(key)) continue;
    members.push_back(&pod);
  }
  const int needed =
      std::max(1, min_member - static_cast<int>(succeeded.size()));
  if (is_gang && !admitted() && static_cast<int>(members.size()) > needed) {
    members.resize(needed);
  }
  return members;
}

bool Workload::ShortOfPods() const {
  return is_gang &&
         static_cast<int>(pods.size() + succeeded.size()) < min_member;
}

bool Workload::HasUnplacedMembers() const {
  for (const auto& [key, pod] : pods) {
    if (!placements.contains(key)) return true;
  }
  return false;
}

const Pod* Workload::MemberHeldByClaims() const {
  for (const auto& [key, pod] : pods) {
    if (pod.claim_hold.held() && !placements.contains(key)) return &pod;
  }
  return nullptr;
}

std::vector<const Pod*> Workload::UnplacedMembers() const {
  std::vector<const Pod*> members;
  for (const auto& [key, pod] : pods) {
    if (!placements.contains(key)) members.push_back(&pod);
  }
  return members;
}

ResourceList TotalRequests(const std::vector<const Pod*>& pods) {
  ResourceList total;
  for (const Pod* pod : pods) total.Add(EffectiveRequests(*pod));
  return total;
}

namespace {

void AppendResources(std::string* out, const ResourceList& list) {
  for (const auto& [name, amount] : list.entries()) {
    absl::StrAppend(out, name, "=", amount, ",");
  }
}

void AppendMember(std::string* out, const Pod& pod) {
  AppendResources(out, EffectiveRequests(pod));
  absl::StrAppend(out, "|sel:");
  for (const auto& [key, value] : pod.node_selector) {
    absl::StrAppend(out, key, "=", value, ",");
  }
  absl::StrAppend(out, "|aff:");
  for (const NodeSelectorTerm& term : pod.required_affinity_terms) {
    for (const auto* list : {&term.match_expressions, &term.match_fields}) {
      for (const NodeSelectorRequirement& r : *list) {
        absl::StrAppend(out, r.key, " ", r.op, " ",
                        absl::StrJoin(r.values, ","), ";");
      }
      absl::StrAppend(out, "/");
    }
    absl::StrAppend(out, "||");
  }
  absl::StrAppend(out, "|tol:");
  for (const Toleration& t : pod.tolerations) {
    absl::StrAppend(out, t.key, " ", t.op, " ", t.value, " ", t.effect, ";");
  }
  // Only what the fit reads: users annotate pods with much else (an
  // expected runtime, tooling's notes), and each distinct value would
  // split an equivalence class into classes of one.
  absl::StrAppend(out, "|ann:");
  for (const auto& [key, value] : pod.meta.annotations) {
    if (ReadByNodeFit(key)) absl::StrAppend(out, key, "=", value, ",");
  }
  // What the claims ask beyond their count (selectors, a pinned
  // allocation) decides nodes too, and a held claim keeps the pod out of
  // any class whose head was tried.
  if (pod.dra_demand != nullptr) {
    absl::StrAppend(out, "|dra:", DraDemandSignature(*pod.dra_demand));
  }
  if (pod.claim_hold.held()) absl::StrAppend(out, "|held");
  absl::StrAppend(out, "\n");
}

}  // namespace

std::string MemberSignature(const Pod& pod) {
  std::string out;
  AppendMember(&out, pod);
  return out;
}

std::string PlacementSignature(const Workload& w) {
  std::string out =
      absl::StrCat(w.topology_required, "\n", w.topology_preferred, "\n",
                   w.topology_slice_level, "/", w.topology_slice_size, "\n");
  for (const Pod* pod : w.MembersToAdmit()) AppendMember(&out, *pod);
  return out;
}

std::string AdmissionSignature(const Workload& w) {
  std::string out = absl::StrCat(w.cluster_queue, "\n", w.priority, "\n");
  AppendResources(&out, w.min_resources);
  absl::StrAppend(&out, "\n", PlacementSignature(w));
  return out;
}

}  // namespace gpusched
