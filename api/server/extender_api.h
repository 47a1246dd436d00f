#ifndef GPUSCHED_API_SERVER_EXTENDER_API_H_
#define GPUSCHED_API_SERVER_EXTENDER_API_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "api/codec/extender_json.h"
#include "api/http/message.h"
#include "api/http/router.h"
#include "api/server/metrics.h"
#include "scheduler/dra_undecided.h"
#include "scheduler/extender_service.h"

namespace gpusched {

struct ExtenderApiOptions {
  // Verbs are served at /<verb> and, when set, also at <prefix>/<verb>
  // (kube-scheduler calls urlPrefix + "/" + verb).
  std::string prefix;
  // Live mode: not ready until SetReady(true) (the first complete list of
  // nodes and pods); until then /readyz is 503 and every verb answers an
  // Error. Otherwise ready at once (the model is a file or a test's).
  bool wait_for_sync = false;
  // With a policy: appends the queues' metrics to /metrics (serve binds it
  // to the admission loop, which adds nothing while it does not decide). A
  // callback rather than the loop keeps the extender's handlers free of the
  // controller, so the fuzz targets link them without the live machinery.
  std::function<void(std::string&)> append_queue_metrics;
  // Lines /readyz adds below "ok" when part of the cluster cannot be read
  // (a PodGroup API whose list keeps failing): ready, but degraded.
  std::function<std::string()> readiness_notes;
  // With a policy: false until the queueing core has published its first
  // pass. Until then /preempt answers an Error (kube-scheduler tries
  // again): the core does not know yet which victims would split a gang or
  // take a queue's guaranteed quota, so it cannot let any go.
  std::function<bool()> core_decided;
};

// Translates HTTP requests to ExtenderService calls and back. Faults (bad
// JSON, a missing Pod) are 400s; verdicts are 200s with reasons.
class ExtenderApi {
 public:
  ExtenderApi(ExtenderService& service, Metrics& metrics,
              ExtenderApiOptions options);

  void Register(http::Router& router);
  void SetReady(bool ready) { ready_ = ready; }
  // Two replicas: the one beside the kube-scheduler that does not lead
  // answers every verb with an Error (it decides nothing; see
  // AdmissionLoop::SetDeciding).
  // The gauge gpusched_standby follows it.
  void SetStandby(bool standby) {
    standby_ = standby;
    metrics_.SetStandby(standby ? 1 : 0);
  }

  // Live mode with DRA: puts the charge of a pod's resource claims on the
  // pods kube-scheduler sends (Pod::claim_requests), as the sync does on
  // the pods it lists. Safe to call while serving.
  using PodAttacher = std::function<void(Pod&)>;
  void SetPodAttacher(PodAttacher attach) {
    attacher_.store(std::make_shared<const PodAttacher>(std::move(attach)));
  }
  // Live mode with DRA: the selectors gpusched leaves to kube-scheduler,
  // listed on /v1/nodes. Safe to call while serving.
  using UndecidedSource = std::function<std::vector<DraUndecidedSelector>()>;
  void SetUndecidedSource(UndecidedSource source) {
    undecided_.store(
        std::make_shared<const UndecidedSource>(std::move(source)));
  }

  http::Response Filter(const http::Request& request);
  http::Response Prioritize(const http::Request& request);
  http::Response Preempt(const http::Request& request);
  http::Response Bind(const http::Request& request);
  // POST /v1/pods/complete {"PodUID":"..."}: in standalone mode, the pod
  // finished and releases what it holds (in live mode the API server's pod
  // deletions do this, so the call is refused with 409).
  http::Response CompletePod(const http::Request& request);
  http::Response Nodes(const http::Request& request) const;
  http::Response MetricsText(const http::Request& request) const;
  http::Response Ready(const http::Request& request) const;

 private:
  // Wire decoding that skips Nodes items the model already holds.
  DecodeOptions DecodeOptionsFor(const std::string& body,
                                 bool echo_nodes) const;
  void UpsertRequestNodes(const ExtenderArgs& args);
  // The pod itself, or a copy with its claims charged (SetPodAttacher).
  const Pod& Attached(const Pod& pod, Pod& copy) const;
  // Runs `handle`, timing it and counting it under `verb`.
  template <typename F>
  http::Response Observed(std::string_view verb, F&& handle);

  ExtenderService& service_;
  Metrics& metrics_;
  ExtenderApiOptions options_;
  std::atomic<std::shared_ptr<const PodAttacher>> attacher_;
  std::atomic<std::shared_ptr<const UndecidedSource>> undecided_;
  // Why the verbs answer an Error now; null while they serve.
  const char* NotServing() const;

  std::atomic<bool> ready_;
  std::atomic<bool> standby_{false};
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_EXTENDER_API_H_
