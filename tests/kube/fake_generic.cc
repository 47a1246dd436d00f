// The fake API server's built-in APIs served on request (ServeResource),
// such as Dynamic Resource Allocation's resource.k8s.io/v1. Each resource
// is one more store, keyed "group/version/resource": its lists, watches,
// paging and 410s are fake_apiserver.cc's, as for nodes and pods; this file
// routes paths to it, answers GETs of one object and keeps the objects.
#include <cctype>
#include <string>
#include <vector>

#include "tests/kube/fake_apiserver_impl.h"

namespace gpusched::kube::testing {
namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    parts.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

// Nothing for a path of another shape (a subresource, pods and nodes).
// The core API's served resources (/api/v1/..., such as podtemplates)
// have api "v1".
std::optional<ResourcePath> ParsePath(std::string_view path) {
  constexpr std::string_view kApis = "/apis/";
  constexpr std::string_view kCore = "/api/v1/";
  ResourcePath out;
  std::vector<std::string> parts;
  size_t at = 0;
  if (path.starts_with(kCore)) {
    parts = Split(path.substr(kCore.size()));
    out.api = "v1";
  } else if (path.starts_with(kApis)) {
    parts = Split(path.substr(kApis.size()));
    if (parts.size() < 3) return std::nullopt;
    out.api = parts[0] + "/" + parts[1];
    at = 2;
  } else {
    return std::nullopt;
  }
  if (parts.size() < at + 1) return std::nullopt;
  if (parts[at] == "namespaces" && parts.size() >= at + 3) {
    out.ns = parts[at + 1];
    at += 2;
  }
  if (parts.size() > at + 2) return std::nullopt;
  out.resource = parts[at];
  if (parts.size() == at + 2) out.name = parts[at + 1];
  return out;
}

std::string GroupOf(std::string_view api) {
  return std::string(api.substr(0, api.find('/')));
}

// The served resource behind `at`, or null. A cluster-scoped resource has
// no paths under /namespaces/<ns>/, and one object of a namespaced
// resource is only found in its namespace, as on the real server.
const ServedResource* Find(const ServedResources& served,
                           const ResourcePath& at) {
  auto it = served.find(at.Kind());
  if (it == served.end()) return nullptr;
  const bool in_namespace = !at.ns.empty();
  if (in_namespace && !it->second.namespaced) return nullptr;
  if (!at.name.empty() && in_namespace != it->second.namespaced) {
    return nullptr;
  }
  return &it->second;
}

// "resourceslices" -> "Resourceslice": a guess when ServeResource is given
// no kind (the real Kind has inner capitals the plural has lost).
std::string KindFromPlural(std::string_view resource) {
  std::string kind(resource);
  if (kind.ends_with('s')) kind.pop_back();
  if (!kind.empty()) kind[0] = static_cast<char>(std::toupper(kind[0]));
  return kind;
}

}  // namespace

std::optional<Scope> FakeApiServer::Impl::ResourceScope(std::string_view path,
                                                        const Query& query) {
  const std::optional<ResourcePath> at = ParsePath(path);
  if (!at || !at->name.empty()) return std::nullopt;
  std::lock_guard lock(mu_);
  if (Find(served_, *at) == nullptr) return std::nullopt;
  Scope scope{.kind = at->Kind(),
              .api_version = at->api,
              .ns = at->ns,
              .name = SelectedName(query)};
  scope.refused = ForbiddenLocked(at->resource, GroupOf(at->api), at->ns);
  return scope;
}

std::optional<Reply> FakeApiServer::Impl::ResourceCall(const Request& request,
                                                       std::string_view path) {
  const std::optional<ResourcePath> at = ParsePath(path);
  if (!at) return std::nullopt;
  {
    std::lock_guard lock(mu_);
    if (Find(served_, *at) == nullptr) return std::nullopt;
  }
  const bhttp::verb method = request.method();
  if (at->name.empty()) {
    if (method != bhttp::verb::post) return std::nullopt;  // lists: List
    return CreateResource(*at, request.body());
  }
  if (method == bhttp::verb::delete_) return DeleteResource(*at);
  if (method != bhttp::verb::get) {
    return Reply{405, Status(405, "MethodNotAllowed", "method not allowed")};
  }
  std::lock_guard lock(mu_);
  ++counts_["GET " + at->resource];
  const Store& store = StoreOf(at->Kind());
  auto it = store.find(at->Key());
  if (it == store.end()) {
    return NotFound(at->resource + "." + GroupOf(at->api), at->name);
  }
  return Reply{200, it->second};
}

