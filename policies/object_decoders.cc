// Decoders of the small kinds: ResourceFlavor, LocalQueue, Cohort,
// WorkloadPriorityClass, Topology. ClusterQueue and SchedulerConfig have files
// of their own.

#include "policies/object_decoders.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "policies/value_parsers.h"

namespace gpusched::policy_internal {
namespace {

constexpr std::array<std::string_view, 3> kTaintEffects = {
    "NoSchedule", "PreferNoSchedule", "NoExecute"};
// A toleration's empty effect matches every effect.
constexpr std::array<std::string_view, 4> kTolerationEffects = {
    "", "NoSchedule", "PreferNoSchedule", "NoExecute"};
constexpr char kHostnameLabel[] = "kubernetes.io/hostname";
constexpr std::array<std::string_view, 2> kTolerationOperators = {"Equal",
                                                                  "Exists"};

// nodeLabels: keys are qualified names, values label values.
StringMap DecodeNodeLabels(DocContext& doc, const Value& value) {
  StringMap labels = ReadStringMap(doc, value).value_or(StringMap{});
  for (const auto& [key, text] : labels) {
    std::string why = QualifiedNameError(key);
    if (!why.empty()) doc.Error(value.line, value.path, InvalidValue(key, why));
    why = LabelValueError(text);
    if (!why.empty())
      doc.Error(value.line, value.path, InvalidValue(text, why));
  }
  return labels;
}

Taint DecodeTaint(DocContext& doc, const Value& value) {
  MapReader reader(doc, value);
  Taint taint;
  const Value key = reader.Get("key");
  if (RequirePresent(doc, key)) {
    taint.key = ReadName(doc, key, QualifiedNameError).value_or("");
  }
  const Value text = reader.Get("value");
  taint.value = ReadName(doc, text, LabelValueError).value_or("");
  const Value effect = reader.Get("effect");
  if (RequirePresent(doc, effect)) {
    std::optional<int> index = ReadEnum(doc, effect, kTaintEffects);
    if (index) taint.effect = kTaintEffects[*index];
  }
  reader.Ignore("timeAdded");  // set by the node controller, not by admins
  reader.Finish();
  return taint;
}

// Kubernetes' rules: an empty key needs operator Exists; Exists takes no
// value.
void CheckToleration(DocContext& doc, const Toleration& toleration,
                     const Value& op, const Value& value) {
  if (toleration.key.empty() && toleration.op != "Exists") {
    doc.Error(op.line, op.path,
              InvalidValue(toleration.op, "must be Exists when key is empty"));
  }
  if (toleration.op == "Exists" && !toleration.value.empty()) {
    doc.Error(value.line, value.path,
              InvalidValue(toleration.value,
                           "must be empty when operator is Exists"));
  }
}

Toleration DecodeToleration(DocContext& doc, const Value& value) {
  MapReader reader(doc, value);
  Toleration toleration{.op = "Equal"};
  toleration.key =
      ReadName(doc, reader.Get("key"), QualifiedNameError).value_or("");
  const Value op = reader.Get("operator");
  if (std::optional<int> index = ReadEnum(doc, op, kTolerationOperators)) {
    toleration.op = kTolerationOperators[*index];
  }
  const Value text = reader.Get("value");
  toleration.value = ReadName(doc, text, LabelValueError).value_or("");
  if (std::optional<int> index =
          ReadEnum(doc, reader.Get("effect"), kTolerationEffects)) {
    toleration.effect = kTolerationEffects[*index];
  }
  reader.Unsupported("tolerationSeconds",
                     "gpusched does not evict pods on NoExecute taints; "
                     "remove it");
  reader.Finish();
  CheckToleration(doc, toleration, op, text);
  return toleration;
}

}  // namespace

std::optional<std::string> ReadCohortReference(
    DocContext& doc, const Value& value, std::vector<Reference>* references) {
  std::optional<std::string> name = ReadString(doc, value);
  if (!name || name->empty()) return std::nullopt;
  const std::string why = DnsSubdomainError(*name);
  if (!why.empty()) {
    doc.Error(value.line, value.path, InvalidValue(*name, why));
    return std::nullopt;
  }
  references->push_back({Kind::kCohort, *name, value.path, value.line});
  return name;
}

int64_t DecodeFairSharing(DocContext& doc, const Value& value) {
  MapReader reader(doc, value);
  std::optional<int64_t> weight =
      ReadParsed(doc, reader.Get("weight"), ParseWeightMilli);
  reader.Finish();
  return weight.value_or(kDefaultFairWeightMilli);
}

void DecodeResourceFlavor(DocContext& doc, MapReader& top, Origin origin,
                          PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  ResourceFlavor flavor{.name = origin.key};
  flavor.node_labels = DecodeNodeLabels(doc, spec.Get("nodeLabels"));
  for (const Value& item : ReadList(doc, spec.Get("nodeTaints"))) {
    flavor.node_taints.push_back(DecodeTaint(doc, item));
  }
  for (const Value& item : ReadList(doc, spec.Get("tolerations"))) {
    flavor.tolerations.push_back(DecodeToleration(doc, item));
  }
  Decoded<ResourceFlavor> decoded{.origin = origin};
  const Value topology = spec.Get("topologyName");
  if (topology.present()) {
    flavor.topology_name =
        ReadName(doc, topology, DnsSubdomainError).value_or("");
    if (!flavor.topology_name.empty()) {
      decoded.references.push_back({Kind::kTopology, flavor.topology_name,
                                    topology.path, topology.line});
    }
    // Kueue's CRD rule: a topology flavor's nodes are found by its labels.
    if (flavor.node_labels.empty()) {
      doc.Error(topology.line, spec.path(),
                Forbidden("at least one nodeLabel is required when "
                          "topology is set"));
    }
  }
  spec.Finish();
  top.Ignore("status");
  decoded.value = std::move(flavor);
  draft->flavors.push_back(std::move(decoded));
}

// spec.levels, as Kueue's CRD validates them: 1 to 16 node label keys,
// each once, kubernetes.io/hostname only as the lowest.
void DecodeTopology(DocContext& doc, MapReader& top, Origin origin,
                    PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  Decoded<Topology> topology{.value = {.name = origin.key}, .origin = origin};
  const Value levels = spec.Get("levels");
  const std::vector<Value> items = ReadList(doc, levels);
  if (RequirePresent(doc, levels) && (items.empty() || items.size() > 16)) {
    doc.Error(levels.line, levels.path,
              InvalidNonScalar("must have 1 to 16 levels"));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    MapReader level(doc, items[i]);
    const Value label = level.Get("nodeLabel");
    level.Finish();
    if (!RequirePresent(doc, label)) continue;
    std::optional<std::string> key = ReadName(doc, label, QualifiedNameError);
    if (!key) continue;
    std::vector<std::string>& known = topology.value.levels;
    if (std::find(known.begin(), known.end(), *key) != known.end()) {
      doc.Error(label.line, label.path,
                DuplicateValue(*key, "each level may appear once"));
    } else if (*key == kHostnameLabel && i + 1 != items.size()) {
      doc.Error(label.line, label.path,
                InvalidValue(*key,
                             "the kubernetes.io/hostname label can "
                             "only be used at the lowest level of "
                             "topology"));
    }
    known.push_back(*std::move(key));
  }
  spec.Finish();
  draft->topologies.push_back(std::move(topology));
}

void DecodeLocalQueue(DocContext& doc, MapReader& top, Origin origin,
                      std::string namespace_name, PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  Decoded<LocalQueue> queue{.origin = origin};
  queue.value.namespace_name = std::move(namespace_name);
  queue.value.name = origin.key.substr(origin.key.find('/') + 1);
  const Value cluster_queue = spec.Get("clusterQueue");
  if (RequirePresent(doc, cluster_queue)) {
    std::optional<std::string> name =
        ReadName(doc, cluster_queue, DnsSubdomainError);
    if (name) {
      queue.value.cluster_queue = *name;
      queue.references.push_back(
          {Kind::kClusterQueue, *name, cluster_queue.path, cluster_queue.line});
    }
  }
  spec.UnsupportedUnless("stopPolicy", "None",
                         "gpusched does not stop LocalQueues; only None");
  // Kueue's API server writes weight 1 into every LocalQueue; the weight
  // matters only to Admission Fair Sharing.
  queue.value.fair_weight_milli =
      DecodeFairSharing(doc, spec.Get("fairSharing"));
  spec.Finish();
  top.Ignore("status");
  if (origin.key.empty()) queue.value.name.clear();
  draft->local_queues.push_back(std::move(queue));
}

void DecodeCohort(DocContext& doc, MapReader& top, Origin origin,
                  PolicyDraft* draft) {
  MapReader spec(doc, top.Get("spec"));
  Decoded<Cohort> cohort{.value = {.name = origin.key}, .origin = origin};
  cohort.value.parent =
      ReadCohortReference(doc, spec.Get("parentName"), &cohort.references)
          .value_or("");
  const QuotaOwner owner{.has_parent = !cohort.value.parent.empty(),
                         .parent_field = "spec.parentName"};
  cohort.value.resource_groups = DecodeResourceGroups(
      doc, spec.Get("resourceGroups"), owner, &cohort.references);
  cohort.value.fair_weight_milli =
      DecodeFairSharing(doc, spec.Get("fairSharing"));
  spec.Finish();
  top.Ignore("status");
  draft->cohorts.push_back(std::move(cohort));
}

void DecodeWorkloadPriorityClass(DocContext& doc, MapReader& top, Origin origin,
                                 PolicyDraft* draft) {
  WorkloadPriorityClass priority_class{.name = origin.key};
  const Value value = top.Get("value");
  if (RequirePresent(doc, value)) {
    priority_class.value = static_cast<int32_t>(
        ReadInt(doc, value, std::numeric_limits<int32_t>::min(),
                std::numeric_limits<int32_t>::max())
            .value_or(0));
  }
  top.Ignore("description");
  draft->priority_classes.push_back(
      {.value = std::move(priority_class), .origin = std::move(origin)});
}

}  // namespace gpusched::policy_internal
