// `gpusched serve --dashboard-listen 127.0.0.1:PORT`: the dashboard and
// the visibility API's data on a plain-HTTP listener that only this
// machine (or this pod's network namespace) reaches, for admins who open
// it with `kubectl port-forward`. Loopback is its gate: there is no
// authentication and every request is served as an admin with full
// rights, so the address must be a loopback one (CheckDashboardListen),
// and a request whose Host is not a loopback name is refused, which keeps
// a web page in the admin's browser from reading it through DNS
// rebinding. It is never the metrics/extender port, which the
// NetworkPolicy opens to Prometheus.
//
// It works without a cluster too (serve --cluster or the demo cluster):
// the queues are then empty unless --policy is given.
#ifndef GPUSCHED_API_SERVER_DASHBOARD_SERVER_H_
#define GPUSCHED_API_SERVER_DASHBOARD_SERVER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/http/server.h"
#include "api/server/flags.h"
#include "api/server/visibility_api.h"
#include "api/server/visibility_server.h"

namespace gpusched {

// `gpusched serve --dashboard-*` flags.
struct DashboardFlags {
  std::string listen;  // empty: no loopback dashboard
};
void AddDashboardFlags(FlagSet& flags, DashboardFlags& out);

// OK for an empty flag or a loopback ADDR:PORT; else an error naming the
// flag and why.
absl::Status CheckDashboardListen(std::string_view listen);

// Where the page is below the listener's root.
inline constexpr std::string_view kDashboardPagePath =
    "/apis/visibility.gpusched.io/v1alpha1/dashboard/";

// The listener's handler: "/" redirects to the page, a foreign Host is
// 403, everything else is `api`'s (authentication and authorization
// already granted). Exposed for tests.
http::Response HandleLoopbackDashboard(const VisibilityApi& api,
                                       const http::Request& request);

class DashboardServer {
 public:
  // Listens before returning; what `reads` reads must outlive the server.
  static absl::StatusOr<std::unique_ptr<DashboardServer>> Start(
      std::string listen, int threads, VisibilityReads reads);
  // The page's URL, e.g. http://127.0.0.1:8090/apis/.../dashboard/.
  std::string url() const;
  void Shutdown();

 private:
  explicit DashboardServer(VisibilityReads reads);

  VisibilityApi api_;
  std::unique_ptr<http::Server> server_;  // last: stopped first
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_DASHBOARD_SERVER_H_
