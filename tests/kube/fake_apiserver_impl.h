// The fake API server's insides, shared by its source files:
// fake_apiserver.cc (connections, routing, list and watch), fake_pods.cc
// (pod GET/PATCH, binding, eviction), fake_resources.cc (Events and
// PodGroups), fake_crds.cc (CRDs, and which PodGroup APIs they serve) and
// fake_generic.cc (the built-in APIs served on request, such as DRA's).
// Internal to the tests.
#ifndef GPUSCHED_TESTS_KUBE_FAKE_APISERVER_IMPL_H_
#define GPUSCHED_TESTS_KUBE_FAKE_APISERVER_IMPL_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {

namespace bhttp = boost::beast::http;
using Request = bhttp::request<bhttp::string_body>;
using Query = std::map<std::string, std::string, std::less<>>;
using Store = std::map<std::string, Json, std::less<>>;

struct Reply {
  int status = 200;
  Json body;
};

// A Kubernetes Status object for an error answer.
// A path as the API server routes it: /apis/<group>/<version> or
// /api/v1[/namespaces/<ns>]/<resource>[/<name>].
struct ResourcePath {
  std::string api;  // "group/version"
  std::string resource;
  std::string ns;    // empty on a path without /namespaces/<ns>/
  std::string name;  // empty for the collection
  std::string Kind() const { return api + "/" + resource; }
  std::string Key() const { return ns.empty() ? name : ns + "/" + name; }
};

Json Status(int code, std::string_view reason, std::string_view message);
// 404 for a named object: `resource "name" not found`.
Reply NotFound(std::string_view resource, std::string_view name);

// The value of the field selector metadata.name=..., if there is one.
std::string SelectedName(const Query& query);

// What a list or a watch covers: the objects of a store's kind, narrowed
// to one API version (the PodGroups of one CRD), to one namespace or to
// one name (the field selector metadata.name=...). `refused` answers
// instead (403, 404).
struct Scope {
  // nodes | pods | podgroups | customresourcedefinitions, or a served
  // resource's "group/version/resource" (fake_generic.cc).
  std::string kind;
  std::string api_version;
  std::string ns;
  std::string name;
  std::optional<Reply> refused;
  bool Covers(std::string_view event_kind, const Json& object) const;
  // The resource's plural ("pods", "resourceslices"), for Count.
  std::string_view Resource() const;
};

// A resource ServeResource serves, and what its objects are.
struct ServedResource {
  bool namespaced = false;
  std::string kind;  // "ResourceSlice"
};
// By "group/version/resource".
using ServedResources = std::map<std::string, ServedResource, std::less<>>;

// Kubernetes' own PodGroup API, built in: served without a CRD, when the
// test says (ServeNativePodGroups), as kube-apiserver serves it only with
// its runtime-config and feature gate.
inline constexpr std::string_view kNativePodGroupApi =
    "scheduling.k8s.io/v1beta1";

// The member `key` of `object`, or null (fake_pods.cc).
Json At(const Json& object, std::string_view key);

// Which part of an object a merge patch may change: the main resource of
// a kind with a status subresource ignores status, the subresource
// changes only status, a kind without one takes everything.
enum class PatchScope { kAllButStatus, kStatusOnly, kAll };

class FakeApiServer::Impl {
 public:
  explicit Impl(FakeApiServerOptions options);
  ~Impl() { Shutdown(); }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  const FakeApiServerOptions& options() const { return options_; }

  void Put(const std::string& kind, const std::string& key, Json object,
           std::string_view type);
  void Erase(const std::string& kind, std::string_view key, bool watched);
  void Edit(std::string_view key, const std::function<void(Json&)>& edit);
  Json Get(std::string_view kind, std::string_view key) const;
  int Count(std::string_view what) const;

  // Test hooks (fake_pods.cc, fake_resources.cc).
  void BlockEvictions(std::string_view key, std::string_view budget);
  void DenyPodUpdates(std::string_view key, int status,
                      std::string_view message);
  void RaceNextGets(std::string_view key, int gets);
  std::vector<Json> Events() const;
  void SetEventDelay(std::chrono::milliseconds delay);
  void SetPodWriteDelay(std::chrono::milliseconds delay);
  std::vector<std::string> PodWriteLog() const;
  void FailNext(int requests, int status);
  void SetReply(std::string_view path, int status, Json body);
  // fake_crds.cc
  void PutCrd(Json crd);
  void DeleteCrd(std::string_view name);
  void ServeNativePodGroups(bool served);
  // fake_generic.cc
  void ServeResource(std::string_view group_version, std::string_view resource,
                     bool namespaced, std::string_view kind);
  void PutObject(std::string_view group_version, std::string_view resource,
                 Json object);
  void CompactHistory();
  void Forbid(std::string_view resource);

