// A small, faithful stand-in for the Kubernetes API server: nodes and pods in
// memory, list with limit/continue, watch as a chunked stream of
// newline-delimited events, merge-patch, pods/binding, bearer tokens.
//
// Built on Beast directly rather than http::Server because the client under
// test must see what a real API server sends: an Authorization header to
// check, and watch bodies that stream (chunked) while the connection stays
// open, which a whole-response server cannot produce.
//
// Also: pods/status, pods/eviction (policy/v1), events.k8s.io/v1 Events,
// the two PodGroup CRDs (Volcano's and coscheduling's), the built-in
// PodGroup API (scheduling.k8s.io/v1beta1, ServeNativePodGroups) and
// CustomResourceDefinitions themselves (list and watch, with the field
// selector metadata.name=...).
//
// Faithful details: every change bumps a global resourceVersion; a watch
// from a compacted version answers 200 with an ERROR event carrying a 410
// Status (as the real server does); a watch stays open for `watch_hold` and
// then ends with a BOOKMARK (real servers end watches on timeoutSeconds);
// binding an already bound pod is a 409 whatever the node. A merge patch
// that carries metadata.resourceVersion is refused with 409 unless it is
// the stored one; a pod's main resource ignores status and its status
// subresource changes only status; pod updates follow the API server's
// validation: scheduling gates may only be removed, and spec.affinity may
// change only while the pod is gated, its required node affinity only by
// appending requirements to each existing term (422 otherwise). Eviction
// honours the UID precondition (409) and deletes the pod at once (no grace
// period). Events are validated as events.k8s.io/v1 requires and named
// from generateName. Volcano's PodGroup CRD has no status subresource
// (.../status is a 404, the main resource takes status); coscheduling's
// has one. A PodGroup API is listed and watched
// (/apis/<group>/<version>/podgroups) only while a CRD
// podgroups.<group> is Established and serves that version, 404 otherwise,
// as the real server does; a watch open when the CRD goes stays open,
// silent (GET and PATCH of one PodGroup are served without a CRD).
//
// Built-in APIs the fake does not model kind by kind, such as Dynamic
// Resource Allocation's resource.k8s.io/v1, are served on request
// (ServeResource) from one generic store: listed, paged and watched like
// pods at /apis/<group>/<version>/<resource>, a namespaced one also at
// /apis/<group>/<version>/namespaces/<ns>/<resource>, and one object read
// with a GET; a resource not served is a 404, as an API the real server
// does not serve. Tests write the objects (PutObject); clients only read.
#ifndef GPUSCHED_TESTS_KUBE_FAKE_APISERVER_H_
#define GPUSCHED_TESTS_KUBE_FAKE_APISERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/kube/kube_config.h"
#include "nlohmann/json.hpp"

namespace gpusched::kube::testing {

using Json = nlohmann::json;

struct FakeApiServerOptions {
  std::string token = "test-token";
  // How long a watch stays open when nothing else ends it.
  std::chrono::milliseconds watch_hold{200};
};

class FakeApiServer {
 public:
  explicit FakeApiServer(FakeApiServerOptions options = {});
  ~FakeApiServer();  // closes every connection and joins its threads

  uint16_t port() const;
  // An http:// configuration with the right token.
  KubeConfig Config() const;

  // Each change bumps the resourceVersion and records a watch event.
  void AddNode(Json node);
  void DeleteNode(std::string_view name);
  void AddPod(Json pod);
  // `key` is "namespace/name".
  void UpdatePod(std::string_view key, const std::function<void(Json&)>& edit);
  void DeletePod(std::string_view key);
  // Removes a node without a watch event and compacts the history, so a
  // watcher only learns of it by relisting after a 410.
  void DeleteNodeUnwatched(std::string_view name);

  // The stored pod ("namespace/name"), or null.
  Json Pod(std::string_view key) const;
  // Requests seen, by "METHOD kind": "LIST nodes", "WATCH pods", "GET pod",
  // "PATCH pod", "PATCH pod/status", "POST binding", "POST eviction",
  // "POST event", "GET podgroup", "PATCH podgroup", "PATCH podgroup/status",
  // "DENIED" (bad token); for a served resource (ServeResource) by its
  // plural: "LIST resourceslices", "WATCH resourceslices", "GET
  // resourceclaims".
  int Count(std::string_view what) const;

