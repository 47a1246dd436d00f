// Kubernetes Events from gpusched (events.k8s.io/v1), written off the
// caller's thread: "why is my job pending?" shows in `kubectl describe`
// without a slow API server ever stalling the admission loop.
//
// One Event per (object uid, reason code) change: the admission loop
// re-explains a waiting workload every pass, often in a new sentence
// ("position 3", then "position 2") under the same code; only a new code
// is news. The last code per object is kept in a bounded map (oldest
// forgotten first beyond `dedupe_capacity`); Forget drops a deleted
// object's entry.
//
// Thread-safety: Record, Forget, counters and Stop may be called from any
// thread. The client must outlive the recorder.
#ifndef GPUSCHED_API_KUBE_EVENT_RECORDER_H_
#define GPUSCHED_API_KUBE_EVENT_RECORDER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "api/codec/event_json.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {

// The Event written (api/codec/event_json.h).
using ::gpusched::EventRecord;
using ::gpusched::EventSubject;
using ::gpusched::EventType;
using ::gpusched::kEventNoteLimit;
using ::gpusched::kReportingController;

struct EventRecorderOptions {
  std::string reporting_instance;  // e.g. the pod name of this replica
  size_t queue_capacity = 4096;
  size_t dedupe_capacity = 100000;
  // Each write's own deadline.
  std::chrono::milliseconds write_timeout{5000};
  // Injected for tests; the wall clock by default.
  std::function<std::chrono::system_clock::time_point()> now;
};

struct EventRecorderCounters {
  uint64_t written = 0;       // created by the API server
  uint64_t deduplicated = 0;  // same code as the object's last Event
  uint64_t dropped = 0;       // queue full, or recorder stopped
  uint64_t failed = 0;        // the API server refused or was unreachable
};

class EventRecorder {
 public:
  // Starts the worker thread.
  EventRecorder(KubeClient& client, EventRecorderOptions options);
  ~EventRecorder();  // Stop()
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Queues an Event unless it repeats the object's last code; never waits
  // for the API server, and drops (counted) when the queue is full.
  void Record(EventRecord event);
  // The object was deleted: its next Event is news whatever its code.
  void Forget(std::string_view uid);
  // Cancels the write in flight and joins the worker; queued Events are
  // dropped. Idempotent.
  void Stop();

  EventRecorderCounters counters() const;

 private:
  void Run(std::stop_token stop);
  bool IsRepeatLocked(const std::string& key, const std::string& reason);
  void RememberLocked(const std::string& key, const std::string& reason);
  void ForgetLocked(const std::string& key, const std::string& reason);
  void Write(const EventRecord& event, std::stop_token stop);

  KubeClient& client_;
  const EventRecorderOptions options_;

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::deque<EventRecord> queue_;  // guarded by mu_
  // Last reason per object key, oldest first in `order_`; guarded by mu_.
  struct Last {
    std::string reason;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, Last> last_;
  std::list<std::string> order_;
  EventRecorderCounters counters_;  // guarded by mu_
  bool stopped_ = false;            // guarded by mu_
  std::jthread worker_;             // last: stops before the rest goes
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_EVENT_RECORDER_H_
