// The handlers of the aggregated visibility API, visibility.gpusched.io/
// v1alpha1 (wire formats in api/codec/visibility_json.h), behind
// kube-apiserver:
//
//   GET /apis, /apis/visibility.gpusched.io, .../v1alpha1   discovery
//   GET .../v1alpha1/clusterqueues[/{cq}[/pendingworkloads]]
//   GET .../v1alpha1/cohorts
//   GET .../v1alpha1/namespaces/{ns}/localqueues[/{lq}[/pendingworkloads]]
//   GET .../v1alpha1/namespaces/{ns}/workloads/{name}/explain
//   GET .../v1alpha1/gpunodes                    the GPU map
//   GET .../v1alpha1[/namespaces/{ns}]/decisions recent decisions
//   GET .../v1alpha1[/namespaces/{ns}]/dashboard/[file]   the web page
//
// Every request is authenticated (the front proxy's certificate and user
// headers); a resource request is then authorized as kube-apiserver would
// authorize it: verb list for a collection, get for one object, with its
// resource, subresource, namespace and name. Discovery needs no review:
// every authenticated user may read it, as the system:discovery role
// grants. A standby replica answers 503 to every resource request (the
// deciding replica's view is the only one served). The dashboard's files
// (dashboard_files.h) hold no cluster data and need no review: whoever
// kube-apiserver let through (it authorizes get/list of `dashboard`
// itself) and the front proxy vouches for may load the page, whose data
// requests are then each reviewed as above.
// `limit` (1000) and `offset` (0) page the pending workloads; an Accept of
// as=Table;g=meta.k8s.io;v=v1 answers a Table. Errors are Status objects.
#ifndef GPUSCHED_API_SERVER_VISIBILITY_API_H_
#define GPUSCHED_API_SERVER_VISIBILITY_API_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "api/codec/delegated_auth_json.h"
#include "api/http/message.h"
#include "queueing/queue_view.h"
#include "queueing/recent_decision.h"
#include "queueing/start_forecast.h"
#include "queueing/workload_explanation.h"
#include "scheduler/gpu_map.h"

namespace gpusched {

struct VisibilityApiOptions {
  // The queues now (AdmissionLoop::Queues); null answers 503.
  std::function<std::shared_ptr<const QueueView>()> queues;
  // Who the request is from (kube::RequestHeaderAuthenticator).
  std::function<absl::StatusOr<RequestUser>(const http::Request&)> authenticate;
  // May they (kube::AccessReviewer).
  std::function<absl::StatusOr<AccessVerdict>(const RequestUser&,
                                              const ResourceAttributes&)>
      authorize;
  // Unix milliseconds, for the Table's ages.
  std::function<int64_t()> now_ms;
  // The last start forecast (Forecaster::Latest); unset or null: none.
  std::function<std::shared_ptr<const StartForecast>()> forecast;
  // One workload's explanation by key, "ns/name" of a PodGroup or a pod
  // (AdmissionLoop::Explain); unset: explain answers 503.
  std::function<absl::StatusOr<WorkloadExplanation>(const std::string& key)>
      explain;
  // False while this replica stands by; unset: it decides.
  std::function<bool()> deciding;
  // The GPU map now (GpuMapPublisher::Latest); unset: gpunodes answers 503.
  std::function<std::shared_ptr<const GpuMap>()> gpu_map;
  // The last decisions, newest first (AdmissionLoop::Decisions); unset or
  // null: none.
  std::function<std::shared_ptr<const RecentDecisions>()> decisions;
  size_t default_limit = 1000;
};

// Thread-safe if the options' functions are.
class VisibilityApi {
 public:
  explicit VisibilityApi(VisibilityApiOptions options)
      : options_(std::move(options)) {}
  http::Response Handle(const http::Request& request) const;

 private:
  // An authenticated request for a resource, authorized here.
  http::Response ServeResource(const http::Request& request,
                               const RequestUser& user,
                               const ResourceAttributes& attributes) const;
  // An authorized request for a queue (or its pending workloads).
  http::Response ServeQueue(const http::Request& request,
                            const ResourceAttributes& attributes,
                            const QueueView& view) const;
  // An authorized request for a list of queues or cohorts.
  http::Response ServeList(const ResourceAttributes& attributes,
                           const QueueView& view) const;
  // An authorized explain of one workload.
  http::Response ServeExplain(const ResourceAttributes& attributes,
                              const QueueView& view) const;
  // visibility_dashboard.cc: the dashboard's data, authorized.
  http::Response ServeGpuNodes(const http::Request& request,
                               const QueueView& view) const;
  http::Response ServeDecisions(const ResourceAttributes& attributes) const;
  std::shared_ptr<const StartForecast> Forecast() const;

  const VisibilityApiOptions options_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_VISIBILITY_API_H_
