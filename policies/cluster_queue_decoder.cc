// ClusterQueue: cohort, namespaceSelector, queueingStrategy, resourceGroups,
// preemption, flavorFungibility, fairSharing, admissionScope, with Kueue's
// field names and defaults.

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policies/object_decoders.h"
#include "policies/value_parsers.h"

namespace gpusched::policy_internal {
namespace {

// Enum spellings, in the order of the C++ enumerators.
constexpr std::array<std::string_view, 2> kStrategies = {"BestEffortFIFO",
                                                         "StrictFIFO"};
constexpr std::array<std::string_view, 3> kWithinClusterQueue = {
    "Never", "LowerPriority", "LowerOrNewerEqualPriority"};
constexpr std::array<std::string_view, 3> kReclaimWithinCohort = {
    "Never", "LowerPriority", "Any"};
constexpr std::array<std::string_view, 2> kBorrowWithinCohort = {
    "Never", "LowerPriority"};
constexpr std::array<std::string_view, 2> kAdmissionModes = {
    "NoAdmissionFairSharing", "UsageBasedAdmissionFairSharing"};
constexpr std::array<std::string_view, 4> kSelectorOperators = {
    "In", "NotIn", "Exists", "DoesNotExist"};

template <typename Enum, size_t N>
void ReadEnumInto(DocContext& doc, const Value& value,
                  const std::array<std::string_view, N>& names, Enum* out) {
  if (std::optional<int> index = ReadEnum(doc, value, names)) {
    *out = static_cast<Enum>(*index);
  }
}

// spec.cohort, or its v1beta2 spelling spec.cohortName. Returns the field
// the admin used, for messages about it.
std::string DecodeCohortName(DocContext& doc, MapReader& spec,
                             DecodedClusterQueue* queue) {
  Value cohort = spec.Get("cohort");
  const Value cohort_name = spec.Get("cohortName");
  if (cohort.present() && cohort_name.present()) {
    doc.Error(cohort_name.line, cohort_name.path,
              Forbidden("set spec.cohort or spec.cohortName (the v1beta2 "
                        "spelling of the same field), not both"));
  } else if (cohort_name.present()) {
    cohort = cohort_name;
  }
  queue->value.cohort =
      ReadCohortReference(doc, cohort, &queue->references).value_or("");
  return cohort.path;
}

NodeSelectorRequirement DecodeRequirement(DocContext& doc, const Value& value) {
  MapReader reader(doc, value);
  NodeSelectorRequirement requirement;
  const Value key = reader.Get("key");
  if (RequirePresent(doc, key)) {
    requirement.key = ReadName(doc, key, QualifiedNameError).value_or("");
  }
  const Value op = reader.Get("operator");
  if (RequirePresent(doc, op)) {
    std::optional<int> index = ReadEnum(doc, op, kSelectorOperators);
    if (index) requirement.op = kSelectorOperators[*index];
  }
  const Value values = reader.Get("values");
  requirement.values =
      ReadStringList(doc, values).value_or(std::vector<std::string>{});
  reader.Finish();
  const bool wants_values = requirement.op == "In" || requirement.op == "NotIn";
  if (!requirement.op.empty() && wants_values == requirement.values.empty()) {
    doc.Error(values.line, values.path,
              wants_values
                  ? RequiredValue("In and NotIn need at least one value")
                  : Forbidden("Exists and DoesNotExist take no values"));
  }
  return requirement;
}

std::optional<LabelSelector> DecodeSelector(DocContext& doc,
                                            const Value& value) {
  if (!value.present()) return std::nullopt;
  MapReader reader(doc, value);
  LabelSelector selector;
  const Value labels = reader.Get("matchLabels");
  selector.match_labels = ReadStringMap(doc, labels).value_or(StringMap{});
  for (const auto& [key, text] : selector.match_labels) {
    std::string why = QualifiedNameError(key);
    if (!why.empty())
      doc.Error(labels.line, labels.path, InvalidValue(key, why));
    why = LabelValueError(text);
    if (!why.empty())
      doc.Error(labels.line, labels.path, InvalidValue(text, why));
  }
  for (const Value& item : ReadList(doc, reader.Get("matchExpressions"))) {
    selector.match_expressions.push_back(DecodeRequirement(doc, item));
  }
  reader.Finish();
  return selector;
}

// borrowWithinCohort: {policy, maxPriorityThreshold}.
void DecodeBorrowWithinCohort(DocContext& doc, const Value& value,
                              DecodedClusterQueue* queue) {
  PreemptionPolicy& preemption = queue->value.preemption;
  MapReader reader(doc, value);
  const Value policy = reader.Get("policy");
  ReadEnumInto(doc, policy, kBorrowWithinCohort,
               &preemption.borrow_within_cohort);
  if (std::optional<int64_t> threshold =
          ReadInt(doc, reader.Get("maxPriorityThreshold"),
                  std::numeric_limits<int32_t>::min(),
                  std::numeric_limits<int32_t>::max())) {
    preemption.max_priority_threshold = static_cast<int32_t>(*threshold);
  }
  reader.Finish();
  if (preemption.borrow_within_cohort == BorrowWithinCohort::kNever) return;
  queue->borrow_within_cohort_line = policy.line;
  if (preemption.reclaim_within_cohort == ReclaimWithinCohort::kNever) {
    doc.Error(policy.line, policy.path,
              InvalidValue(policy.node.Scalar(),
                           "must be Never when reclaimWithinCohort is Never"));
  }
}

void DecodePreemption(DocContext& doc, const Value& value,
                      DecodedClusterQueue* queue) {
  PreemptionPolicy& preemption = queue->value.preemption;
  MapReader reader(doc, value);
  ReadEnumInto(doc, reader.Get("withinClusterQueue"), kWithinClusterQueue,
               &preemption.within_cluster_queue);
  ReadEnumInto(doc, reader.Get("reclaimWithinCohort"), kReclaimWithinCohort,
               &preemption.reclaim_within_cohort);
  DecodeBorrowWithinCohort(doc, reader.Get("borrowWithinCohort"), queue);
  reader.Finish();
}

// admissionScope: {admissionMode}, which both v1beta1 and v1beta2 require
// once the section is there.
void DecodeAdmissionScope(DocContext& doc, const Value& value,
                          DecodedClusterQueue* queue) {
  if (!value.present()) return;
  MapReader reader(doc, value);
  const Value mode = reader.Get("admissionMode");
  if (RequirePresent(doc, mode)) {
    ReadEnumInto(doc, mode, kAdmissionModes, &queue->value.admission_mode);
  }
  reader.Finish();
}

// Kueue fields gpusched does not implement: an error rather than a silent
// difference in behaviour.
void RejectUnsupported(MapReader& spec) {
  spec.UnsupportedUnless("stopPolicy", "None",
                         "gpusched does not stop ClusterQueues; only None");
}

}  // namespace

void DecodeClusterQueue(DocContext& doc, MapReader& top, Origin origin,
                        PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  DecodedClusterQueue queue;
  queue.origin = std::move(origin);
  queue.value.name = queue.origin.key;
  const std::string cohort_field = DecodeCohortName(doc, spec, &queue);
  queue.value.namespace_selector =
      DecodeSelector(doc, spec.Get("namespaceSelector"));
  ReadEnumInto(doc, spec.Get("queueingStrategy"), kStrategies,
               &queue.value.queueing_strategy);
  const QuotaOwner owner{.has_parent = !queue.value.cohort.empty(),
                         .parent_field = cohort_field};
  queue.value.resource_groups = DecodeResourceGroups(
      doc, spec.Get("resourceGroups"), owner, &queue.references);
  DecodePreemption(doc, spec.Get("preemption"), &queue);
  queue.value.flavor_fungibility = DecodeFlavorFungibility(
      doc, spec.Get("flavorFungibility"),
      queue.origin.api_version == "kueue.x-k8s.io/v1beta1");
  queue.value.fair_weight_milli =
      DecodeFairSharing(doc, spec.Get("fairSharing"));
  queue.value.admission_checks = DecodeClusterQueueChecks(
      doc, spec, queue.origin.api_version == "kueue.x-k8s.io/v1beta1",
      &queue.references);
  DecodeAdmissionScope(doc, spec.Get("admissionScope"), &queue);
  RejectUnsupported(spec);
  spec.Finish();
  top.Ignore("status");
  draft->cluster_queues.push_back(std::move(queue));
}

}  // namespace gpusched::policy_internal
