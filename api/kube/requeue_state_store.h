// Keeps the workloads' requeue state (queueing/requeue_state.h: Kueue's
// requeueState, deactivation and eviction time, which Kueue keeps in its
// Workload objects) in a ConfigMap gpusched owns, so that a restart or a
// failover neither resets a count backoffLimitCount limits, nor cuts a
// backoff short, nor brings back a deactivated workload.
//
// Read once at start (retried until the API server answers; none yet is no
// state) and handed to the admission loop, which runs no pass before it
// (AdmissionLoopOptions::keep_requeue_state). Then, while this replica
// decides, what its passes publish is saved when it changed; while it is a
// standby, the ConfigMap is read again every `read_interval` and handed on,
// so that a takeover starts at most that far behind.
//
// Nothing is saved before the first read succeeded: a replica that could
// not read the state must not overwrite it with less. One not allowed to
// read it (403) decides without it, and says so.
#ifndef GPUSCHED_API_KUBE_REQUEUE_STATE_STORE_H_
#define GPUSCHED_API_KUBE_REQUEUE_STATE_STORE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "api/kube/configmap_document.h"
#include "api/kube/kube_client.h"
#include "queueing/requeue_state.h"

namespace gpusched::kube {

struct RequeueStateStoreOptions {
  std::string namespace_name = "gpusched-system";
  std::string name = "gpusched-requeue-state";
  // How often the deciding replica looks for a change to save.
  std::chrono::milliseconds save_interval{1'000};
  // How often a standby reads it again.
  std::chrono::milliseconds read_interval{5'000};
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{30'000};
  // Whether this replica decides; unset: always.
  std::function<bool()> deciding;
  // The records to save (AdmissionLoop::RequeueRecords); null: none yet.
  std::function<std::shared_ptr<const std::vector<RequeueRecord>>()> current;
  // Where a read goes (AdmissionLoop::RequeueStateLoaded).
  std::function<void(std::vector<RequeueRecord> records, bool initial)> loaded;
};

// The client must outlive it; the functions must stay callable until Stop.
class RequeueStateStore {
 public:
  RequeueStateStore(KubeClient& client, RequeueStateStoreOptions options);
  ~RequeueStateStore();  // Stop(): saves a last time if it decides
  RequeueStateStore(const RequeueStateStore&) = delete;
  RequeueStateStore& operator=(const RequeueStateStore&) = delete;

  void Start();
  void Stop();  // idempotent

  // One read (handed to `loaded`) or save now: the thread's steps, which
  // tests call directly.
  absl::Status Read(bool initial, std::stop_token stop = {});
  absl::Status SaveIfChanged(std::stop_token stop = {});

 private:
  void Run(std::stop_token stop);
  void ReadFirst(std::stop_token stop);
  bool Deciding() const;

  const RequeueStateStoreOptions options_;
  ConfigMapDocument document_;
  std::string saved_;  // the text last read or written
  std::jthread thread_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_REQUEUE_STATE_STORE_H_
