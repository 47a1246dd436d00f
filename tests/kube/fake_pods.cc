// The fake API server's pods: GET, merge PATCH (main resource and status),
// pods/binding and pods/eviction, with the API server's preconditions and
// the pod update rules gpusched's admission relies on.
#include <algorithm>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/kube/fake_apiserver_impl.h"

namespace gpusched::kube::testing {
namespace {

constexpr char kRequired[] = "requiredDuringSchedulingIgnoredDuringExecution";
constexpr char kForbiddenUpdate[] =
    "spec: Forbidden: pod updates may not change fields other than "
    "`spec.containers[*].image`, `spec.initContainers[*].image`, "
    "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to "
    "existing tolerations), `spec.terminationGracePeriodSeconds` (allow it "
    "to be set to 1 if it was previously negative)";

bool IsPrefix(const Json& prefix, const Json& list) {
  if (prefix.is_null()) return true;
  if (!list.is_array() || list.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (prefix[i] != list[i]) return false;
  }
  return true;
}

// A gated pod's required node affinity may only gain requirements: the same
// number of terms, each old term's expressions and fields a prefix of the
// new term's.
bool OnlyNarrows(const Json& old_required, const Json& new_required) {
  if (old_required.is_null()) return true;
  const Json old_terms = At(old_required, "nodeSelectorTerms");
  const Json new_terms = At(new_required, "nodeSelectorTerms");
  if (!new_terms.is_array() || new_terms.size() != old_terms.size()) {
    return false;
  }
  for (size_t i = 0; i < old_terms.size(); ++i) {
    for (const char* list : {"matchExpressions", "matchFields"}) {
      if (!IsPrefix(At(old_terms[i], list), At(new_terms[i], list))) {
        return false;
      }
    }
  }
  return true;
}

std::optional<std::string> ForbiddenAffinityChange(const Json& old_spec,
                                                   const Json& new_spec) {
  Json old_affinity = At(old_spec, "affinity");
  Json new_affinity = At(new_spec, "affinity");
  if (old_affinity == new_affinity) return std::nullopt;
  if (At(old_spec, "schedulingGates").empty()) return kForbiddenUpdate;
  const Json old_required = At(At(old_affinity, "nodeAffinity"), kRequired);
  const Json new_required = At(At(new_affinity, "nodeAffinity"), kRequired);
  if (!OnlyNarrows(old_required, new_required)) {
    return std::string("spec.affinity.nodeAffinity.") + kRequired +
           ": Invalid value: only additions to the existing node selector "
           "terms are allowed (to enable pod scheduling)";
  }
  // Preferred node affinity may change freely; the rest may not.
  for (Json* affinity : {&old_affinity, &new_affinity}) {
    if (affinity->is_object()) affinity->erase("nodeAffinity");
  }
  if (old_affinity.empty() && new_affinity.empty()) return std::nullopt;
  if (old_affinity != new_affinity) return kForbiddenUpdate;
  return std::nullopt;
}

// As the API server's pod update validation, for what admission touches.
std::optional<std::string> ForbiddenPodUpdate(const Json& old_pod,
                                              const Json& new_pod) {
  const Json& old_spec = old_pod["spec"];
  const Json& new_spec = new_pod["spec"];
  const Json old_gates = At(old_spec, "schedulingGates");
  for (const Json& gate : At(new_spec, "schedulingGates")) {
    if (std::find(old_gates.begin(), old_gates.end(), gate) ==
        old_gates.end()) {
      return "spec.schedulingGates: Forbidden: only deletion is allowed, but "
             "found new scheduling gate '" +
             gate.value("name", "") + "'";
    }
  }
  if (auto why = ForbiddenAffinityChange(old_spec, new_spec)) return why;
  Json old_rest = old_spec, new_rest = new_spec;
  for (Json* rest : {&old_rest, &new_rest}) {
    rest->erase("schedulingGates");
    rest->erase("affinity");
  }
  if (old_rest != new_rest) return kForbiddenUpdate;
  return std::nullopt;
}

// The eviction storage's answer when a PodDisruptionBudget allows no
// disruption, word for word.
Reply BudgetRefusal(const std::string& budget) {
  Json status = Status(429, "TooManyRequests",
                       "Cannot evict pod as it would violate the pod's "
                       "disruption budget.");
  status["details"] = {
      {"causes",
       {{{"reason", "DisruptionBudget"},
         {"message", "The disruption budget " + budget +
                         " needs 1 healthy pods and has 1 currently"}}}}};
  return {429, status};
}

}  // namespace

Json At(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it == object.end() ? Json() : *it;
}

// A pod write is logged as it arrives and as it is answered, and waits
// pod_write_delay_ in between without the lock, so that writes overlap as
// they do on a real server.
Reply FakeApiServer::Impl::PodCall(const Request& request, std::string_view key,
                                   std::string_view subresource) {
  if (request.method() == bhttp::verb::get) {
    return AnswerPodCall(request, key, subresource);
  }
  const std::string write =
      absl::StrCat(std::string(request.method_string()), " ",
                   subresource.empty() ? "pod" : std::string(subresource), " ",
                   std::string(key));
  std::chrono::milliseconds delay;
  {
    std::lock_guard lock(mu_);
    pod_write_log_.push_back("begin " + write);
    delay = pod_write_delay_;
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  Reply reply = AnswerPodCall(request, key, subresource);
  std::lock_guard lock(mu_);
  pod_write_log_.push_back("end " + write);
  return reply;
}

void FakeApiServer::Impl::SetPodWriteDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  pod_write_delay_ = delay;
}

std::vector<std::string> FakeApiServer::Impl::PodWriteLog() const {
  std::lock_guard lock(mu_);
  return pod_write_log_;
}

Reply FakeApiServer::Impl::AnswerPodCall(const Request& request,
                                         std::string_view key,
                                         std::string_view subresource) {
  const bool get = request.method() == bhttp::verb::get && subresource.empty();
  const bool patch = request.method() == bhttp::verb::patch &&
                     (subresource.empty() || subresource == "status");
  const bool post = request.method() == bhttp::verb::post &&
                    (subresource == "binding" || subresource == "eviction");
  std::unique_lock lock(mu_);
  ++counts_[get     ? "GET pod"
            : patch ? (subresource.empty() ? "PATCH pod" : "PATCH pod/status")
            : post  ? "POST " + std::string(subresource)
                    : "OTHER"];
  if (!get && !patch && !post) {
    return {405, Status(405, "MethodNotAllowed", "method not allowed")};
  }
  auto it = pods_.find(key);
  if (it == pods_.end()) return NotFound("pods", key.substr(key.find('/') + 1));
  if (get) {
    Json pod = it->second;
    auto race = races_.find(key);
    if (race != races_.end() && race->second-- > 0) {
      Record("pods", "MODIFIED", it->second);  // another writer's update
    }
    return {200, pod};
  }
  if (auto denied = denied_.find(key);
      patch && subresource.empty() && denied != denied_.end()) {
    ++counts_["DENIED PATCH pod"];
    return {denied->second.first,
            Status(denied->second.first, "Invalid", denied->second.second)};
  }
  if (patch) return PatchPod(request, it->second, subresource == "status");
  if (subresource == "binding") return Bind(request, it->second);
  return Evict(request, key);
}

std::optional<Reply> FakeApiServer::Impl::Merge(const Request& request,
                                                const Json& stored,
                                                std::string_view resource,
                                                PatchScope scope,
                                                Json& next) const {
  if (request[bhttp::field::content_type] != "application/merge-patch+json") {
    return Reply{415, Status(415, "UnsupportedMediaType",
                             "the body of the request was in an unknown "
                             "format")};
  }
  Json patch = Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded() || !patch.is_object()) {
    return Reply{400, Status(400, "BadRequest", "invalid JSON in patch")};
  }
  const Json version = At(At(patch, "metadata"), "resourceVersion");
  if (version.is_string() && version != stored["metadata"]["resourceVersion"]) {
    return Reply{409, Status(409, "Conflict",
                             "Operation cannot be fulfilled on " +
                                 std::string(resource) + " \"" +
                                 stored["metadata"].value("name", "") +
                                 "\": the object has been modified; please "
                                 "apply your changes to the latest version "
                                 "and try again")};
  }
  next = stored;
  if (scope == PatchScope::kStatusOnly) {
    next.merge_patch(Json{{"status", At(patch, "status")}});
    if (next["status"].is_null()) next.erase("status");
    return std::nullopt;
  }
  if (scope == PatchScope::kAllButStatus) patch.erase("status");
  next.merge_patch(patch);
  return std::nullopt;
}

