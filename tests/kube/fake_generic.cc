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

// A path under /apis/ as the API server routes it:
// <group>/<version>[/namespaces/<ns>]/<resource>[/<name>].
struct ResourcePath {
  std::string api;  // "group/version"
  std::string resource;
  std::string ns;    // empty on a path without /namespaces/<ns>/
  std::string name;  // empty for the collection
  std::string Kind() const { return api + "/" + resource; }
  std::string Key() const { return ns.empty() ? name : ns + "/" + name; }
};

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

// Nothing for a path of another shape (a subresource, /api/v1/...).
std::optional<ResourcePath> ParsePath(std::string_view path) {
  constexpr std::string_view kApis = "/apis/";
  if (!path.starts_with(kApis)) return std::nullopt;
  const std::vector<std::string> parts = Split(path.substr(kApis.size()));
  if (parts.size() < 3) return std::nullopt;
  ResourcePath out{.api = parts[0] + "/" + parts[1]};
  size_t at = 2;
  if (parts[2] == "namespaces" && parts.size() >= 5) {
    out.ns = parts[3];
    at = 4;
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
  if (!at || at->name.empty()) return std::nullopt;
  std::lock_guard lock(mu_);
  if (Find(served_, *at) == nullptr) return std::nullopt;
  // Tests write these objects with PutObject; clients only read them.
  if (request.method() != bhttp::verb::get) {
    return Reply{405, Status(405, "MethodNotAllowed", "method not allowed")};
  }
  ++counts_["GET " + at->resource];
  const Store& store = StoreOf(at->Kind());
  auto it = store.find(at->Key());
  if (it == store.end()) {
    return NotFound(at->resource + "." + GroupOf(at->api), at->name);
  }
  return Reply{200, it->second};
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