  // Evictions of pod `key` answer 429 as the API server does for a pod
  // whose PodDisruptionBudget `budget` allows no disruption.
  void BlockEvictions(std::string_view key, std::string_view budget);
  // Every PATCH of pod `key` (not its status) answers `status` with
  // `message`, as a ValidatingAdmissionPolicy or webhook that denies the
  // update; counted as "DENIED PATCH pod".
  void DenyPodUpdates(std::string_view key, int status,
                      std::string_view message);
  // Each of the next `gets` GETs of pod `key` is followed by another
  // writer's update (its resourceVersion moves on), so a write that carries
  // the version read loses the race with a 409.
  void RaceNextGets(std::string_view key, int gets);
  // Events created, oldest first.
  std::vector<Json> Events() const;
  // Each Event create waits this long before it answers: a slow server.
  void SetEventDelay(std::chrono::milliseconds delay);
  // Each pod write (PATCH, eviction, binding) waits this long before it is
  // handled, outside the server's lock: a slow server that takes many
  // writes at once.
  void SetPodWriteDelay(std::chrono::milliseconds delay);
  // Pod writes as they arrived and as they were answered, in order:
  // "begin PATCH pod team-a/x", "end POST eviction team-a/y", ...
  std::vector<std::string> PodWriteLog() const;
  // The next `requests` requests other than watches are answered `status`
  // (503: a server going away), each counted as "FAILED".
  void FailNext(int requests, int status = 503);
  // GETs of `path` (the query aside) answer `status` with `body` from now
  // on, each counted as "GET <path>": a stand-in for an API the fake does
  // not model, such as an aggregated one.
  void SetReply(std::string_view path, int status, Json body);
  // Stores a PodGroup; its apiVersion (scheduling.volcano.sh/v1beta1 or
  // scheduling.x-k8s.io/v1alpha1) says which CRD.
  void AddPodGroup(Json group);
  // The stored PodGroup of API group `api_group` ("scheduling.volcano.sh")
  // and `key` ("namespace/name"), or null.
  Json PodGroup(std::string_view api_group, std::string_view key) const;

  // Serves Kubernetes' own PodGroup API, scheduling.k8s.io/v1beta1 (not
  // served at first, as kube-apiserver without its runtime-config): list
  // and watch like a CRD's PodGroups, items of a list without apiVersion
  // and kind as for every built-in type, and .../status, whose strategic
  // merge patch merges conditions by type.
  void ServeNativePodGroups(bool served);

  // Adds a CustomResourceDefinition, or replaces the one of that name (an
  // ADDED or MODIFIED event).
  void PutCrd(Json crd);
  // Deletes a CRD (a DELETED event) and, without events, its PodGroups.
  void DeleteCrd(std::string_view name);
  // From now on every CRD list and watch is a 403, as for a role without
  // the rule.
  void ForbidCrds();

  // Serves `resource` of API `group_version` ("resource.k8s.io/v1",
  // "resourceslices"): list and watch, across namespaces and, when
  // `namespaced`, in one; GET of one object. Its objects' Kind is `kind`,
  // guessed from the plural when empty ("Resourceslice"). Requests for a
  // resource not served are a 404 with a Status.
  void ServeResource(std::string_view group_version, std::string_view resource,
                     bool namespaced, std::string_view kind = "");
  // Serves resource.k8s.io/v1's resourceslices, deviceclasses and
  // devicetaintrules (cluster-scoped), resourceclaims and
  // resourceclaimtemplates (namespaced), with their Kinds.
  void ServeDra();
  // Stores `object` by metadata.namespace and metadata.name: an ADDED
  // event, or MODIFIED when it replaces one. Sets apiVersion, the Kind
  // when missing, metadata.resourceVersion, and metadata.uid when missing
  // (a new one on create, the stored one's on replace). Objects may be
  // put before their resource is served.
  void PutObject(std::string_view group_version, std::string_view resource,
                 Json object);
  // Deletes the object `key` ("name", or "namespace/name" when namespaced):
  // a DELETED event carrying its last state, with a new resourceVersion.
  void DeleteObject(std::string_view group_version, std::string_view resource,
                    std::string_view key);
  // The stored object `key` ("name" or "namespace/name"), or null.
  Json Object(std::string_view group_version, std::string_view resource,
              std::string_view key) const;
  // Forgets the watch history of every kind, as etcd's compaction does: a
  // watch from an older resourceVersion, open or new, gets a 410 and the
  // watcher must relist.
  void CompactHistory();
  // From now on every list and watch of `resource` ("resourceclaims",
  // any API group) is a 403, as for a role without the rule; counted as
  // "FORBIDDEN <resource>".
  void ForbidResource(std::string_view resource);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A node with `gpus` whole GPUs (H100, NVLink-less) and plenty of CPU.
Json GpuNode(std::string_view name, int gpus);
// The node-local ResourceSlice of `gpus` H100s as NVIDIA's DRA driver
// writes it (resource.k8s.io/v1; pool = node, one slice).
Json DraGpuSlice(const std::string& node, int gpus, int generation = 1);
// DeviceClass gpu.nvidia.com (every device of NVIDIA's driver), serving
// the extended resource nvidia.com/gpu (KEP-5004).
Json DraGpuClass();
// A pod asking for `gpus` GPUs; bound to `node` when not empty; phase
// Running when bound, else Pending.
Json GpuPod(std::string_view key, int gpus, std::string_view node = "");
// `pod` held by the scheduling gates `gates` (as gpusched's webhook holds it).
Json Gated(Json pod, const std::vector<std::string>& gates);
// PodGroups ("namespace/name") of Volcano (scheduling.volcano.sh/v1beta1)
// and of coscheduling (scheduling.x-k8s.io/v1alpha1).
Json VolcanoPodGroup(std::string_view key, int min_member);
Json CoschedulingPodGroup(std::string_view key, int min_member);
// Kubernetes' own (scheduling.k8s.io/v1beta1), a gang of `min_count`.
Json NativePodGroup(std::string_view key, int min_count);
// The CRD podgroups.<group>, serving `version`, with the condition
// Established "True" or, when not `established`, no status yet (as just
// created).
Json PodGroupCrd(std::string_view group, std::string_view version,
                 bool established);

}  // namespace gpusched::kube::testing

#endif  // GPUSCHED_TESTS_KUBE_FAKE_APISERVER_H_
