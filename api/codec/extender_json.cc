#include "api/codec/extender_json.h"

#include <cctype>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/codec/json_writer.h"
#include "api/codec/k8s_json.h"
#include "api/codec/k8s_json_adapter.h"
#include "simdjson.h"

namespace gpusched {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Go's encoding/json matches keys case-insensitively; kube-scheduler's own
// tests round-trip lower-cased keys.
bool KeyIs(std::string_view key, std::string_view name) {
  if (key.size() != name.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(key[i])) !=
        std::tolower(static_cast<unsigned char>(name[i]))) {
      return false;
    }
  }
  return true;
}

absl::Status Invalid(std::string_view path, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(path), ": ", std::string(why)));
}

// One parser per I/O thread: parsers are not thread-safe, and reusing one
// keeps its buffers warm.
absl::StatusOr<element> ParseObject(std::string_view body) {
  thread_local simdjson::dom::parser parser;
  element root;
  if (auto error = parser.parse(body.data(), body.size()).get(root)) {
    return codec_internal::MalformedJsonError(body, error);
  }
  if (root.type() != element_type::OBJECT) {
    return absl::InvalidArgumentError("request body must be a JSON object");
  }
  return root;
}

absl::StatusOr<Pod> RequiredPod(element value, bool seen) {
  if (!seen || value.is_null()) return Invalid("Pod", "required, got null");
  return DecodePod(value, "Pod");
}

absl::Status DecodeNodeNames(element value, ExtenderArgs& args) {
  if (value.is_null()) return absl::OkStatus();
  simdjson::dom::array names;
  if (value.get(names))
    return Invalid("NodeNames", "must be a list of strings");
  args.has_node_names = true;
  size_t index = 0;
  for (element name : names) {
    std::string_view text;
    if (name.get(text)) {
      return Invalid(absl::StrCat("NodeNames[", index, "]"),
                     "must be a string");
    }
    args.node_names.emplace_back(text);
    ++index;
  }
  return absl::OkStatus();
}

// metadata.name and metadata.resourceVersion of a Nodes item, when both
// are strings.
bool NameAndVersion(element item, std::string_view* name,
                    std::string_view* version) {
  element meta;
  return item.type() == element_type::OBJECT && !item["metadata"].get(meta) &&
         meta.type() == element_type::OBJECT && !meta["name"].get(*name) &&
         !meta["resourceVersion"].get(*version);
}

absl::Status DecodeNodeList(element value, const DecodeOptions& options,
                            ExtenderArgs& args, std::vector<element>* items) {
  if (value.is_null()) return absl::OkStatus();
  if (value.type() != element_type::OBJECT) {
    return Invalid("Nodes", "must be a NodeList object");
  }
  args.has_nodes = true;
  element list_value;
  if (value["items"].get(list_value) || list_value.is_null()) {
    return absl::OkStatus();
  }
  simdjson::dom::array list;
  if (list_value.get(list)) return Invalid("Nodes.items", "must be a list");
  args.item_names.reserve(list.size());
  items->reserve(list.size());
  size_t index = 0;
  for (element item : list) {
    std::string_view name, version;
    if (options.known_node && NameAndVersion(item, &name, &version) &&
        !version.empty() && options.known_node(name, version)) {
      args.item_names.emplace_back(name);
    } else {
      absl::StatusOr<Node> node =
          DecodeNode(item, absl::StrCat("Nodes.items[", index, "]"));
      if (!node.ok()) return node.status();
      args.item_names.push_back(node->meta.name);
      args.nodes.push_back(*std::move(node));
    }
    items->push_back(item);
    ++index;
  }
  return absl::OkStatus();
}

void WriteFailedMap(JsonWriter& w,
                    const std::vector<std::pair<std::string, std::string>>& m) {
  w.Raw("{");
  for (size_t i = 0; i < m.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.Key(m[i].first).String(m[i].second);
  }
  w.Raw("}");
}

}  // namespace

