#include "api/codec/pod_admission_json.h"

#include <map>
#include <optional>

#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"
#include "api/codec/pod_admission_state.h"  // kAdmissionGate, kAdmittedLabel

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;
using codec_internal::ValueKind;
using simdjson::dom::element;

// The object member `key` of `parent` (at `at`): nullopt when missing or
// null, an error when present but not an object.
absl::StatusOr<std::optional<element>> ObjectMember(element parent,
                                                    const PathSegment& at,
                                                    std::string_view key) {
  element child;
  if (parent[key].get(child) || child.is_null()) return std::nullopt;
  if (absl::Status s =
          codec_internal::ExpectObject(JsonValue(child), at.Field(key));
      !s.ok()) {
    return s;
  }
  return child;
}

// The string `key` of the object member `object` of `root`, into `out`.
absl::Status NestedString(element root, const PathSegment& at,
                          std::string_view object, std::string_view key,
                          std::string* out) {
  absl::StatusOr<std::optional<element>> inner = ObjectMember(root, at, object);
  if (!inner.ok()) return inner.status();
  if (!inner->has_value()) return absl::OkStatus();
  std::string_view text;
  absl::Status status = codec_internal::OptionalString(
      JsonValue(**inner), at.Field(object), key, &text);
  out->assign(text);
  return status;
}

// The node of a matchFields entry {key: metadata.name, operator: In,
// values: [node]}, or "".
std::string PinnedNodeOf(element requirement) {
  std::string_view key, op, node;
  simdjson::dom::array values;
  if (requirement["key"].get_string().get(key) || key != "metadata.name" ||
      requirement["operator"].get_string().get(op) || op != "In" ||
      requirement["values"].get_array().get(values) || values.size() != 1 ||
      values.at(0).get_string().get(node)) {
    return "";
  }
  return std::string(node);
}

absl::StatusOr<AdmissionTerm> DecodeTerm(element value, const PathSegment& at) {
  if (absl::Status s = codec_internal::ExpectObject(JsonValue(value), at);
      !s.ok()) {
    return s;
  }
  AdmissionTerm term;
  for (auto [key, field] : simdjson::dom::object(value)) {
    if (key != "matchFields") {
      term.fields.emplace_back(std::string(key), simdjson::minify(field));
      continue;
    }
    simdjson::dom::array entries;
    if (field.get_array().get(entries)) {
      return codec_internal::TypeError(JsonValue(field),
                                       at.Field("matchFields"), "array");
    }
    for (element entry : entries) {
      term.match_fields.push_back(simdjson::minify(entry));
      if (term.pinned_node.empty()) term.pinned_node = PinnedNodeOf(entry);
    }
  }
  return term;
}

// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
//   .nodeSelectorTerms.
absl::Status DecodeTerms(element spec, const PathSegment& at,
                         PodAdmissionView& view) {
  absl::StatusOr<std::optional<element>> affinity =
      ObjectMember(spec, at, "affinity");
  if (!affinity.ok() || !affinity->has_value()) return affinity.status();
  const PathSegment affinity_at = at.Field("affinity");
  absl::StatusOr<std::optional<element>> node =
      ObjectMember(**affinity, affinity_at, "nodeAffinity");
  if (!node.ok() || !node->has_value()) return node.status();
  const PathSegment node_at = affinity_at.Field("nodeAffinity");
  constexpr std::string_view kRequired =
      "requiredDuringSchedulingIgnoredDuringExecution";
  absl::StatusOr<std::optional<element>> required =
      ObjectMember(**node, node_at, kRequired);
  if (!required.ok() || !required->has_value()) return required.status();
  const PathSegment required_at = node_at.Field(kRequired);
  const PathSegment terms_at = required_at.Field("nodeSelectorTerms");
  element terms;
  if ((**required)["nodeSelectorTerms"].get(terms) || terms.is_null()) {
    return absl::OkStatus();
  }
  if (!terms.is_array()) {
    return codec_internal::TypeError(JsonValue(terms), terms_at, "array");
  }
  size_t index = 0;
  for (element value : terms.get_array()) {
    absl::StatusOr<AdmissionTerm> term =
        DecodeTerm(value, terms_at.Index(index++));
    if (!term.ok()) return term.status();
    view.terms.push_back(*std::move(term));
  }
  return absl::OkStatus();
}

