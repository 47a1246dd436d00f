#include "api/kube/pod_admission.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "api/codec/json_writer.h"
#include "queueing/workload_types.h"
#include "scheduler/base/strings.h"
#include "simdjson.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

using simdjson::dom::element;

constexpr std::string_view kRequiredTerms =
    "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"
    "/nodeSelectorTerms";

// One nodeSelectorTerm, kept as raw JSON so that a patch sends it back
// verbatim: its fields other than matchFields, and matchFields' entries.
struct Term {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::string> match_fields;
  std::string pinned_node;  // node of a metadata.name In [node] entry
};

// What admission needs to know of a pod as the API server has it.
struct PodView {
  std::string uid;
  std::string resource_version;
  std::string node_name;       // spec.nodeName: bound
  std::string nominated;       // status.nominatedNodeName
  std::string admitted_label;  // value of gpusched.io/admitted
  std::string assigned_node;   // gpusched.io/assigned-node
  bool gated = false;          // carries kAdmissionGate
  std::vector<std::string> other_gates;  // raw JSON entries
  std::vector<Term> terms;               // required node affinity
  // The node every term pins the pod to, if they all name the same one.
  std::string PinnedNode() const {
    if (terms.empty()) return "";
    for (const Term& term : terms) {
      if (term.pinned_node != terms[0].pinned_node) return "";
    }
    return terms[0].pinned_node;
  }
};

std::string PodPath(const PodTarget& pod) {
  return absl::StrFormat("/api/v1/namespaces/%s/pods/%s", pod.namespace_name,
                         pod.name);
}

std::string StringAt(element root, std::string_view pointer) {
  std::string_view value;
  if (root.at_pointer(pointer).get_string().get(value)) return "";
  return std::string(value);
}

// A JSON pointer to `key` in the object at `prefix` ('/' escapes as "~1").
std::string Pointer(std::string_view prefix, std::string_view key) {
  std::string pointer(prefix);
  for (char c : key) {
    if (c == '/') {
      pointer.append("~1");
    } else {
      pointer.push_back(c);
    }
  }
  return pointer;
}

// The node of a matchFields entry {key: metadata.name, operator: In,
// values: [node]}, or "".
std::string PinnedNodeOf(element requirement) {
  if (StringAt(requirement, "/key") != "metadata.name" ||
      StringAt(requirement, "/operator") != "In") {
    return "";
  }
  simdjson::dom::array values;
  if (requirement["values"].get_array().get(values) || values.size() != 1) {
    return "";
  }
  std::string_view node;
  return values.at(0).get_string().get(node) ? "" : std::string(node);
}

absl::StatusOr<Term> ParseTerm(element value, std::string_view where) {
  simdjson::dom::object object;
  if (value.get_object().get(object)) {
    return absl::DataLossError(absl::StrFormat("%s is not an object", where));
  }
  Term term;
  for (auto [key, field] : object) {
    if (key != "matchFields") {
      term.fields.emplace_back(std::string(key), simdjson::minify(field));
      continue;
    }
    simdjson::dom::array entries;
    if (field.get_array().get(entries)) {
      return absl::DataLossError(
          absl::StrFormat("%s.matchFields is not an array", where));
    }
    for (element entry : entries) {
      term.match_fields.push_back(simdjson::minify(entry));
      if (term.pinned_node.empty()) term.pinned_node = PinnedNodeOf(entry);
    }
  }
  return term;
}

absl::Status ParseTerms(element root, PodView& view) {
  element value;
  if (root.at_pointer(kRequiredTerms).get(value) || value.is_null()) {
    return absl::OkStatus();
  }
  simdjson::dom::array terms;
  if (value.get_array().get(terms)) {
    return absl::DataLossError(
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
        "Execution.nodeSelectorTerms is not an array");
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    absl::StatusOr<Term> term = ParseTerm(
        terms.at(i).value_unsafe(),
        absl::StrFormat("required node affinity nodeSelectorTerms[%d]", i));
    if (!term.ok()) return term.status();
    view.terms.push_back(*std::move(term));
  }
  return absl::OkStatus();
}

