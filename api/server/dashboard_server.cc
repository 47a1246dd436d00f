#include "api/server/dashboard_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/visibility_json.h"
#include "api/http/listen_address.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

// The name every loopback request is served as (it shows in nothing but
// would in a Forbidden message, which loopback never answers).
constexpr std::string_view kLoopbackAdmin = "dashboard-loopback-admin";

// "localhost:8090" -> "localhost", "[::1]:8090" -> "::1".
std::string_view HostOf(std::string_view header) {
  if (header.starts_with('[')) {
    const size_t close = header.find(']');
    return close == std::string_view::npos ? header
                                           : header.substr(1, close - 1);
  }
  return header.substr(0, header.rfind(':'));
}

http::Response PlainText(int status, std::string body) {
  return {.status = status,
          .content_type = "text/plain; charset=utf-8",
          .body = std::move(body)};
}

}  // namespace

void AddDashboardFlags(FlagSet& flags, DashboardFlags& out) {
  flags.String("dashboard-listen", &out.listen,
               "a loopback address (e.g. 127.0.0.1:8090) for the web "
               "dashboard and its data, served to whoever reaches it as an "
               "admin (open it through kubectl port-forward); empty: off",
               "ADDR:PORT");
}

absl::Status CheckDashboardListen(std::string_view listen) {
  if (listen.empty()) return absl::OkStatus();
  absl::StatusOr<http::internal::HostPort> address =
      http::internal::ParseHostPort(listen);
  if (!address.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serve: --dashboard-listen: ", address.status().message()));
  }
  if (!http::internal::IsLoopbackHost(address->host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serve: --dashboard-listen \"", Sv(listen),
        "\" is not a loopback address: the dashboard listener has no "
        "authentication and serves everything to whoever reaches it, so it "
        "listens on 127.0.0.1, ::1 or localhost only (reach it with kubectl "
        "port-forward; people without admin rights use the aggregated API "
        "through kubectl proxy)"));
  }
  return absl::OkStatus();
}

http::Response HandleLoopbackDashboard(const VisibilityApi& api,
                                       const http::Request& request) {
  std::vector<std::string_view> hosts = HeaderValues(request, "host");
  if (hosts.size() != 1 || !http::internal::IsLoopbackHost(HostOf(hosts[0]))) {
    return PlainText(403,
                     "the dashboard listener answers requests for localhost, "
                     "127.0.0.1 or [::1] only\n");
  }
  if (request.target == "/") {
    http::Response moved = PlainText(302, "");
    moved.headers.emplace_back("Location", std::string(kDashboardPagePath));
    return moved;
  }
  return api.Handle(request);
}

DashboardServer::DashboardServer(VisibilityReads reads)
    : api_(ApiOptionsFrom(
          std::move(reads),
          [](const http::Request&) -> absl::StatusOr<RequestUser> {
            return RequestUser{.name = std::string(kLoopbackAdmin)};
          },
          [](const RequestUser&,
             const ResourceAttributes&) -> absl::StatusOr<AccessVerdict> {
            return AccessVerdict{.allowed = true};
          })) {}

absl::StatusOr<std::unique_ptr<DashboardServer>> DashboardServer::Start(
    std::string listen, int threads, VisibilityReads reads) {
  if (absl::Status s = CheckDashboardListen(listen); !s.ok()) return s;
  std::unique_ptr<DashboardServer> server(
      new DashboardServer(std::move(reads)));
  const VisibilityApi* api = &server->api_;
  absl::StatusOr<std::unique_ptr<http::Server>> http = http::Server::Start(
      {.listen = std::move(listen),
       .keep_headers = true,  // Host, If-None-Match, Accept
       .body_limit_bytes = 64 << 10,
       .threads = threads,
       // An explain waits for the admission loop (up to its timeout).
       .blocking =
           [](const http::Request& r) {
             return r.target.ends_with("/explain");
           },
       .blocking_threads = 2},
      [api](const http::Request& request) {
        return HandleLoopbackDashboard(*api, request);
      });
  if (!http.ok()) return http.status();
  server->server_ = *std::move(http);
  return server;
}

std::string DashboardServer::url() const {
  return absl::StrCat(server_->url(), Sv(kDashboardPagePath));
}

void DashboardServer::Shutdown() {
  if (server_ != nullptr) server_->Shutdown();
}

}  // namespace gpusched