Reply FakeApiServer::Impl::PatchPod(const Request& request, Json& pod,
                                    bool status) {
  Json next;
  if (auto refused = Merge(
          request, pod, "pods",
          status ? PatchScope::kStatusOnly : PatchScope::kAllButStatus, next)) {
    return *refused;
  }
  if (auto why = ForbiddenPodUpdate(pod, next)) {
    return {422, Status(422, "Invalid",
                        "Pod \"" + pod["metadata"].value("name", "") +
                            "\" is invalid: " + *why)};
  }
  pod = std::move(next);
  Record("pods", "MODIFIED", pod);
  return {200, pod};
}

// As the registry's pod binding storage: UID precondition, then "already
// assigned" whatever the node, then spec.nodeName, with the Binding's own
// annotations merged into the pod's in the same write.
Reply FakeApiServer::Impl::Bind(const Request& request, Json& pod) {
  Json binding =
      Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (binding.is_discarded() || binding.value("kind", "") != "Binding") {
    return {400, Status(400, "BadRequest", "not a Binding")};
  }
  const std::string name = pod["metadata"]["name"];
  const std::string uid = binding["metadata"].value("uid", "");
  const std::string node = binding["target"].value("name", "");
  if (!uid.empty() && uid != pod["metadata"]["uid"]) {
    return {409, Status(409, "Conflict",
                        "Precondition failed: UID in precondition: " + uid +
                            ", UID in object meta: " +
                            pod["metadata"]["uid"].get<std::string>())};
  }
  // The registry's plain error, which the API server answers as a 500.
  if (!At(pod["spec"], "schedulingGates").empty()) {
    return {500,
            Status(500, "InternalError",
                   "pod " + name + " has non-empty .spec.schedulingGates")};
  }
  const std::string bound = pod["spec"].value("nodeName", "");
  if (!bound.empty()) {
    return {409, Status(409, "Conflict",
                        "Operation cannot be fulfilled on pods/binding \"" +
                            name + "\": pod " + name +
                            " is already assigned to node \"" + bound + "\"")};
  }
  pod["spec"]["nodeName"] = node;
  if (binding["metadata"].contains("annotations")) {
    for (const auto& [key, value] :
         binding["metadata"]["annotations"].items()) {
      pod["metadata"]["annotations"][key] = value;
    }
  }
  Record("pods", "MODIFIED", pod);
  return {201, Json{{"kind", "Status"}, {"status", "Success"}, {"code", 201}}};
}

