// Keeps the observed runtimes (queueing/runtime_log.h) in a ConfigMap that
// gpusched owns, so that the forecast's history arm survives a restart and
// a failover: loaded once at start (retried until the API server answers;
// none yet is an empty history), then saved while this replica decides, at
// most every `interval` and only when the log changed since.
//
// Nothing is saved before the load succeeded: a replica that could not read
// the history must not overwrite it with less.
#ifndef GPUSCHED_API_KUBE_RUNTIME_HISTORY_STORE_H_
#define GPUSCHED_API_KUBE_RUNTIME_HISTORY_STORE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "api/kube/configmap_document.h"
#include "api/kube/kube_client.h"
#include "queueing/runtime_log.h"

namespace gpusched::kube {

struct RuntimeHistoryStoreOptions {
  std::string namespace_name = "gpusched-system";
  std::string name = "gpusched-runtime-history";
  std::chrono::milliseconds interval{30'000};
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{30'000};
  // Whether this replica decides (only then it saves); unset: always.
  std::function<bool()> deciding;
};

// The client and the log must outlive it.
class RuntimeHistoryStore {
 public:
  RuntimeHistoryStore(KubeClient& client, RuntimeLog& log,
                      RuntimeHistoryStoreOptions options);
  ~RuntimeHistoryStore();  // Stop(): saves a last time if it decides
  RuntimeHistoryStore(const RuntimeHistoryStore&) = delete;
  RuntimeHistoryStore& operator=(const RuntimeHistoryStore&) = delete;

  void Start();
  void Stop();  // idempotent

  // One load or save now (the thread's steps; tests call them directly).
  absl::Status Load(std::stop_token stop = {});
  absl::Status SaveIfChanged(std::stop_token stop = {});

 private:
  void Run(std::stop_token stop);

  RuntimeLog& log_;
  const RuntimeHistoryStoreOptions options_;
  ConfigMapDocument document_;
  uint64_t saved_version_ = 0;  // the thread's (or a test's)
  std::jthread thread_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_RUNTIME_HISTORY_STORE_H_