 private:
  // A Reply for the request when FailNext still holds one back.
  std::optional<Reply> Failing();
  // The reply SetReply gave `path` for a GET, if any.
  std::optional<Reply> Canned(const Request& request, std::string_view path);
  Store& StoreOf(std::string_view kind);
  const Store& StoreOf(std::string_view kind) const;
  void Record(std::string_view kind, std::string_view type, Json& object);
  void AcceptLoop();
  void Serve(boost::asio::ip::tcp::socket socket);
  bool Handle(boost::asio::ip::tcp::socket& socket, const Request& request);
  Reply Route(const Request& request, std::string_view path,
              const Query& query);
  // The collection a GET of `path` lists or watches; nullopt if none.
  std::optional<Scope> CollectionOf(std::string_view path, const Query& query);
  Reply List(const Scope& scope, const Query& query);
  void Watch(boost::asio::ip::tcp::socket& socket, const Scope& scope,
             const Query& query);
  std::vector<std::string> PendingLocked(const Scope& scope,
                                         int64_t& sent) const;
  // The Kind of a scope's objects, for lists and bookmarks.
  std::string KindOfLocked(const Scope& scope) const;
  // Stores `object` under `key`: an ADDED event, or MODIFIED if replaced.
  void UpsertLocked(const std::string& kind, const std::string& key,
                    Json object);
  // Forgets the watch history: watches from before now get a 410.
  void CompactLocked();
  // A 403 for a list or watch of `resource` while it is forbidden.
  std::optional<Reply> ForbiddenLocked(std::string_view resource,
                                       std::string_view group,
                                       std::string_view ns);
  void Shutdown();

  // fake_pods.cc
  Reply PodCall(const Request& request, std::string_view key,
                std::string_view subresource);
  Reply AnswerPodCall(const Request& request, std::string_view key,
                      std::string_view subresource);
  Reply PatchPod(const Request& request, Json& pod, bool status);
  Reply Bind(const Request& request, Json& pod);
  Reply Evict(const Request& request, std::string_view key);
  // The patched object, or the error answer; checks the content type and
  // the resourceVersion precondition.
  std::optional<Reply> Merge(const Request& request, const Json& stored,
                             std::string_view resource, PatchScope scope,
                             Json& next) const;

  // fake_resources.cc
  Reply CreateEvent(const Request& request, std::string_view ns);
  Reply PodGroupCall(const Request& request, std::string_view api,
                     std::string_view rest);
  // A native PodGroup's status patch: a strategic merge keys conditions
  // by type; a merge patch replaces them. The patched object, or the
  // error answer.
  std::optional<Reply> PatchNativeStatus(const Request& request,
                                         const Json& stored, Json& next) const;

  // fake_crds.cc: the scope of a CRD list (403 while forbidden), and of a
  // PodGroup API's list (404 unless its CRD is Established and serves the
  // version; `api` is "group/version").
  Scope CrdScope(const Query& query);
  Scope PodGroupScope(std::string_view api);

  // fake_generic.cc: the scope of a served resource's list, and a GET of
  // one of its objects; nullopt when `path` names no served resource.
  std::optional<Scope> ResourceScope(std::string_view path, const Query& query);
  Reply CreateResource(const ResourcePath& at, std::string_view body);
  Reply DeleteResource(const ResourcePath& at);
  std::optional<Reply> ResourceCall(const Request& request,
                                    std::string_view path);

  const FakeApiServerOptions options_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread accept_thread_;

  struct Event {
    int64_t version;
    std::string kind;  // a Scope's kind
    std::string type;
    Json object;
  };

  mutable std::mutex mu_;
  std::condition_variable changed_;
  Store nodes_, pods_;
  Store podgroups_;  // "group/namespace/name"
  Store crds_;       // by name
  ServedResources served_;
  // Objects of the served resources, by "group/version/resource", then by
  // "namespace/name" or "name".
  std::map<std::string, Store, std::less<>> objects_;
  std::set<std::string, std::less<>> forbidden_;  // resources, as "pods"
  std::vector<Json> created_events_;
  Store eviction_blocks_;                          // pod key -> budget name
  std::map<std::string, int, std::less<>> races_;  // pod key -> GETs left
  // pod key -> (status, message) every PATCH of it is denied with
  std::map<std::string, std::pair<int, std::string>, std::less<>> denied_;
  std::chrono::milliseconds event_delay_{0};
  std::chrono::milliseconds pod_write_delay_{0};
  std::vector<std::string> pod_write_log_;
  std::map<std::string, Reply, std::less<>> canned_;  // by path
  int fail_next_ = 0;
  int fail_status_ = 503;
  int64_t version_ = 1;
  int64_t compacted_ = 0;  // watches from an older version get a 410
  std::deque<Event> events_;
  std::map<std::string, int, std::less<>> counts_;
  bool stopping_ = false;
  bool native_podgroups_ = false;  // scheduling.k8s.io/v1beta1 served
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
};

}  // namespace gpusched::kube::testing

#endif  // GPUSCHED_TESTS_KUBE_FAKE_APISERVER_IMPL_H_
