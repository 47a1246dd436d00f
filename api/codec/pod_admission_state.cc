#include "api/codec/pod_admission_state.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/codec/pod_topology_request.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using GroupKind = PodAdmissionState::GroupKind;

// The value under `key`, or "" when it is absent.
std::string ValueOf(const StringMap& map, const char* key) {
  auto it = map.find(key);
  return it == map.end() ? std::string() : it->second;
}

// The gang keys: the native PodGroup a pod names in its spec first, since
// kube-scheduler's GangScheduling gangs the pod by it whatever its labels
// say, and a gpusched gang that differed from kube-scheduler's would wait
// for ever on it; then in the order the issue lists them: Kueue pod group,
// Volcano group-name annotation, coscheduling label. Empty names count as
// absent.
void DecodeGroup(const Pod& pod, PodAdmissionState& state) {
  const ObjectMeta& meta = pod.meta;
  if (!pod.pod_group_name.empty()) {
    state.group_kind = GroupKind::kNative;
    state.group_name = pod.pod_group_name;
  } else if (std::string kueue = ValueOf(meta.labels, kKueueGroupLabel);
             !kueue.empty()) {
    state.group_kind = GroupKind::kKueue;
    state.group_name = std::move(kueue);
    const std::string count =
        ValueOf(meta.annotations, kKueueGroupCountAnnotation);
    if (!count.empty() && !absl::SimpleAtoi(count, &state.declared_count)) {
      state.declared_count = 0;
    }
  } else if (std::string volcano =
                 ValueOf(meta.annotations, kVolcanoGroupAnnotation);
             !volcano.empty()) {
    state.group_kind = GroupKind::kVolcano;
    state.group_name = std::move(volcano);
  } else if (std::string cosched =
                 ValueOf(meta.labels, kCoschedulingGroupLabel);
             !cosched.empty()) {
    state.group_kind = GroupKind::kCoscheduling;
    state.group_name = std::move(cosched);
  }
}

// The node gpusched's admission marked the pod for: its label says "true"
// and its annotation names the node.
std::string AdmittedNode(const ObjectMeta& meta) {
  if (ValueOf(meta.labels, kAdmittedLabel) != "true") return "";
  return ValueOf(meta.annotations, kAssignedNodeAnnotation);
}

// The node of a term's matchFields metadata.name In [node], or "".
std::string PinnedNodeOf(const NodeSelectorTerm& term) {
  std::string node;
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if (r.key == "metadata.name" && r.op == "In" && r.values.size() == 1) {
      node = r.values[0];
    }
  }
  return node;
}

// The node every required affinity term pins the pod to, or "" when one
// pins none or two pin different nodes.
std::string PinnedNode(const std::vector<NodeSelectorTerm>& terms) {
  std::string pinned;
  for (const NodeSelectorTerm& term : terms) {
    std::string node = PinnedNodeOf(term);
    if (node.empty() || (!pinned.empty() && node != pinned)) return "";
    pinned = std::move(node);
  }
  return pinned;
}

}  // namespace

bool IsAdmissionGate(std::string_view gate) {
  return gate == kAdmissionGate || gate == kKueueAdmissionGate ||
         gate == kKueueTopologyGate;
}

PodAdmissionState DecodePodAdmissionState(const Pod& pod) {
  const ObjectMeta& meta = pod.meta;
  PodAdmissionState state;
  if (auto queue = meta.labels.find(kQueueNameLabel);
      queue != meta.labels.end()) {
    state.queue_name = queue->second;
  }
  state.priority_class = ValueOf(meta.labels, kPriorityClassLabel);
  DecodeGroup(pod, state);
  DecodeTopologyRequest(meta, state);
  state.gated_by_us = std::any_of(
      pod.scheduling_gates.begin(), pod.scheduling_gates.end(),
      [](const std::string& gate) { return IsAdmissionGate(gate); });
  state.admitted_node = AdmittedNode(meta);
  state.pinned_node = PinnedNode(pod.required_affinity_terms);
  return state;
}

namespace {

// The expected-runtime annotation; activeDeadlineSeconds is read with the
// spec.
void ReadExpectedRuntime(Pod& pod) {
  pod.runtime.expected_ms.reset();
  pod.runtime.rejected.clear();
  auto it = pod.meta.annotations.find(kExpectedRuntimeAnnotation);
  if (it == pod.meta.annotations.end()) return;
  absl::StatusOr<int64_t> ms = ParseExpectedRuntimeMs(it->second);
  if (ms.ok()) {
    pod.runtime.expected_ms = *ms;
  } else {
    pod.runtime.rejected =
        absl::StrCat(kExpectedRuntimeAnnotation, " ", Sv(Message(ms.status())));
  }
}

}  // namespace

absl::StatusOr<int64_t> ParseExpectedRuntimeMs(std::string_view text) {
  absl::Duration duration;
  if (!absl::ParseDuration(Sv(text), &duration) ||
      duration <= absl::ZeroDuration() ||
      duration == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", Sv(text), "\" is not a positive duration such as 45m or 2h30m"));
  }
  return absl::ToInt64Milliseconds(duration);
}

bool IsAdmittedByKueue(const Pod& pod) {
  auto managed = pod.meta.labels.find(kKueueManagedLabel);
  return managed != pod.meta.labels.end() && managed->second == "true" &&
         !pod.admission.gated_by_us && pod.node_name.empty() &&
         pod.phase == PodPhase::kPending;
}

void ReadPodAdmissionState(Pod& pod) {
  pod.admission = DecodePodAdmissionState(pod);
  ReadExpectedRuntime(pod);
}

}  // namespace gpusched
