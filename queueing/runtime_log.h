// How long finished workloads ran, by ClusterQueue and shape: the start
// forecast's history arm (RuntimeHistory). A workload with neither an
// expected runtime nor a deadline is expected to run as long as the
// median of the last runs of its queue and shape.
//
// Bounded, since a server sees ever new shapes: the last `per_key` runs of
// at most `max_keys` (queue, shape) pairs, the pair recorded least
// recently dropped first. Only runs that ended by themselves count: a
// preempted, evicted or deleted workload did not run its course.
//
// Thread-safe: the admission loop records, the forecaster reads, and the
// ConfigMap that keeps it across restarts (api/kube/runtime_history_store.h)
// saves and loads it.
#ifndef GPUSCHED_QUEUEING_RUNTIME_LOG_H_
#define GPUSCHED_QUEUEING_RUNTIME_LOG_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "queueing/engine_types.h"
#include "queueing/start_forecast.h"

namespace gpusched {

class QueueingEngine;

class RuntimeLog : public RuntimeHistory {
 public:
  struct Entry {
    std::string cluster_queue;
    std::string shape;             // WorkloadShape
    std::vector<int64_t> runs_ms;  // oldest first
    int64_t last_ms = 0;           // when the latest run ended (unix ms)
    friend bool operator==(const Entry&, const Entry&) = default;
  };

  explicit RuntimeLog(size_t max_keys = 1000, size_t per_key = 50)
      : max_keys_(max_keys), per_key_(per_key) {}

  void Record(const std::string& cluster_queue, const std::string& shape,
              int64_t run_ms, int64_t ended_ms);
  // One pass's events (the admission loop's thread only): an admitted or
  // adopted workload's queue, shape and admission time are noted while its
  // pods are known, and its run recorded when it finishes; one preempted,
  // evicted, timed out or gone is forgotten.
  void Observe(const QueueingEngine& engine,
               const std::vector<EngineEvent>& events);

  std::optional<int64_t> TypicalRuntimeMs(
      const std::string& cluster_queue,
      const std::string& shape) const override;

  // Every pair, by queue and shape.
  std::vector<Entry> Entries() const;
  // Replaces what is held (a restart, or a standby taking over), within the
  // bounds.
  void Load(std::vector<Entry> entries);
  // Changes with every Record and Load: a saver writes only when it moved.
  uint64_t version() const;

 private:
  using Key = std::pair<std::string, std::string>;
  void DropLeastRecent();  // with mu_ held
  struct Running {
    std::string cluster_queue, shape;
    int64_t admitted_ms = 0;
  };
  // Admitted workloads whose finish would be recorded; Observe's only.
  std::map<std::string, Running> running_;

  const size_t max_keys_;
  const size_t per_key_;
  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;  // guarded by mu_
  uint64_t version_ = 0;          // guarded by mu_
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_RUNTIME_LOG_H_
