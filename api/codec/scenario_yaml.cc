#include "api/codec/scenario_yaml.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/codec/file_text.h"
#include "api/codec/scenario_internal.h"
#include "policies/yaml_guard.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using scenario_internal::ErrorAt;
using scenario_internal::FieldMap;
using scenario_internal::PathSegment;
using scenario_internal::ScenarioSource;

constexpr std::string_view kApiVersion = "gpusched.io/v1alpha1";
constexpr std::array<std::string_view, 8> kTopFields = {
    "apiVersion", "kind",  "metadata", "nodes",
    "policy",     "until", "events",   "requeuePreempted"};

absl::Status WithFile(std::string_view file, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(Sv(file), ": ", status.message()));
}

// The one document of the scenario.
absl::StatusOr<YAML::Node> LoadDocument(std::string_view yaml,
                                        std::string_view file_name) {
  if (absl::Status refused = CheckYamlText(yaml); !refused.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(file_name), ": ", refused.message()));
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return scenario_internal::MalformedYaml(file_name, e);
  }
  std::erase_if(docs, [](const YAML::Node& doc) { return doc.IsNull(); });
  if (docs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(file_name),
                     ": expected one YAML document (a "
                     "Scenario), found ",
                     docs.size()));
  }
  return docs[0];
}

// `field` must be present with exactly `expected`.
absl::Status CheckConstant(const YAML::Node& root, const FieldMap& fields,
                           std::string_view field, std::string_view expected) {
  const PathSegment top = PathSegment::Context("");
  const PathSegment at = top.Field(field);
  const auto it = fields.find(field);
  if (it == fields.end()) {
    return ErrorAt(root, at, absl::StrCat("required: ", Sv(expected)));
  }
  const YAML::Node& value = it->second.value;
  if (!value.IsScalar() || value.Scalar() != expected) {
    return ErrorAt(it->second.line(), at,
                   absl::StrCat("must be ", Sv(expected)));
  }
  return absl::OkStatus();
}

// The line (0-based) where the top-level field after `field` starts, or the
// end of the text: inline policy documents end there.
int EndOfField(const YAML::Node& root, std::string_view field,
               std::string_view text) {
  int start = -1;
  for (const auto& entry : root) {
    if (entry.first.Scalar() == field) start = entry.first.Mark().line;
  }
  int end = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const auto& entry : root) {
    const int line = entry.first.Mark().line;
    if (line > start) end = std::min(end, line);
  }
  return end;
}

absl::Status DecodeOptions(const FieldMap& fields, const PathSegment& root,
                           Scenario* scenario) {
  if (auto it = fields.find("requeuePreempted"); it != fields.end()) {
    const PathSegment at = root.Field("requeuePreempted");
    const YAML::Node& value = it->second.value;
    if (!value.IsScalar() ||
        !YAML::convert<bool>::decode(value, scenario->requeue_preempted)) {
      return scenario_internal::TypeErrorAt(value, at, "boolean",
                                            it->second.line());
    }
  }
  if (auto it = fields.find("until"); it != fields.end()) {
    absl::StatusOr<int64_t> until =
        scenario_internal::DecodeDuration(it->second, root.Field("until"));
    if (!until.ok()) return until.status();
    scenario->until_ms = *until;
  }
  return absl::OkStatus();
}

YAML::Node FieldOrUndefined(const FieldMap& fields, std::string_view field) {
  auto it = fields.find(field);
  return it == fields.end() ? YAML::Node(YAML::NodeType::Undefined)
                            : it->second.value;
}

// Nodes first: events refer to them whatever the order in the file.
absl::Status DecodeNodesAndEvents(const YAML::Node& root,
                                  const FieldMap& fields,
                                  const ScenarioSource& source,
                                  Scenario* scenario) {
  const PathSegment top = PathSegment::Context("");
  const auto nodes_field = fields.find("nodes");
  if (nodes_field == fields.end()) {
    return ErrorAt(root, top.Field("nodes"), "required");
  }
  const YAML::Node& nodes = nodes_field->second.value;
  if (nodes.IsNull()) {
    return ErrorAt(nodes_field->second.line(), top.Field("nodes"),
                   "required: a cluster file path or a list of Nodes");
  }
  absl::StatusOr<std::vector<Node>> decoded =
      scenario_internal::DecodeScenarioNodes(nodes, top.Field("nodes"), source);
  if (!decoded.ok()) return decoded.status();
  scenario->nodes = *std::move(decoded);
  std::set<std::string, std::less<>> names;
  for (const Node& node : scenario->nodes) names.insert(node.meta.name);
  const YAML::Node events = FieldOrUndefined(fields, "events");
  absl::StatusOr<std::vector<ScenarioEvent>> decoded_events =
      scenario_internal::DecodeScenarioEvents(events, top.Field("events"),
                                              names);
  if (!decoded_events.ok()) return decoded_events.status();
  scenario->events = *std::move(decoded_events);
  return scenario_internal::CheckEventReferences(events, top.Field("events"),
                                                 scenario->events);
}

absl::StatusOr<Scenario> DecodeScenario(const YAML::Node& root,
                                        const ScenarioSource& source) {
  const PathSegment top = PathSegment::Context("");
  absl::StatusOr<FieldMap> fields =
      scenario_internal::CollectFields(root, top, kTopFields);
  if (!fields.ok()) return WithFile(source.file_name, fields.status());
  Scenario scenario;
  absl::Status status = CheckConstant(root, *fields, "apiVersion", kApiVersion);
  if (status.ok()) status = CheckConstant(root, *fields, "kind", "Scenario");
  if (status.ok()) status = DecodeOptions(*fields, top, &scenario);
  if (status.ok())
    status = DecodeNodesAndEvents(root, *fields, source, &scenario);
  if (!status.ok()) return WithFile(source.file_name, status);
  // Policy errors already name their files and lines.
  absl::StatusOr<Policy> policy = scenario_internal::DecodeScenarioPolicy(
      FieldOrUndefined(*fields, "policy"), top.Field("policy"), source,
      EndOfField(root, "policy", source.text));
  if (!policy.ok()) return policy.status();
  scenario.policy = *std::move(policy);
  // Events were decoded in file order; equal times keep it.
  std::stable_sort(scenario.events.begin(), scenario.events.end(),
                   [](const ScenarioEvent& a, const ScenarioEvent& b) {
                     return a.at_ms < b.at_ms;
                   });
  return scenario;
}

}  // namespace

absl::StatusOr<Scenario> ParseScenarioText(std::string_view yaml,
                                           std::string_view file_name,
                                           std::string_view base_dir) {
  absl::StatusOr<YAML::Node> root = LoadDocument(yaml, file_name);
  if (!root.ok()) return root.status();
  const ScenarioSource source{
      .text = yaml, .file_name = file_name, .base_dir = base_dir};
  return DecodeScenario(*root, source);
}

absl::StatusOr<Scenario> ParseScenarioFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  const std::string base_dir =
      std::filesystem::path(path).parent_path().string();
  return ParseScenarioText(*text, path, base_dir);
}

}  // namespace gpusched