namespace {

// The shared decode; `items` receives the Nodes items, valid until the next
// parse on this thread.
absl::StatusOr<ExtenderArgs> DecodeArgs(std::string_view body,
                                        const DecodeOptions& options,
                                        std::vector<element>* items) {
  absl::StatusOr<element> root = ParseObject(body);
  if (!root.ok()) return root.status();
  ExtenderArgs args;
  element pod_value;
  bool pod_seen = false;
  for (auto [key, value] : simdjson::dom::object(*root)) {
    absl::Status status;
    if (KeyIs(key, "Pod")) {
      pod_value = value;
      pod_seen = true;
    } else if (KeyIs(key, "NodeNames")) {
      status = DecodeNodeNames(value, args);
    } else if (KeyIs(key, "Nodes")) {
      status = DecodeNodeList(value, options, args, items);
    }
    if (!status.ok()) return status;
  }
  absl::StatusOr<Pod> pod = RequiredPod(pod_value, pod_seen);
  if (!pod.ok()) return pod.status();
  args.pod = *std::move(pod);
  if (!args.has_node_names) args.node_names = args.item_names;
  return args;
}

// Writes the Nodes items that passed, in item order; `write_item(i)`
// appends item i.
template <typename F>
void WritePassedItems(JsonWriter& w, const ExtenderArgs& args,
                      const FilterOutcome& outcome, F&& write_item) {
  w.Raw(R"({"metadata":{},"items":[)");
  bool first = true;
  for (size_t i = 0, p = 0;
       i < args.item_names.size() && p < outcome.passed.size(); ++i) {
    if (args.item_names[i] != outcome.passed[p]) continue;
    if (!first) w.Raw(",");
    write_item(w, i);
    first = false;
    ++p;
  }
  w.Raw("]}");
}

template <typename F>
std::string EncodeFilter(const ExtenderArgs& args, const FilterOutcome& outcome,
                         F&& write_item) {
  size_t size = 256;
  for (const std::string& name : outcome.passed) size += name.size() + 3;
  for (const auto* failures : {&outcome.failed, &outcome.unresolvable}) {
    for (const auto& [name, reason] : *failures) {
      size += name.size() + reason.size() + 6;
    }
  }
  JsonWriter w;
  w.out().reserve(size);
  w.Raw("{").Key("Nodes");
  if (args.has_nodes) {
    WritePassedItems(w, args, outcome, write_item);
  } else {
    w.Null();
  }
  w.Raw(",").Key("NodeNames");
  if (args.has_node_names) {
    w.Raw("[");
    for (size_t i = 0; i < outcome.passed.size(); ++i) {
      if (i > 0) w.Raw(",");
      w.String(outcome.passed[i]);
    }
    w.Raw("]");
  } else {
    w.Null();
  }
  w.Raw(",").Key("FailedNodes");
  WriteFailedMap(w, outcome.failed);
  w.Raw(",").Key("FailedAndUnresolvableNodes");
  WriteFailedMap(w, outcome.unresolvable);
  w.Raw(",").Key("Error").String("").Raw("}");
  return w.Take();
}

}  // namespace

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body,
                                                const DecodeOptions& options) {
  std::vector<element> items;
  absl::StatusOr<ExtenderArgs> args = DecodeArgs(body, options, &items);
  if (!args.ok()) return args;
  if (!options.echo_nodes) return args;
  args->node_json.reserve(items.size());
  for (element item : items) args->node_json.push_back(simdjson::minify(item));
  return args;
}

absl::StatusOr<std::string> DecodeFilterEncode(
    std::string_view body, const DecodeOptions& options,
    const std::function<FilterOutcome(const ExtenderArgs&)>& decide) {
  std::vector<element> items;
  absl::StatusOr<ExtenderArgs> args = DecodeArgs(body, options, &items);
  if (!args.ok()) return args.status();
  const FilterOutcome outcome = decide(*args);
  return EncodeFilter(*args, outcome, [&](JsonWriter& w, size_t i) {
    w.Raw(simdjson::minify(items[i]));
  });
}