absl::Status DecodeGates(element spec, const PathSegment& at,
                         PodAdmissionView& view) {
  element gates;
  if (spec["schedulingGates"].get(gates) || gates.is_null()) {
    return absl::OkStatus();
  }
  const PathSegment gates_at = at.Field("schedulingGates");
  if (!gates.is_array()) {
    return codec_internal::TypeError(JsonValue(gates), gates_at, "array");
  }
  size_t index = 0;
  for (element gate : gates.get_array()) {
    const PathSegment gate_at = gates_at.Index(index++);
    std::string_view name;
    absl::Status status =
        codec_internal::ExpectObject(JsonValue(gate), gate_at);
    if (status.ok()) {
      status = codec_internal::RequiredString(JsonValue(gate), gate_at, "name",
                                              &name);
    }
    if (!status.ok()) return status;
    if (IsAdmissionGate(name)) {
      view.gated = true;
    } else {
      view.other_gates.push_back(simdjson::minify(gate));
    }
  }
  return absl::OkStatus();
}

absl::Status DecodeMetadata(element root, const PathSegment& at,
                            PodAdmissionView& view) {
  absl::Status status = NestedString(root, at, "metadata", "uid", &view.uid);
  if (status.ok()) {
    status = NestedString(root, at, "metadata", "resourceVersion",
                          &view.resource_version);
  }
  absl::StatusOr<std::optional<element>> meta =
      ObjectMember(root, at, "metadata");
  if (!status.ok() || !meta.ok() || !meta->has_value()) {
    return status.ok() ? meta.status() : status;
  }
  const PathSegment meta_at = at.Field("metadata");
  status = NestedString(**meta, meta_at, "labels", kAdmittedLabel,
                        &view.admitted_label);
  if (!status.ok()) return status;
  return NestedString(**meta, meta_at, "annotations", kAssignedNodeAnnotation,
                      &view.assigned_node);
}

absl::Status DecodeSpec(element root, const PathSegment& at,
                        PodAdmissionView& view) {
  absl::Status status =
      NestedString(root, at, "spec", "nodeName", &view.node_name);
  absl::StatusOr<std::optional<element>> spec = ObjectMember(root, at, "spec");
  if (!status.ok() || !spec.ok() || !spec->has_value()) {
    return status.ok() ? spec.status() : status;
  }
  const PathSegment spec_at = at.Field("spec");
  status = DecodeGates(**spec, spec_at, view);
  if (!status.ok()) return status;
  return DecodeTerms(**spec, spec_at, view);
}

std::string RequirementJson(const NodeSelectorRequirement& requirement) {
  JsonWriter w;
  w.Raw("{").Key("key").String(requirement.key);
  w.Raw(",").Key("operator").String(requirement.op);
  if (!requirement.values.empty()) {
    w.Raw(",").Key("values").Raw("[");
    for (size_t i = 0; i < requirement.values.size(); ++i) {
      w.Raw(i == 0 ? "" : ",").String(requirement.values[i]);
    }
    w.Raw("]");
  }
  w.Raw("}");
  return w.Take();
}

// A nodeSelectorTerm has only matchExpressions and matchFields, and a
// requirement only key, operator and values: the decoded term written back
// is the term the API server holds.
AdmissionTerm TermOf(const NodeSelectorTerm& decoded) {
  AdmissionTerm term;
  if (!decoded.match_expressions.empty()) {
    std::string expressions = "[";
    for (const NodeSelectorRequirement& r : decoded.match_expressions) {
      if (expressions.size() > 1) expressions += ",";
      expressions += RequirementJson(r);
    }
    term.fields.emplace_back("matchExpressions", expressions + "]");
  }
  for (const NodeSelectorRequirement& r : decoded.match_fields) {
    term.match_fields.push_back(RequirementJson(r));
    if (term.pinned_node.empty() && r.key == "metadata.name" && r.op == "In" &&
        r.values.size() == 1) {
      term.pinned_node = r.values[0];
    }
  }
  return term;
}

const std::string& ValueOr(const StringMap& map, std::string_view key) {
  static const std::string kNone;
  auto it = map.find(key);
  return it == map.end() ? kNone : it->second;
}

// "metadata":{"resourceVersion":...,"labels":{...},"annotations":{...}}
// with our label and annotation set to `node`, or removed (null) when
// `node` is empty.
// `extra`'s entries as members of an object already open.
void WriteEntries(JsonWriter& w,
                  const std::map<std::string, std::string>& extra, bool first) {
  for (const auto& [key, value] : extra) {
    w.Raw(first ? "" : ",").Key(key).String(value);
    first = false;
  }
}

void WriteMetadata(JsonWriter& w, std::string_view version,
                   std::string_view node,
                   const std::map<std::string, std::string>& annotations = {}) {
  w.Key("metadata").Raw("{").Key("resourceVersion").String(version);
  w.Raw(",").Key("labels").Raw("{").Key(kAdmittedLabel);
  node.empty() ? w.Null() : w.String("true");
  w.Raw("},").Key("annotations").Raw("{").Key(kAssignedNodeAnnotation);
  node.empty() ? w.Null() : w.String(node);
  WriteEntries(w, annotations, false);
  w.Raw("}}");
}

