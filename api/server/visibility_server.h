// gpusched's aggregated API server for visibility.gpusched.io/v1alpha1
// (visibility_api.h): an HTTPS listener behind kube-apiserver, with its own
// certificate kept in a Secret of its own and the APIService's caBundle
// kept current (certified_server.h), the front proxy authenticated and
// every queue request authorized by kube-apiserver (kube/delegated_auth.h).
#ifndef GPUSCHED_API_SERVER_VISIBILITY_SERVER_H_
#define GPUSCHED_API_SERVER_VISIBILITY_SERVER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "api/kube/delegated_auth.h"
#include "api/kube/kube_client.h"
#include "api/kube/webhook_certs.h"
#include "api/server/certified_server.h"
#include "api/server/flags.h"
#include "api/server/visibility_api.h"
#include "queueing/queue_view.h"

namespace gpusched {

// `gpusched serve --visibility-*` flags.
struct VisibilityFlags {
  std::string listen;  // empty: no visibility API
  std::string dns_names =
      "gpusched-visibility.gpusched-system.svc,"
      "gpusched-visibility.gpusched-system.svc.cluster.local";
  // A Secret apart from the webhook's: each listener's certificate names
  // its own Service and can be renewed (the Secret deleted) alone.
  std::string secret = "gpusched-system/gpusched-visibility-tls";
  std::string apiservice = "v1alpha1.visibility.gpusched.io";
};
void AddVisibilityFlags(FlagSet& flags, VisibilityFlags& out);

// What the API reads: the admission loop's view, forecasts and
// explanations, whether this replica decides, the GPU map and the recent
// decisions (VisibilityApiOptions). The loopback dashboard reads the same.
struct VisibilityReads {
  std::function<std::shared_ptr<const QueueView>()> queues;
  std::function<std::shared_ptr<const StartForecast>()> forecast;
  std::function<absl::StatusOr<WorkloadExplanation>(const std::string& key)>
      explain;
  std::function<bool()> deciding;
  std::function<std::shared_ptr<const GpuMap>()> gpu_map;
  std::function<std::shared_ptr<const RecentDecisions>()> decisions;
};

// The wall clock in Unix milliseconds (the Table's ages).
int64_t UnixMillisNow();

// The API's options: what it reads, the wall clock, and who a request is
// from and what they may (the aggregated API reviews each request, the
// loopback dashboard lets every one through).
VisibilityApiOptions ApiOptionsFrom(
    VisibilityReads reads,
    decltype(VisibilityApiOptions::authenticate) authenticate,
    decltype(VisibilityApiOptions::authorize) authorize);

struct VisibilityServerOptions {
  // recheck: also how often the front proxy's settings are read again.
  CertifiedListenerSettings listener{.recheck = std::chrono::seconds(30)};
  std::string apiservice;
};

// The options `flags` ask for; an error names a malformed flag.
absl::StatusOr<VisibilityServerOptions> VisibilityServerOptionsFrom(
    const VisibilityFlags& flags);

class VisibilityServer {
 public:
  // `client` must outlive the server, and what `reads` reads must too.
  static std::unique_ptr<VisibilityServer> Start(
      kube::KubeClient& client, VisibilityServerOptions options,
      VisibilityReads reads);
  // Stops the thread and the listener. Idempotent.
  void Shutdown();

 private:
  VisibilityServer(kube::KubeClient& client, VisibilityReads reads);
  // Reads the front proxy's settings into the authenticator.
  absl::Status LoadFrontProxy(std::stop_token stop);
  // LoadFrontProxy, logging a failure.
  void RefreshFrontProxy(std::stop_token stop);

  kube::KubeClient& client_;
  kube::RequestHeaderAuthenticator authenticator_;
  RequestHeaderConfig loaded_;  // the thread's: what was last applied
  kube::AccessReviewer reviewer_;
  VisibilityApi api_;
  std::unique_ptr<CertifiedServer> server_;  // last: stopped first
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_VISIBILITY_SERVER_H_