namespace {

absl::StatusOr<std::vector<std::string>> DecodeVictimUids(
    element victims, const std::string& path, bool meta) {
  std::vector<std::string> uids;
  element pods;
  if (victims.is_null() || victims["Pods"].get(pods) || pods.is_null()) {
    // "Pods" may come with any casing; look it up the slow way.
    if (!victims.is_null() && victims.type() == element_type::OBJECT) {
      for (auto [key, value] : simdjson::dom::object(victims)) {
        if (KeyIs(key, "Pods")) pods = value;
      }
    }
    if (pods.is_null() || pods.type() != element_type::ARRAY) return uids;
  }
  size_t index = 0;
  for (element pod : simdjson::dom::array(pods)) {
    std::string item = absl::StrCat(path, ".Pods[", index++, "]");
    if (meta) {
      std::string_view uid;
      if (pod.type() != element_type::OBJECT)
        return Invalid(item, "must be an object");
      for (auto [key, value] : simdjson::dom::object(pod)) {
        if (KeyIs(key, "UID") && !value.get(uid)) uids.emplace_back(uid);
      }
      continue;
    }
    absl::StatusOr<Pod> victim = DecodePod(pod, item);
    if (!victim.ok()) return victim.status();
    uids.push_back(victim->meta.uid.empty() ? victim->Key() : victim->meta.uid);
  }
  return uids;
}

absl::Status DecodeVictimMap(element value, bool meta, PreemptionArgs& args) {
  if (value.is_null()) return absl::OkStatus();
  const char* field = meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
  if (value.type() != element_type::OBJECT) {
    return Invalid(field, "must be a map of node name to victims");
  }
  for (auto [node, victims] : simdjson::dom::object(value)) {
    // With both maps present (kube-scheduler sends one), meta wins.
    bool exists = false;
    for (const auto& c : args.candidates) exists |= c.node == node;
    if (exists) continue;
    std::string path = absl::StrCat(field, "[\"", std::string(node), "\"]");
    auto uids = DecodeVictimUids(victims, path, meta);
    if (!uids.ok()) return uids.status();
    int64_t pdb = 0;
    if (victims.type() == element_type::OBJECT) {
      for (auto [key, v] : simdjson::dom::object(victims)) {
        if (KeyIs(key, "NumPDBViolations") && v.get(pdb)) pdb = 0;
      }
    }
    args.candidates.push_back(
        PreemptionCandidate{std::string(node), *std::move(uids), pdb});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PreemptionArgs> DecodePreemptionArgs(std::string_view body) {
  absl::StatusOr<element> root = ParseObject(body);
  if (!root.ok()) return root.status();
  PreemptionArgs args;
  element pod_value, meta_value, full_value;
  bool pod_seen = false, meta_seen = false, full_seen = false;
  for (auto [key, value] : simdjson::dom::object(*root)) {
    if (KeyIs(key, "Pod")) {
      pod_value = value;
      pod_seen = true;
    } else if (KeyIs(key, "NodeNameToMetaVictims")) {
      meta_value = value;
      meta_seen = true;
    } else if (KeyIs(key, "NodeNameToVictims")) {
      full_value = value;
      full_seen = true;
    }
  }
  absl::StatusOr<Pod> pod = RequiredPod(pod_value, pod_seen);
  if (!pod.ok()) return pod.status();
  args.pod = *std::move(pod);
  if (meta_seen) {
    if (auto s = DecodeVictimMap(meta_value, true, args); !s.ok()) return s;
  }
  if (full_seen) {
    if (auto s = DecodeVictimMap(full_value, false, args); !s.ok()) return s;
  }
  return args;
}

absl::StatusOr<BindRequest> DecodeBindingArgs(std::string_view body) {
  absl::StatusOr<element> root = ParseObject(body);
  if (!root.ok()) return root.status();
  BindRequest request;
  struct Field {
    const char* name;
    std::string* out;
  } fields[] = {{"PodName", &request.pod_name},
                {"PodNamespace", &request.pod_namespace},
                {"PodUID", &request.pod_uid},
                {"Node", &request.node}};
  for (auto [key, value] : simdjson::dom::object(*root)) {
    for (Field& field : fields) {
      if (!KeyIs(key, field.name) || value.is_null()) continue;
      std::string_view text;
      if (value.get(text)) return Invalid(field.name, "must be a string");
      *field.out = std::string(text);
    }
  }
  for (const Field& field : fields) {
    if (field.out->empty() && std::string_view(field.name) != "PodNamespace") {
      return Invalid(field.name, "required");
    }
  }
  if (request.pod_namespace.empty()) request.pod_namespace = "default";
  return request;
}

absl::StatusOr<std::string> DecodePodCompletion(std::string_view body) {
  absl::StatusOr<element> root = ParseObject(body);
  if (!root.ok()) return root.status();
  std::string uid;
  for (auto [key, value] : simdjson::dom::object(*root)) {
    if (!KeyIs(key, "PodUID") || value.is_null()) continue;
    std::string_view text;
    if (value.get(text)) return Invalid("PodUID", "must be a string");
    uid = std::string(text);
  }
  if (uid.empty()) return Invalid("PodUID", "required");
  return uid;
}

std::string EncodeFilterResult(const ExtenderArgs& args,
                               const FilterOutcome& outcome) {
  return EncodeFilter(args, outcome, [&](JsonWriter& w, size_t i) {
    if (i < args.node_json.size()) w.Raw(args.node_json[i]);
  });
}

std::string EncodeFilterError(std::string_view error) {
  JsonWriter w;
  w.Raw(R"({"Nodes":null,"NodeNames":null,"FailedNodes":{},)"
        R"("FailedAndUnresolvableNodes":{},"Error":)")
      .String(error)
      .Raw("}");
  return w.Take();
}

std::string EncodeHostPriorities(const std::vector<HostScore>& scores) {
  JsonWriter w;
  w.out().reserve(16 + scores.size() * 40);
  w.Raw("[");
  for (size_t i = 0; i < scores.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.Raw("{").Key("Host").String(scores[i].host);
    w.Raw(",").Key("Score").Int(scores[i].score).Raw("}");
  }
  w.Raw("]");
  return w.Take();
}

std::string EncodePreemptionResult(
    const std::vector<PreemptionCandidate>& candidates) {
  JsonWriter w;
  w.Raw("{").Key("NodeNameToMetaVictims").Raw("{");
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.Key(candidates[i].node).Raw("{").Key("Pods").Raw("[");
    const auto& uids = candidates[i].victim_uids;
    for (size_t j = 0; j < uids.size(); ++j) {
      if (j > 0) w.Raw(",");
      w.Raw("{").Key("UID").String(uids[j]).Raw("}");
    }
    w.Raw("],").Key("NumPDBViolations").Int(candidates[i].pdb_violations);
    w.Raw("}");
  }
  w.Raw("}}");
  return w.Take();
}

std::string EncodePreemptionError(std::string_view error) {
  // ExtenderPreemptionResult has no Error field; an empty map means "no
  // preemption", which is what a failed request must amount to.
  (void)error;
  return R"({"NodeNameToMetaVictims":{}})";
}

std::string EncodeBindingResult(std::string_view error) {
  JsonWriter w;
  w.Raw("{").Key("Error").String(error).Raw("}");
  return w.Take();
}

}  // namespace gpusched
