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
static_assert(kJsonReadPadding >= simdjson::SIMDJSON_PADDING);

// `padded`: the bytes after `body` may be read (kJsonReadPadding of them),
// so the parser reads the body in place instead of copying it first.
absl::StatusOr<element> ParseObject(std::string_view body,
                                    bool padded = false) {
  thread_local simdjson::dom::parser parser;
  element root;
  if (auto error = parser.parse(body.data(), body.size(), !padded).get(root)) {
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
  args.node_names.reserve(names.size());
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

}  // namespace

namespace extender_internal {

// The parts of a filter result that grow with the candidates, filled as
// verdicts arrive and joined by JoinFilterResult. Kept per thread, so that
// their buffers are reused from one request to the next.
struct FilterParts {
  std::string passed;        // "a","b"
  std::string failed;        // "a":"why","b":"why"
  std::string unresolvable;  // the same for FailedAndUnresolvableNodes
  std::vector<size_t> passed_candidates;  // indices into node_names

  static FilterParts& ForThisThread() {
    thread_local FilterParts parts;
    parts.passed.clear();
    parts.failed.clear();
    parts.unresolvable.clear();
    parts.passed_candidates.clear();
    return parts;
  }

  void Add(size_t index, std::string_view name, FitVerdict::Code code,
           std::string_view reason) {
    if (code == FitVerdict::Code::kFits) {
      AddName(name);
      passed_candidates.push_back(index);
      return;
    }
    if (code == FitVerdict::Code::kNotChosen) return;  // left out
    std::string& map =
        code == FitVerdict::Code::kUnavailable ? failed : unresolvable;
    AppendQuoted(map, name);
    map += ':';
    map += '"';
    AppendJsonEscaped(map, reason);
    map += '"';
  }
  // A passing name without a candidate index (EncodeFilterResult only).
  void AddName(std::string_view name) { AppendQuoted(passed, name); }

 private:
  static void AppendQuoted(std::string& out, std::string_view text) {
    if (!out.empty()) out += ',';
    out += '"';
    AppendJsonEscaped(out, text);
    out += '"';
  }
};

}  // namespace extender_internal

namespace {

using extender_internal::FilterParts;

// The shared decode; `items` receives the Nodes items, valid until the next
// parse on this thread.
absl::StatusOr<ExtenderArgs> DecodeArgs(std::string_view body,
                                        const DecodeOptions& options,
                                        std::vector<element>* items) {
  absl::StatusOr<element> root = ParseObject(body, options.body_padded);
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

// The Nodes items of the passing candidates. The candidates are the items
// themselves unless the request also had NodeNames; then items are matched
// to passing names in order.
std::vector<size_t> PassedItems(const ExtenderArgs& args,
                                const std::vector<size_t>& passed) {
  if (!args.has_node_names) return passed;
  std::vector<size_t> items;
  for (size_t i = 0, p = 0; i < args.item_names.size() && p < passed.size();
       ++i) {
    if (args.item_names[i] != args.node_names[passed[p]]) continue;
    items.push_back(i);
    ++p;
  }
  return items;
}

// The ExtenderFilterResult: Nodes (the passing items, written by
// `write_item(w, i)`) when the request had Nodes, NodeNames when it had
// NodeNames, and the two failure maps.
template <typename F>
std::string JoinFilterResult(const ExtenderArgs& args, const FilterParts& parts,
                             F&& write_item) {
  JsonWriter w;
  w.out().reserve(160 + parts.passed.size() + parts.failed.size() +
                  parts.unresolvable.size());
  w.Raw(R"({"Nodes":)");
  if (args.has_nodes) {
    w.Raw(R"({"metadata":{},"items":[)");
    const std::vector<size_t> items =
        PassedItems(args, parts.passed_candidates);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) w.Raw(",");
      write_item(w, items[i]);
    }
    w.Raw("]}");
  } else {
    w.Null();
  }
  w.Raw(R"(,"NodeNames":)");
  if (args.has_node_names) {
    w.Raw("[").Raw(parts.passed).Raw("]");
  } else {
    w.Null();
  }
  w.Raw(R"(,"FailedNodes":{)").Raw(parts.failed);
  w.Raw(R"(},"FailedAndUnresolvableNodes":{)").Raw(parts.unresolvable);
  w.Raw(R"(},"Error":""})");
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

struct FilterRequest::ParsedItems {
  std::vector<element> items;
};

FilterRequest::FilterRequest() : items_(std::make_unique<ParsedItems>()) {}
FilterRequest::FilterRequest(FilterRequest&&) noexcept = default;
FilterRequest& FilterRequest::operator=(FilterRequest&&) noexcept = default;
FilterRequest::~FilterRequest() = default;

absl::StatusOr<FilterRequest> DecodeFilterRequest(
    std::string_view body, const DecodeOptions& options) {
  FilterRequest request;
  absl::StatusOr<ExtenderArgs> args =
      DecodeArgs(body, options, &request.items_->items);
  if (!args.ok()) return args.status();
  request.args = *std::move(args);
  return request;
}

FilterResultWriter::FilterResultWriter(const FilterRequest& request)
    : request_(request), parts_(FilterParts::ForThisThread()) {}

void FilterResultWriter::Add(FitVerdict::Code code, std::string_view reason) {
  const std::vector<std::string>& names = request_.args.node_names;
  if (next_ < names.size()) parts_.Add(next_, names[next_], code, reason);
  passed_ += code == FitVerdict::Code::kFits ? 1 : 0;
  ++next_;
}

std::string FilterResultWriter::Finish() {
  const std::vector<element>& items = request_.items_->items;
  return JoinFilterResult(request_.args, parts_, [&](JsonWriter& w, size_t i) {
    if (i < items.size()) w.Raw(simdjson::minify(items[i]));
  });
}

namespace {

absl::StatusOr<std::vector<std::string>> DecodeVictimUids(
    element victims, const std::string& path, bool meta) {
  std::vector<std::string> uids;
  // A default dom::element points at no document: every test on it reads
  // through a null pointer (found by tests/fuzz/extender_fuzz, a victims
  // object without "Pods"), so `found` says whether `pods` was set.
  element pods;
  bool found = !victims.is_null() && !victims["Pods"].get(pods);
  if (!found || pods.is_null()) {
    found = false;
    // "Pods" may come with any casing; look it up the slow way.
    if (!victims.is_null() && victims.type() == element_type::OBJECT) {
      for (auto [key, value] : simdjson::dom::object(victims)) {
        if (KeyIs(key, "Pods")) {
          pods = value;
          found = true;
        }
      }
    }
    if (!found || pods.type() != element_type::ARRAY) return uids;
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
  FilterParts& parts = FilterParts::ForThisThread();
  // Passing names are matched to the candidates in order, as they were
  // asked; a name that is not among them is listed but has no item.
  size_t next = 0;
  for (const std::string& name : outcome.passed) {
    size_t at = next;
    while (at < args.node_names.size() && args.node_names[at] != name) ++at;
    if (at < args.node_names.size()) {
      parts.Add(at, name, FitVerdict::Code::kFits, {});
      next = at + 1;
    } else {
      parts.AddName(name);
    }
  }
  for (const auto& [name, reason] : outcome.failed) {
    parts.Add(0, name, FitVerdict::Code::kUnavailable, reason);
  }
  for (const auto& [name, reason] : outcome.unresolvable) {
    parts.Add(0, name, FitVerdict::Code::kInfeasible, reason);
  }
  return JoinFilterResult(args, parts, [&](JsonWriter& w, size_t i) {
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
