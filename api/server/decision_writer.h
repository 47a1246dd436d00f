// Carries the admission loop's decisions out against the API server, on
// its own thread, so the loop never waits for the API: admissions lift the
// gate (or nominate), revocations evict or clear.
#ifndef GPUSCHED_API_SERVER_DECISION_WRITER_H_
#define GPUSCHED_API_SERVER_DECISION_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "api/kube/kube_client.h"
#include "queueing/queue_decision.h"

namespace gpusched {

struct DecisionWriterOptions {
  // Each API call's own deadline.
  std::chrono::milliseconds call_timeout{5000};
  // A decision whose write failed is tried again this often, at most
  // max_attempts times in all.
  std::chrono::milliseconds retry_after{1000};
  int max_attempts = 5;
};

class DecisionWriter : public DecisionSink {
 public:
  DecisionWriter(kube::KubeClient& client, DecisionWriterOptions options = {});
  ~DecisionWriter() override;  // Stop()

  void Publish(std::vector<QueueDecision> decisions) override;
  // Joins the writer thread; decisions not yet written are dropped (a
  // restarted gpusched rebuilds from the API objects). Idempotent.
  void Stop();

  struct Counts {
    int64_t written = 0;
    int64_t retried = 0;
    int64_t failed = 0;  // gave up after max_attempts
  };
  Counts counts() const;

 private:
  struct Pending {
    QueueDecision decision;
    int attempts = 0;
    std::chrono::steady_clock::time_point not_before;
  };
  void Run(std::stop_token stop);
  // OK when the decision took effect or no longer applies.
  absl::Status Write(const QueueDecision& decision);

  kube::KubeClient& client_;
  const DecisionWriterOptions options_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Pending> queue_;  // guarded by mu_
  Counts counts_;              // guarded by mu_
  std::jthread thread_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_DECISION_WRITER_H_
