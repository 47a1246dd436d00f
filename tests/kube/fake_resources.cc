// The fake API server's Events (events.k8s.io/v1) and PodGroups (Volcano's
// and coscheduling's CRDs, and the built-in scheduling.k8s.io/v1beta1).
#include <algorithm>
#include <regex>
#include <string>

#include "tests/kube/fake_apiserver_impl.h"

namespace gpusched::kube::testing {
namespace {

// The PodGroup APIs served: API group and version, and whether it has a
// status subresource.
struct PodGroupApi {
  std::string_view api;
  bool status_subresource;
};
constexpr PodGroupApi kCrds[] = {
    {"scheduling.volcano.sh/v1beta1", false},
    {"scheduling.x-k8s.io/v1alpha1", true},
    {kNativePodGroupApi, true},  // built in, no CRD
};

const PodGroupApi* FindCrd(std::string_view api) {
  for (const PodGroupApi& known : kCrds) {
    if (known.api == api) return &known;
  }
  return nullptr;
}

Reply Invalid(std::string_view field, std::string_view what) {
  return {422, Status(422, "Invalid",
                      "Event.events.k8s.io \"\" is invalid: " +
                          std::string(field) + ": " + std::string(what))};
}

std::string Text(const Json& object, std::string_view pointer) {
  const Json::json_pointer at{std::string(pointer)};
  return object.contains(at) && object[at].is_string()
             ? object[at].get<std::string>()
             : "";
}

// A lowercase RFC 1123 subdomain, as object names must be.
bool IsDnsSubdomain(const std::string& name) {
  static const std::regex kSubdomain(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return name.size() <= 253 && std::regex_match(name, kSubdomain);
}

// The checks of the events.k8s.io/v1 validation that a writer can fail.
std::optional<Reply> CheckEvent(const Json& event, std::string_view ns) {
  if (Text(event, "/metadata/namespace") != ns) {
    return Reply{400, Status(400, "BadRequest",
                             "the namespace of the provided object does not "
                             "match the namespace sent on the request")};
  }
  for (const char* field : {"eventTime", "reportingController",
                            "reportingInstance", "action", "reason"}) {
    if (Text(event, std::string("/") + field).empty()) {
      return Invalid(field, "Required value");
    }
  }
  const std::string type = Text(event, "/type");
  if (type != "Normal" && type != "Warning") {
    return Invalid("type", "Unsupported value: \"" + type + "\"");
  }
  if (Text(event, "/note").size() > 1024) {
    return Invalid("note", "Too long: may not be longer than 1024");
  }
  const std::string regarding_ns = Text(event, "/regarding/namespace");
  if (!regarding_ns.empty() && regarding_ns != ns) {
    return Invalid("regarding.namespace", "does not match event.namespace");
  }
  if (Text(event, "/metadata/name").empty() &&
      Text(event, "/metadata/generateName").empty()) {
    return Invalid("metadata.name",
                   "Required value: name or generateName is required");
  }
  // As the API server validates them: a DNS subdomain; a generateName may
  // end in '-' only (the random suffix follows it).
  std::string generate = Text(event, "/metadata/generateName");
  if (!generate.empty() && generate.back() == '-') generate.back() = 'a';
  if (!generate.empty() && !IsDnsSubdomain(generate)) {
    return Invalid("metadata.generateName",
                   "Invalid value: a lowercase RFC 1123 subdomain must end "
                   "with an alphanumeric character");
  }
  const std::string name = Text(event, "/metadata/name");
  if (!name.empty() && !IsDnsSubdomain(name)) {
    return Invalid("metadata.name",
                   "Invalid value: a lowercase RFC 1123 subdomain");
  }
  return std::nullopt;
}

}  // namespace

Reply FakeApiServer::Impl::CreateEvent(const Request& request,
                                       std::string_view ns) {
  std::unique_lock lock(mu_);
  ++counts_["POST event"];
  if (event_delay_.count() > 0) {
    changed_.wait_for(lock, event_delay_, [this] { return stopping_; });
  }
  Json event = Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded() || event.value("kind", "") != "Event" ||
      event.value("apiVersion", "") != "events.k8s.io/v1") {
    return {400, Status(400, "BadRequest", "not an events.k8s.io/v1 Event")};
  }
  if (auto refused = CheckEvent(event, ns)) return *refused;
  Json& meta = event["metadata"];
  if (Text(event, "/metadata/name").empty()) {
    meta["name"] = Text(event, "/metadata/generateName") +
                   std::to_string(10000 + created_events_.size());
  }
  meta["uid"] = "event-uid-" + std::to_string(created_events_.size());
  meta["resourceVersion"] = std::to_string(++version_);
  created_events_.push_back(event);
  return {201, event};
}

std::vector<Json> FakeApiServer::Impl::Events() const {
  std::lock_guard lock(mu_);
  return created_events_;
}

void FakeApiServer::Impl::SetEventDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  event_delay_ = delay;
}

