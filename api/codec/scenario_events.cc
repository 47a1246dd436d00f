// `events:` of a scenario: when, and what is created, finished, deleted or
// taken down.

#include <array>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/k8s_yaml_adapter.h"
#include "api/codec/pod_admission_state.h"
#include "api/codec/podgroup_decode_impl.h"
#include "api/codec/scenario_internal.h"
#include "queueing/scenario.h"
#include "queueing/workload_types.h"
#include "scheduler/base/strings.h"

namespace gpusched::scenario_internal {
namespace {

using codec_internal::YamlValue;
using NameSet = std::set<std::string, std::less<>>;

constexpr std::array<std::string_view, 7> kEventFields = {
    "at", "create", "finish", "delete", "nodeDown", "nodeUp", "admissionCheck"};
constexpr std::array<std::string_view, 4> kCheckFields = {"workload", "check",
                                                          "state", "message"};
// The fields whose items name objects created by events.
constexpr std::array<std::string_view, 2> kReferenceFields = {"finish",
                                                              "delete"};

// The API server defaults an empty namespace; doing the same here keeps
// every key the simulator builds "namespace/name".
void DefaultNamespace(ObjectMeta* meta) {
  if (meta->namespace_name.empty()) meta->namespace_name = "default";
}

absl::Status RequireName(const YAML::Node& item, const PathSegment& at,
                         ObjectMeta* meta) {
  if (meta->name.empty()) {
    return ErrorAt(item, at.Field("metadata").Field("name"), "required");
  }
  DefaultNamespace(meta);
  return absl::OkStatus();
}

// One `create` item, a Pod or a PodGroup by its kind.
absl::Status DecodeCreateItem(const YAML::Node& item, const PathSegment& at,
                              ScenarioEvent* event) {
  if (!item.IsMap()) return TypeErrorAt(item, at, "object (a Pod or PodGroup)");
  const YAML::Node& map = item;
  const YAML::Node kind = map["kind"];
  const PathSegment kind_at = at.Field("kind");
  if (!kind.IsDefined() || kind.IsNull()) {
    return ErrorAt(item, kind_at, "required: Pod or PodGroup");
  }
  absl::StatusOr<std::string> name = ScalarText(kind, kind_at, "string");
  if (!name.ok()) return name.status();
  if (*name == "Pod") {
    Pod& pod = event->create_pods.emplace_back();
    absl::Status s = codec_internal::DecodePodInto(YamlValue(item), at, &pod);
    if (s.ok()) s = RequireName(item, at, &pod.meta);
    if (absl::StatusOr<int64_t> runtime = SimulatedRuntimeMs(pod);
        s.ok() && !runtime.ok()) {
      const YAML::Node value =
          map["metadata"]["annotations"][kSimulatedRuntimeAnnotation];
      return ErrorAt(value,
                     at.Field("metadata")
                         .Field("annotations")
                         .Key(kSimulatedRuntimeAnnotation),
                     Message(runtime.status()));
    }
    return s;
  }
  if (*name == "PodGroup") {
    PodGroup& group = event->create_groups.emplace_back();
    absl::Status s =
        codec_internal::DecodePodGroupInto(YamlValue(item), at, &group);
    return s.ok() ? RequireName(item, at, &group.meta) : s;
  }
  return ErrorAt(kind, kind_at,
                 absl::StrCat("unsupported kind \"", *name,
                              "\": expected Pod or PodGroup"));
}

absl::Status DecodeCreate(const Field& field, const PathSegment& at,
                          ScenarioEvent* event) {
  const YAML::Node& node = field.value;
  if (!node.IsSequence()) return TypeErrorAt(node, at, "array", field.line());
  for (size_t i = 0; i < node.size(); ++i) {
    absl::Status s = DecodeCreateItem(node[i], at.Index(i), event);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// "namespace/name" with both parts present, as Pod::Key() prints it.
bool IsObjectKey(std::string_view text) {
  const size_t slash = text.find('/');
  return slash != std::string_view::npos && slash > 0 &&
         slash + 1 < text.size() &&
         text.find('/', slash + 1) == std::string_view::npos;
}

// A list of names; `check` returns "" for a good name or why it is not.
template <typename Check>
absl::Status DecodeNames(const Field& field, const PathSegment& at,
                         Check&& check, std::vector<std::string>* out) {
  const YAML::Node& node = field.value;
  if (!node.IsSequence()) {
    return TypeErrorAt(node, at, "array of strings", field.line());
  }
  for (size_t i = 0; i < node.size(); ++i) {
    absl::StatusOr<std::string> text =
        ScalarText(node[i], at.Index(i), "string");
    if (!text.ok()) return text.status();
    if (std::string why = check(*text); !why.empty()) {
      return ErrorAt(node[i], at.Index(i), why);
    }
    out->push_back(*std::move(text));
  }
  return absl::OkStatus();
}

absl::Status DecodeObjectKeys(const Field& field, const PathSegment& at,
                              std::vector<std::string>* out) {
  return DecodeNames(
      field, at,
      [](const std::string& text) -> std::string {
        if (IsObjectKey(text)) return "";
        return absl::StrCat("must be \"namespace/name\", got \"", text, "\"");
      },
      out);
}

absl::Status DecodeNodeNames(const Field& field, const PathSegment& at,
                             const NameSet& node_names,
                             std::vector<std::string>* out) {
  return DecodeNames(
      field, at,
      [&](const std::string& text) -> std::string {
        if (node_names.contains(text)) return "";
        return absl::StrCat("unknown node \"", text, "\"");
      },
      out);
}

// One `admissionCheck` item: {workload, check, state, message}.
absl::Status DecodeCheckState(const YAML::Node& item, const PathSegment& at,
                              ScenarioEvent* event) {
  absl::StatusOr<FieldMap> fields = CollectFields(item, at, kCheckFields);
  if (!fields.ok()) return fields.status();
  ScenarioCheckState update;
  std::string state;
  for (auto [key, out] :
       {std::pair{"workload", &update.workload},
        std::pair{"check", &update.check}, std::pair{"state", &state},
        std::pair{"message", &update.message}}) {
    auto it = fields->find(key);
    if (it == fields->end()) {
      if (std::string_view(key) == "message") continue;
      return ErrorAt(item, at.Field(key), "required");
    }
    absl::StatusOr<std::string> text =
        ScalarText(it->second.value, at.Field(key), "string");
    if (!text.ok()) return text.status();
    *out = *std::move(text);
  }
  if (!IsObjectKey(update.workload)) {
    return ErrorAt(item, at.Field("workload"),
                   absl::StrCat("must be \"namespace/name\", got \"",
                                update.workload, "\""));
  }
  std::optional<CheckState> parsed = ParseCheckState(state);
  if (!parsed) {
    return ErrorAt(item, at.Field("state"),
                   absl::StrCat("unsupported value \"", state,
                                "\": expected Pending, Ready, Retry or "
                                "Rejected"));
  }
  update.state = *parsed;
  event->check_states.push_back(std::move(update));
  return absl::OkStatus();
}

absl::Status DecodeCheckStates(const Field& field, const PathSegment& at,
                               ScenarioEvent* event) {
  const YAML::Node& node = field.value;
  if (!node.IsSequence()) return TypeErrorAt(node, at, "array", field.line());
  for (size_t i = 0; i < node.size(); ++i) {
    absl::Status s = DecodeCheckState(node[i], at.Index(i), event);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status DecodeActions(const FieldMap& fields, const PathSegment& at,
                           const NameSet& node_names, ScenarioEvent* event) {
  for (const auto& [key, value] : fields) {
    const PathSegment here = at.Field(key);
    absl::Status s;
    if (key == "create") s = DecodeCreate(value, here, event);
    if (key == "finish") s = DecodeObjectKeys(value, here, &event->finish);
    if (key == "delete") s = DecodeObjectKeys(value, here, &event->remove);
    if (key == "nodeDown") {
      s = DecodeNodeNames(value, here, node_names, &event->node_down);
    }
    if (key == "nodeUp") {
      s = DecodeNodeNames(value, here, node_names, &event->node_up);
    }
    if (key == "admissionCheck") s = DecodeCheckStates(value, here, event);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<ScenarioEvent> DecodeEvent(const YAML::Node& node,
                                          const PathSegment& at, int index,
                                          const NameSet& node_names) {
  absl::StatusOr<FieldMap> fields = CollectFields(node, at, kEventFields);
  if (!fields.ok()) return fields.status();
  ScenarioEvent event;
  event.index = index;
  const auto time = fields->find("at");
  if (time == fields->end()) return ErrorAt(node, at.Field("at"), "required");
  absl::StatusOr<int64_t> at_ms = DecodeDuration(time->second, at.Field("at"));
  if (!at_ms.ok()) return at_ms.status();
  event.at_ms = *at_ms;
  if (fields->size() == 1) {
    return ErrorAt(node, at,
                   "nothing to do: expected at least one of create, finish, "
                   "delete, nodeDown, nodeUp, admissionCheck");
  }
  absl::Status s = DecodeActions(*fields, at, node_names, &event);
  if (!s.ok()) return s;
  return event;
}

// Everything a finish/delete item may name: pods, PodGroups, and the groups
// pods join by label or annotation without a PodGroup object (every group
// key a pod carries, not only the one its admission state goes by).
NameSet CreatedNames(const std::vector<ScenarioEvent>& events) {
  NameSet names;
  for (const ScenarioEvent& event : events) {
    for (const PodGroup& group : event.create_groups) names.insert(group.Key());
    for (const Pod& pod : event.create_pods) {
      names.insert(pod.Key());
      const std::string prefix = pod.meta.namespace_name + "/";
      for (const char* label : {kKueueGroupLabel, kCoschedulingGroupLabel}) {
        auto it = pod.meta.labels.find(label);
        if (it != pod.meta.labels.end()) names.insert(prefix + it->second);
      }
      auto it = pod.meta.annotations.find(kVolcanoGroupAnnotation);
      if (it != pod.meta.annotations.end()) names.insert(prefix + it->second);
      if (!pod.pod_group_name.empty()) {
        names.insert(prefix + pod.pod_group_name);
      }
    }
  }
  return names;
}

}  // namespace

absl::StatusOr<std::vector<ScenarioEvent>> DecodeScenarioEvents(
    const YAML::Node& node, const PathSegment& at, const NameSet& node_names) {
  std::vector<ScenarioEvent> events;
  if (!node.IsDefined() || node.IsNull()) return events;
  if (!node.IsSequence()) return TypeErrorAt(node, at, "array of events");
  events.reserve(node.size());
  for (size_t i = 0; i < node.size(); ++i) {
    absl::StatusOr<ScenarioEvent> event =
        DecodeEvent(node[i], at.Index(i), static_cast<int>(i), node_names);
    if (!event.ok()) return event.status();
    events.push_back(*std::move(event));
  }
  return events;
}

absl::Status CheckEventReferences(const YAML::Node& node, const PathSegment& at,
                                  const std::vector<ScenarioEvent>& events) {
  if (!node.IsSequence()) return absl::OkStatus();
  const NameSet created = CreatedNames(events);
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& event = node[i];
    for (std::string_view field : kReferenceFields) {
      const YAML::Node items = event[std::string(field)];
      if (!items.IsDefined()) continue;
      for (size_t j = 0; j < items.size(); ++j) {
        if (created.contains(items[j].Scalar())) continue;
        return ErrorAt(items[j], at.Index(i).Field(field).Index(j),
                       absl::StrCat("no Pod or PodGroup \"", items[j].Scalar(),
                                    "\" is created by any event"));
      }
    }
    // Decoded before, so its shape holds; a zombie node (an absent key)
    // throws on every question but IsDefined.
    const YAML::Node checks = event["admissionCheck"];
    if (!checks.IsDefined() || !checks.IsSequence()) continue;
    for (size_t j = 0; j < checks.size(); ++j) {
      const YAML::Node workload = checks[j]["workload"];
      if (!workload.IsDefined() || !workload.IsScalar() ||
          created.contains(workload.Scalar())) {
        continue;
      }
      return ErrorAt(
          workload,
          at.Index(i).Field("admissionCheck").Index(j).Field("workload"),
          absl::StrCat("no Pod or PodGroup \"", workload.Scalar(),
                       "\" is created by any event"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpusched::scenario_internal