// A create (POST to the collection): 409 AlreadyExists when the name is
// taken, as the API server answers.
Reply FakeApiServer::Impl::CreateResource(const ResourcePath& at,
                                          std::string_view body) {
  Json object = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object() || !object["metadata"].contains("name")) {
    return {400, Status(400, "BadRequest", "no metadata.name")};
  }
  if (!at.ns.empty()) object["metadata"]["namespace"] = at.ns;
  const std::string name = object["metadata"]["name"];
  const std::string key = at.ns.empty() ? name : at.ns + "/" + name;
  {
    std::lock_guard lock(mu_);
    ++counts_["CREATE " + at.resource];
    if (StoreOf(at.Kind()).contains(key)) {
      return {409, Status(409, "AlreadyExists",
                          at.resource + " \"" + name + "\" already exists")};
    }
  }
  PutObject(at.api, at.resource, object);
  return {201, Get(at.Kind(), key)};
}

Reply FakeApiServer::Impl::DeleteResource(const ResourcePath& at) {
  {
    std::lock_guard lock(mu_);
    ++counts_["DELETE " + at.resource];
    if (!StoreOf(at.Kind()).contains(at.Key())) {
      return NotFound(at.resource + "." + GroupOf(at.api), at.name);
    }
  }
  Erase(at.Kind(), at.Key(), /*watched=*/true);
  return {200, Status(200, "Success", "deleted")};
}

std::optional<Reply> FakeApiServer::Impl::ForbiddenLocked(
    std::string_view resource, std::string_view group, std::string_view ns) {
  if (!forbidden_.contains(resource)) return std::nullopt;
  const std::string name(resource);
  ++counts_["FORBIDDEN " + name];
  const std::string where =
      ns.empty() ? "at the cluster scope"
                 : "in the namespace \"" + std::string(ns) + "\"";
  return Reply{403, Status(403, "Forbidden",
                           name + "." + std::string(group) +
                               " is forbidden: User cannot list resource \"" +
                               name + "\" in API group \"" +
                               std::string(group) + "\" " + where)};
}

void FakeApiServer::Impl::ServeResource(std::string_view group_version,
                                        std::string_view resource,
                                        bool namespaced,
                                        std::string_view kind) {
  std::lock_guard lock(mu_);
  served_[std::string(group_version) + "/" + std::string(resource)] =
      ServedResource{
          .namespaced = namespaced,
          .kind = kind.empty() ? KindFromPlural(resource) : std::string(kind)};
}

// Sets what the server sets: apiVersion, a Kind when missing, and a uid
// on create (a replacement keeps the stored uid, as an update does).
void FakeApiServer::Impl::PutObject(std::string_view group_version,
                                    std::string_view resource, Json object) {
  const std::string kind =
      std::string(group_version) + "/" + std::string(resource);
  Json& metadata = object["metadata"];
  const std::string ns = metadata.value("namespace", "");
  const std::string name = metadata.value("name", "");
  const std::string key = ns.empty() ? name : ns + "/" + name;
  object["apiVersion"] = group_version;
  std::lock_guard lock(mu_);
  auto served = served_.find(kind);
  if (served != served_.end() && !object.contains("kind")) {
    object["kind"] = served->second.kind;
  }
  if (!metadata.contains("uid")) {
    const Store& store = StoreOf(kind);
    auto stored = store.find(key);
    metadata["uid"] = stored != store.end()
                          ? stored->second["metadata"]["uid"]
                          : Json(std::string(resource) + "-uid-" +
                                 std::to_string(version_ + 1));
  }
  UpsertLocked(kind, key, std::move(object));
}

void FakeApiServer::Impl::CompactHistory() {
  std::lock_guard lock(mu_);
  CompactLocked();
}

void FakeApiServer::Impl::Forbid(std::string_view resource) {
  std::lock_guard lock(mu_);
  forbidden_.emplace(resource);
}

void FakeApiServer::ServeResource(std::string_view group_version,
                                  std::string_view resource, bool namespaced,
                                  std::string_view kind) {
  impl_->ServeResource(group_version, resource, namespaced, kind);
}

void FakeApiServer::ServeDra() {
  constexpr std::string_view kDra = "resource.k8s.io/v1";
  ServeResource(kDra, "resourceslices", false, "ResourceSlice");
  ServeResource(kDra, "deviceclasses", false, "DeviceClass");
  ServeResource(kDra, "devicetaintrules", false, "DeviceTaintRule");
  ServeResource(kDra, "resourceclaims", true, "ResourceClaim");
  ServeResource(kDra, "resourceclaimtemplates", true, "ResourceClaimTemplate");
}

void FakeApiServer::PutObject(std::string_view group_version,
                              std::string_view resource, Json object) {
  impl_->PutObject(group_version, resource, std::move(object));
}

void FakeApiServer::DeleteObject(std::string_view group_version,
                                 std::string_view resource,
                                 std::string_view key) {
  impl_->Erase(std::string(group_version) + "/" + std::string(resource), key,
               /*watched=*/true);
}

Json FakeApiServer::Object(std::string_view group_version,
                           std::string_view resource,
                           std::string_view key) const {
  return impl_->Get(std::string(group_version) + "/" + std::string(resource),
                    key);
}

void FakeApiServer::CompactHistory() { impl_->CompactHistory(); }

void FakeApiServer::ForbidResource(std::string_view resource) {
  impl_->Forbid(resource);
}

}  // namespace gpusched::kube::testing