absl::Status ParseGates(element root, PodView& view) {
  element value;
  if (root.at_pointer("/spec/schedulingGates").get(value) || value.is_null()) {
    return absl::OkStatus();
  }
  simdjson::dom::array gates;
  if (value.get_array().get(gates)) {
    return absl::DataLossError("spec.schedulingGates is not an array");
  }
  for (size_t i = 0; i < gates.size(); ++i) {
    std::string_view name;
    if (gates.at(i)["name"].get_string().get(name)) {
      return absl::DataLossError(absl::StrFormat(
          "spec.schedulingGates[%d].name is not a string", i));
    }
    if (name == kAdmissionGate) {
      view.gated = true;
    } else {
      view.other_gates.push_back(simdjson::minify(gates.at(i).value_unsafe()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PodView> ParsePod(const std::string& body,
                                 std::string_view what) {
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(body).get(root) || !root.is_object()) {
    return absl::DataLossError(
        absl::StrFormat("%s: the answer is not a JSON object", what));
  }
  PodView view{
      .uid = StringAt(root, "/metadata/uid"),
      .resource_version = StringAt(root, "/metadata/resourceVersion"),
      .node_name = StringAt(root, "/spec/nodeName"),
      .nominated = StringAt(root, "/status/nominatedNodeName"),
      .admitted_label =
          StringAt(root, Pointer("/metadata/labels/", kAdmittedLabel)),
      .assigned_node = StringAt(
          root, Pointer("/metadata/annotations/", kAssignedNodeAnnotation))};
  absl::Status parsed = ParseGates(root, view);
  if (parsed.ok()) parsed = ParseTerms(root, view);
  if (!parsed.ok()) {
    return absl::DataLossError(
        absl::StrFormat("%s: %s", what, Message(parsed)));
  }
  return view;
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
Term TermOf(const NodeSelectorTerm& decoded) {
  Term term;
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

// The pod as the watch last delivered it, in the form a write needs (a
// scheduling gate has only a name).
PodView ViewOf(const Pod& pod) {
  PodView view{.uid = pod.meta.uid,
               .resource_version = pod.meta.resource_version,
               .node_name = pod.node_name,
               .nominated = pod.nominated_node_name,
               .admitted_label = ValueOr(pod.meta.labels, kAdmittedLabel),
               .assigned_node =
                   ValueOr(pod.meta.annotations, kAssignedNodeAnnotation)};
  for (const std::string& gate : pod.scheduling_gates) {
    if (gate == kAdmissionGate) {
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

// "metadata":{"resourceVersion":...,"labels":{...},"annotations":{...}}
// with our label and annotation set to `node`, or removed (null) when
// `node` is empty.
void WriteMetadata(JsonWriter& w, std::string_view version,
                   std::string_view node) {
  w.Key("metadata").Raw("{").Key("resourceVersion").String(version);
  w.Raw(",").Key("labels").Raw("{").Key(kAdmittedLabel);
  node.empty() ? w.Null() : w.String("true");
  w.Raw("},").Key("annotations").Raw("{").Key(kAssignedNodeAnnotation);
  node.empty() ? w.Null() : w.String(node);
  w.Raw("}}");
}

void WriteTerm(JsonWriter& w, const Term& term, std::string_view node) {
  w.Raw("{");
  for (const auto& [key, value] : term.fields) w.Key(key).Raw(value).Raw(",");
  w.Key("matchFields").Raw("[");
  for (const std::string& entry : term.match_fields) w.Raw(entry).Raw(",");
  w.Raw(R"({"key":"metadata.name","operator":"In","values":[)");
  w.String(node).Raw("]}]}");
}

// Merge patch replaces lists, so both lists are sent whole: every term
// narrowed by our requirement, and the gates other than ours.
std::string GatedPatch(const PodView& pod, std::string_view node) {
  JsonWriter w;
  w.Raw("{");
  WriteMetadata(w, pod.resource_version, node);
  w.Raw(",").Key("spec").Raw("{").Key("schedulingGates");
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
  if (pod.terms.empty()) WriteTerm(w, Term{}, node);
  for (size_t i = 0; i < pod.terms.size(); ++i) {
    if (i > 0) w.Raw(",");
    WriteTerm(w, pod.terms[i], node);
  }
  w.Raw("]}}}}}");
  return w.Take();
}

std::string MetadataPatch(std::string_view version, std::string_view node) {
  JsonWriter w;
  w.Raw("{");
  WriteMetadata(w, version, node);
  w.Raw("}");
  return w.Take();
}

// status.nominatedNodeName set to `node`, or removed when it is empty.
std::string NominationPatch(std::string_view version, std::string_view node) {
  JsonWriter w;
  w.Raw(R"({"metadata":{)").Key("resourceVersion").String(version);
  w.Raw(R"(},"status":{)").Key("nominatedNodeName");
  node.empty() ? w.Null() : w.String(node);
  w.Raw("}}");
  return w.Take();
}

// A write's outcome: done (with the pod it wrote), lost a race (409), or
// the pod is gone (404).
enum class Wrote { kDone, kConflict, kGone };
struct Written {
  Wrote wrote;
  std::string version;  // the written pod's resourceVersion
};

absl::StatusOr<Written> PatchPod(KubeClient& client, const std::string& path,
                                 const std::string& patch,
                                 const CallOptions& call) {
  absl::StatusOr<std::string> body = client.Patch(path, patch, call);
  if (absl::IsAborted(body.status())) return Written{Wrote::kConflict, ""};
  if (absl::IsNotFound(body.status())) return Written{Wrote::kGone, ""};
  if (!body.ok()) return body.status();
  absl::StatusOr<PodView> written = ParsePod(*body, path);
  if (!written.ok()) return written.status();
  return Written{Wrote::kDone, written->resource_version};
}

// Reads the pod and runs `step` on it until a step finishes without losing
// a race: a step answers nullopt when a write of it got a 409.
template <typename Result>
using Step =
    absl::FunctionRef<absl::StatusOr<std::optional<Result>>(const PodView&)>;

// The first step runs on the watched pod, when there is one of that uid:
// most admissions then cost one PATCH and no GET. A watch that was behind
// loses the race (409), and the pod is read from then on.
template <typename Result>
absl::StatusOr<Result> OnFreshPod(KubeClient& client, const PodTarget& pod,
                                  const CallOptions& call, Result gone,
                                  const Pod* watched, Step<Result> step) {
  const std::string path = PodPath(pod);
  int attempt = 0;
  if (watched != nullptr && !watched->meta.resource_version.empty() &&
      (pod.uid.empty() || watched->meta.uid == pod.uid)) {
    ++attempt;
    absl::StatusOr<std::optional<Result>> done = step(ViewOf(*watched));
    if (!done.ok()) return done.status();
    if (done->has_value()) return **std::move(done);
  }
  for (; attempt < kMaxAdmitAttempts; ++attempt) {
    absl::StatusOr<std::string> body = client.Get(path, call);
    if (absl::IsNotFound(body.status())) return gone;
    if (!body.ok()) return body.status();
    absl::StatusOr<PodView> view = ParsePod(*body, path);
    if (!view.ok()) return view.status();
    if (!pod.uid.empty() && view->uid != pod.uid) return gone;
    absl::StatusOr<std::optional<Result>> done = step(*view);
    if (!done.ok()) return done.status();
    if (done->has_value()) return **std::move(done);
  }
  return absl::AbortedError(absl::StrFormat(
      "PATCH %s: still conflicting after %d attempts", path,
      kMaxAdmitAttempts));
}

AdmitResult Gone(const PodTarget& pod) {
  return {AdmitOutcome::kPodGone,
          absl::StrFormat("pod %s/%s (uid %s) no longer exists",
                          pod.namespace_name, pod.name, pod.uid)};
}

// A pod whose required node affinity already names another node can never
// run on `node`: affinity only narrows, and not at all once ungated.
std::optional<AdmitResult> PinnedElsewhere(const PodView& view,
                                           std::string_view node) {
  const std::string pinned = view.PinnedNode();
  if (pinned.empty() || pinned == node) return std::nullopt;
  return AdmitResult{
      AdmitOutcome::kNodeConflict,
      absl::StrFormat("its required node affinity pins it to node %s, not %s",
                      pinned, node)};
}

// Maps a write that did not finish: a lost race is tried again (nullopt),
// a vanished pod is an outcome.
std::optional<AdmitResult> Unfinished(Wrote wrote, const PodTarget& pod) {
  if (wrote == Wrote::kGone) return Gone(pod);
  return std::nullopt;
}

absl::StatusOr<std::optional<AdmitResult>> Ungate(KubeClient& client,
                                                  const PodTarget& pod,
                                                  const PodView& view,
                                                  std::string_view node,
                                                  const CallOptions& call) {
  // Required affinity can only narrow while gated: a pod someone else
  // pinned elsewhere would end up matching no node at all.
  if (auto conflict = PinnedElsewhere(view, node)) return conflict;
  absl::StatusOr<Written> written =
      PatchPod(client, PodPath(pod), GatedPatch(view, node), call);
  if (!written.ok()) return written.status();
  if (written->wrote != Wrote::kDone) return Unfinished(written->wrote, pod);
  spdlog::info("kube: ungated pod {}/{} on node {}", pod.namespace_name,
               pod.name, node);
  return AdmitResult{AdmitOutcome::kUngated,
                     absl::StrFormat("ungated and pinned to node %s", node)};
}

// For a pod without our gate: whether there is nothing to write, or
// nothing that could work.
std::optional<AdmitResult> SettledWithoutGate(const PodView& view,
                                              std::string_view node) {
  if (!view.node_name.empty()) {
    if (view.node_name == node) {
      return AdmitResult{AdmitOutcome::kAlreadyAdmitted,
                         absl::StrFormat("already bound to node %s", node)};
    }
    return AdmitResult{
        AdmitOutcome::kNodeConflict,
        absl::StrFormat("bound to node %s, not %s", view.node_name, node)};
  }
  if (auto conflict = PinnedElsewhere(view, node)) return conflict;
  const std::string pinned = view.PinnedNode();
  const bool marked =
      view.admitted_label == "true" && view.assigned_node == node;
  if (marked && (pinned == node || view.nominated == node)) {
    return AdmitResult{AdmitOutcome::kAlreadyAdmitted,
                       absl::StrFormat("already admitted on node %s", node)};
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<AdmitResult>> Nominate(KubeClient& client,
                                                    const PodTarget& pod,
                                                    const PodView& view,
                                                    std::string_view node,
                                                    const CallOptions& call) {
  if (auto settled = SettledWithoutGate(view, node)) return settled;
  const std::string path = PodPath(pod);
  std::string version = view.resource_version;
  if (view.admitted_label != "true" || view.assigned_node != node) {
    absl::StatusOr<Written> marked =
        PatchPod(client, path, MetadataPatch(version, node), call);
    if (!marked.ok()) return marked.status();
    if (marked->wrote != Wrote::kDone) return Unfinished(marked->wrote, pod);
    version = marked->version;
  }
  absl::StatusOr<Written> nominated = PatchPod(
      client, path + "/status", NominationPatch(version, node), call);
  if (!nominated.ok()) return nominated.status();
  if (nominated->wrote != Wrote::kDone) {
    return Unfinished(nominated->wrote, pod);
  }
  return AdmitResult{AdmitOutcome::kNominated,
                     absl::StrFormat("labelled and nominated to node %s",
                                     node)};
}

absl::StatusOr<std::optional<ClearResult>> Clear(KubeClient& client,
                                                 const PodTarget& pod,
                                                 const PodView& view,
                                                 const CallOptions& call) {
  const ClearResult gone{ClearOutcome::kPodGone, Gone(pod).message};
  const std::string path = PodPath(pod);
  std::string version = view.resource_version;
  if (!view.admitted_label.empty() || !view.assigned_node.empty()) {
    absl::StatusOr<Written> cleared =
        PatchPod(client, path, MetadataPatch(version, ""), call);
    if (!cleared.ok()) return cleared.status();
    if (cleared->wrote == Wrote::kGone) return gone;
    if (cleared->wrote == Wrote::kConflict) return std::nullopt;
    version = cleared->version;
  }
  if (!view.nominated.empty()) {
    absl::StatusOr<Written> cleared = PatchPod(
        client, path + "/status", NominationPatch(version, ""), call);
    if (!cleared.ok()) return cleared.status();
    if (cleared->wrote == Wrote::kGone) return gone;
    if (cleared->wrote == Wrote::kConflict) return std::nullopt;
  }
  return ClearResult{ClearOutcome::kCleared, "admission cleared"};
}

}  // namespace

absl::StatusOr<AdmitResult> AdmitPod(KubeClient& client, const PodTarget& pod,
                                     std::string_view node,
                                     const CallOptions& call,
                                     const Pod* watched) {
  return OnFreshPod<AdmitResult>(
      client, pod, call, Gone(pod), watched,
      [&](const PodView& view) -> absl::StatusOr<std::optional<AdmitResult>> {
        return view.gated ? Ungate(client, pod, view, node, call)
                          : Nominate(client, pod, view, node, call);
      });
}

absl::StatusOr<ClearResult> ClearAdmission(KubeClient& client,
                                           const PodTarget& pod,
                                           const CallOptions& call,
                                           const Pod* watched) {
  return OnFreshPod<ClearResult>(
      client, pod, call,
      ClearResult{ClearOutcome::kPodGone, Gone(pod).message}, watched,
      [&](const PodView& view) { return Clear(client, pod, view, call); });
}

std::string_view AdmitOutcomeName(AdmitOutcome outcome) {
  switch (outcome) {
    case AdmitOutcome::kUngated:
      return "ungated";
    case AdmitOutcome::kNominated:
      return "nominated";
    case AdmitOutcome::kAlreadyAdmitted:
      return "already-admitted";
    case AdmitOutcome::kPodGone:
      return "pod-gone";
    case AdmitOutcome::kNodeConflict:
      return "node-conflict";
  }
  return "unknown";
}

}  // namespace gpusched::kube