// As the eviction REST storage: a policy/v1 Eviction naming the pod of the
// URL; the UID and resourceVersion preconditions; the disruption budget;
// then the deletion.
Reply FakeApiServer::Impl::Evict(const Request& request, std::string_view key) {
  Json eviction =
      Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  const std::string name(key.substr(key.find('/') + 1));
  if (eviction.is_discarded() || eviction.value("kind", "") != "Eviction" ||
      eviction.value("apiVersion", "") != "policy/v1") {
    return {400, Status(400, "BadRequest", "not a policy/v1 Eviction")};
  }
  if (At(At(eviction, "metadata"), "name") != name) {
    return {400, Status(400, "BadRequest",
                        "name in URL does not match name in Eviction object")};
  }
  const Json& pod = pods_.find(key)->second;
  const Json uid =
      At(At(At(eviction, "deleteOptions"), "preconditions"), "uid");
  if (uid.is_string() && uid != pod["metadata"]["uid"]) {
    return {409, Status(409, "Conflict",
                        "Operation cannot be fulfilled on Pod \"" + name +
                            "\": Precondition failed: UID in precondition: " +
                            uid.get<std::string>() + ", UID in object meta: " +
                            pod["metadata"].value("uid", ""))};
  }
  const Json version =
      At(At(At(eviction, "deleteOptions"), "preconditions"), "resourceVersion");
  if (version.is_string() && version != pod["metadata"]["resourceVersion"]) {
    return {409, Status(409, "Conflict",
                        "Operation cannot be fulfilled on Pod \"" + name +
                            "\": Precondition failed: ResourceVersion in "
                            "precondition: " +
                            version.get<std::string>() +
                            ", ResourceVersion in object meta: " +
                            pod["metadata"].value("resourceVersion", ""))};
  }
  if (auto block = eviction_blocks_.find(key);
      block != eviction_blocks_.end()) {
    return BudgetRefusal(block->second.get<std::string>());
  }
  Json deleted = pod;
  pods_.erase(pods_.find(key));
  Record("pods", "DELETED", deleted);
  return {201, Json{{"kind", "Status"},
                    {"apiVersion", "v1"},
                    {"status", "Success"},
                    {"code", 201}}};
}

void FakeApiServer::Impl::BlockEvictions(std::string_view key,
                                         std::string_view budget) {
  std::lock_guard lock(mu_);
  eviction_blocks_[std::string(key)] = budget;
}

void FakeApiServer::Impl::DenyPodUpdates(std::string_view key, int status,
                                         std::string_view message) {
  std::lock_guard lock(mu_);
  denied_[std::string(key)] = {status, std::string(message)};
}

void FakeApiServer::Impl::RaceNextGets(std::string_view key, int gets) {
  std::lock_guard lock(mu_);
  races_[std::string(key)] = gets;
}

}  // namespace gpusched::kube::testing
