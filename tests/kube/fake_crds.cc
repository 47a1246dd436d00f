// The fake API server's CustomResourceDefinitions, and which PodGroup APIs
// they serve.
#include <string>

#include "tests/codec/crd_objects.h"
#include "tests/kube/fake_apiserver_impl.h"

namespace gpusched::kube::testing {
namespace {

constexpr std::string_view kCrdKind = "customresourcedefinitions";

bool ServesVersion(const Json& crd, std::string_view version) {
  const Json::json_pointer at("/spec/versions");
  if (!crd.contains(at) || !crd[at].is_array()) return false;
  for (const Json& entry : crd[at]) {
    if (entry.is_object() && entry.contains("name") &&
        entry["name"] == version && entry.contains("served") &&
        entry["served"] == true) {
      return true;
    }
  }
  return false;
}

bool IsEstablished(const Json& crd) {
  const Json::json_pointer at("/status/conditions");
  if (!crd.contains(at) || !crd[at].is_array()) return false;
  for (const Json& condition : crd[at]) {
    if (condition.is_object() && condition.contains("type") &&
        condition["type"] == "Established" && condition.contains("status") &&
        condition["status"] == "True") {
      return true;
    }
  }
  return false;
}

}  // namespace

Scope FakeApiServer::Impl::CrdScope(const Query& query) {
  Scope scope{.kind = std::string(kCrdKind), .name = SelectedName(query)};
  std::lock_guard lock(mu_);
  scope.refused = ForbiddenLocked(kCrdKind, "apiextensions.k8s.io", "");
  return scope;
}

Scope FakeApiServer::Impl::PodGroupScope(std::string_view api) {
  Scope scope{.kind = "podgroups", .api_version = std::string(api)};
  const size_t slash = api.find('/');
  const std::string group(api.substr(0, slash));
  std::lock_guard lock(mu_);
  auto it = crds_.find("podgroups." + group);
  const bool served =
      api == kNativePodGroupApi
          ? native_podgroups_
          : slash != std::string_view::npos && it != crds_.end() &&
                IsEstablished(it->second) &&
                ServesVersion(it->second, api.substr(slash + 1));
  if (!served) {
    ++counts_["NOT FOUND podgroups"];
    scope.refused = Reply{404, Status(404, "NotFound",
                                      "the server could not find the "
                                      "requested resource")};
  }
  return scope;
}

void FakeApiServer::Impl::PutCrd(Json crd) {
  std::lock_guard lock(mu_);
  const std::string name = crd["metadata"]["name"];
  UpsertLocked(std::string(kCrdKind), name, std::move(crd));
}

void FakeApiServer::Impl::DeleteCrd(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = crds_.find(name);
  if (it == crds_.end()) return;
  Json crd = std::move(it->second);
  crds_.erase(it);
  const std::string prefix = crd["spec"].value("group", "") + "/";
  std::erase_if(podgroups_, [&](const auto& entry) {
    return entry.first.starts_with(prefix);
  });
  Record(std::string(kCrdKind), "DELETED", crd);
}

void FakeApiServer::Impl::ServeNativePodGroups(bool served) {
  std::lock_guard lock(mu_);
  native_podgroups_ = served;
}

void FakeApiServer::PutCrd(Json crd) { impl_->PutCrd(std::move(crd)); }

void FakeApiServer::ServeNativePodGroups(bool served) {
  impl_->ServeNativePodGroups(served);
}

void FakeApiServer::DeleteCrd(std::string_view name) { impl_->DeleteCrd(name); }

void FakeApiServer::ForbidCrds() { impl_->Forbid(kCrdKind); }

Json PodGroupCrd(std::string_view group, std::string_view version,
                 bool established) {
  return gpusched::testing::PodGroupCrdObject(group, version, established);
}

}  // namespace gpusched::kube::testing
