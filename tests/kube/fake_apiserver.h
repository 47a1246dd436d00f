// A small, faithful stand-in for the Kubernetes API server: nodes and pods in
// memory, list with limit/continue, watch as a chunked stream of
// newline-delimited events, merge-patch, pods/binding, bearer tokens.
//
// Built on Beast directly rather than http::Server because the client under
// test must see what a real API server sends: an Authorization header to
// check, and watch bodies that stream (chunked) while the connection stays
// open, which a whole-response server cannot produce.
//
// Faithful details: every change bumps a global resourceVersion; a watch
// from a compacted version answers 200 with an ERROR event carrying a 410
// Status (as the real server does); a watch stays open for `watch_hold` and
// then ends with a BOOKMARK (real servers end watches on timeoutSeconds);
// binding an already bound pod is a 409 whatever the node.
#ifndef GPUSCHED_TESTS_KUBE_FAKE_APISERVER_H_
#define GPUSCHED_TESTS_KUBE_FAKE_APISERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

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
  // "PATCH pod", "POST binding", "DENIED" (bad token).
  int Count(std::string_view what) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A node with `gpus` whole GPUs (H100, NVLink-less) and plenty of CPU.
Json GpuNode(std::string_view name, int gpus);
// A pod asking for `gpus` GPUs; bound to `node` when not empty; phase
// Running when bound, else Pending.
Json GpuPod(std::string_view key, int gpus, std::string_view node = "");

}  // namespace gpusched::kube::testing

#endif  // GPUSCHED_TESTS_KUBE_FAKE_APISERVER_H_