// `api` is "group/version"; `rest` is "namespace/podgroups/name[/status]".
Reply FakeApiServer::Impl::PodGroupCall(const Request& request,
                                        std::string_view api,
                                        std::string_view rest) {
  const PodGroupApi* crd = FindCrd(api);
  const size_t at = rest.find("/podgroups/");
  std::string_view name = rest.substr(at + 11);
  const bool status = name.ends_with("/status");
  if (status) name.remove_suffix(7);
  const bool get = request.method() == bhttp::verb::get && !status;
  const bool patch = request.method() == bhttp::verb::patch;
  std::lock_guard lock(mu_);
  ++counts_[get     ? "GET podgroup"
            : patch ? (status ? "PATCH podgroup/status" : "PATCH podgroup")
                    : "OTHER"];
  const bool native = api == kNativePodGroupApi;
  if (crd == nullptr || name.find('/') != std::string_view::npos ||
      (status && !crd->status_subresource) || (native && !native_podgroups_)) {
    return {404, Status(404, "NotFound",
                        "the server could not find the requested resource")};
  }
  if (!get && !patch) {
    return {405, Status(405, "MethodNotAllowed", "method not allowed")};
  }
  const std::string group(api.substr(0, api.find('/')));
  const std::string key =
      group + "/" + std::string(rest.substr(0, at)) + "/" + std::string(name);
  auto it = podgroups_.find(key);
  if (it == podgroups_.end()) return NotFound("podgroups." + group, name);
  if (get) return {200, it->second};
  const PatchScope scope = status                    ? PatchScope::kStatusOnly
                           : crd->status_subresource ? PatchScope::kAllButStatus
                                                     : PatchScope::kAll;
  Json next;
  std::optional<Reply> refused =
      native && status
          ? PatchNativeStatus(request, it->second, next)
          : Merge(request, it->second, "podgroups." + group, scope, next);
  if (refused) return *refused;
  it->second = std::move(next);
  Record("podgroups", "MODIFIED", it->second);
  return {200, it->second};
}

// As the API server's strategic merge for PodGroupStatus (conditions:
// patchMergeKey type): each condition of the patch replaces the stored one
// of its type or is added; the other conditions stay. A merge patch goes
// through Merge and replaces the list whole, as on the real server.
std::optional<Reply> FakeApiServer::Impl::PatchNativeStatus(
    const Request& request, const Json& stored, Json& next) const {
  if (request[bhttp::field::content_type] !=
      "application/strategic-merge-patch+json") {
    return Merge(request, stored, "podgroups.scheduling.k8s.io",
                 PatchScope::kStatusOnly, next);
  }
  Json patch = Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded() || !patch.is_object()) {
    return Reply{400, Status(400, "BadRequest", "invalid JSON in patch")};
  }
  next = stored;
  Json status = At(patch, "status");
  Json conditions = At(status, "conditions");
  if (status.is_object()) status.erase("conditions");
  next["status"].merge_patch(status);
  if (!conditions.is_array()) return std::nullopt;
  Json& kept = next["status"]["conditions"];
  if (!kept.is_array()) kept = Json::array();
  for (const Json& condition : conditions) {
    auto same = std::find_if(kept.begin(), kept.end(), [&](const Json& c) {
      return c.value("type", "") == condition.value("type", "");
    });
    if (same != kept.end()) {
      *same = condition;
    } else {
      kept.push_back(condition);
    }
  }
  return std::nullopt;
}

}  // namespace gpusched::kube::testing