void WriteTerm(JsonWriter& w, const AdmissionTerm& term,
               std::string_view node) {
  w.Raw("{");
  for (const auto& [key, value] : term.fields) w.Key(key).Raw(value).Raw(",");
  w.Key("matchFields").Raw("[");
  for (const std::string& entry : term.match_fields) w.Raw(entry).Raw(",");
  w.Raw(R"({"key":"metadata.name","operator":"In","values":[)");
  w.String(node).Raw("]}]}");
}

}  // namespace

std::string PodAdmissionView::PinnedNode() const {
  if (terms.empty()) return "";
  for (const AdmissionTerm& term : terms) {
    if (term.pinned_node != terms[0].pinned_node) return "";
  }
  return terms[0].pinned_node;
}

absl::StatusOr<PodAdmissionView> DecodePodAdmissionView(std::string_view json) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root =
      codec_internal::ParseJsonObject(parser, json, "Pod");
  if (!root.ok()) return root.status();
  const PathSegment at = PathSegment::Root("Pod");
  PodAdmissionView view;
  absl::Status status = DecodeMetadata(*root, at, view);
  if (status.ok()) status = DecodeSpec(*root, at, view);
  if (status.ok()) {
    status =
        NestedString(*root, at, "status", "nominatedNodeName", &view.nominated);
  }
  std::string phase;
  if (status.ok()) status = NestedString(*root, at, "status", "phase", &phase);
  if (!status.ok()) return status;
  view.ended = phase == "Succeeded" || phase == "Failed";
  return view;
}

PodAdmissionView PodAdmissionViewOf(const Pod& pod) {
  PodAdmissionView view{
      .uid = pod.meta.uid,
      .resource_version = pod.meta.resource_version,
      .node_name = pod.node_name,
      .nominated = pod.nominated_node_name,
      .admitted_label = ValueOr(pod.meta.labels, kAdmittedLabel),
      .assigned_node = ValueOr(pod.meta.annotations, kAssignedNodeAnnotation),
      .ended =
          pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed};
  for (const std::string& gate : pod.scheduling_gates) {
    if (IsAdmissionGate(gate)) {
      view.gated = true;
      continue;
    }
    JsonWriter w;
    w.Raw("{").Key("name").String(gate).Raw("}");
    view.other_gates.push_back(w.Take());
  }
  for (const NodeSelectorTerm& term : pod.required_affinity_terms) {
    view.terms.push_back(TermOf(term));
  }
  return view;
}

// Merge patch replaces lists, so both lists are sent whole: every term
// narrowed by our requirement, and the gates other than ours.
std::string EncodeUngatePatch(const PodAdmissionView& pod,
                              std::string_view node,
                              const PodSetUpdate& update) {
  JsonWriter w;
  w.Raw("{");
  WriteMetadata(w, pod.resource_version, node, update.annotations);
  w.Raw(",").Key("spec").Raw("{");
  if (!update.node_selector.empty()) {
    w.Key("nodeSelector").Raw("{");
    WriteEntries(w, update.node_selector, true);
    w.Raw("},");
  }
  w.Key("schedulingGates");
  if (pod.other_gates.empty()) {
    w.Null();
  } else {
    w.Raw("[");
    for (size_t i = 0; i < pod.other_gates.size(); ++i) {
      w.Raw(i == 0 ? "" : ",").Raw(pod.other_gates[i]);
    }
    w.Raw("]");
  }
  w.Raw(R"(,"affinity":{"nodeAffinity":{)")
      .Key("requiredDuringSchedulingIgnoredDuringExecution")
      .Raw(R"({"nodeSelectorTerms":[)");
  if (pod.terms.empty()) WriteTerm(w, AdmissionTerm{}, node);
  for (size_t i = 0; i < pod.terms.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteTerm(w, pod.terms[i], node);
  }
  w.Raw("]}}}}}");
  return w.Take();
}

std::string EncodeAdmittedMarkPatch(std::string_view resource_version,
                                    std::string_view node) {
  JsonWriter w;
  w.Raw("{");
  WriteMetadata(w, resource_version, node);
  w.Raw("}");
  return w.Take();
}

std::string EncodeNominationPatch(std::string_view resource_version,
                                  std::string_view node) {
  JsonWriter w;
  w.Raw(R"({"metadata":{)").Key("resourceVersion").String(resource_version);
  w.Raw(R"(},"status":{)").Key("nominatedNodeName");
  node.empty() ? w.Null() : w.String(node);
  w.Raw("}}");
  return w.Take();
}

std::string EncodeLabelPatch(std::string_view key, std::string_view value) {
  JsonWriter w;
  w.Raw(R"({"metadata":{"labels":{)").Key(key).String(value);
  w.Raw("}}}");
  return w.Take();
}

}  // namespace gpusched
