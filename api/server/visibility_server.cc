#include "api/server/visibility_server.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scheduler/base/strings.h"

namespace gpusched {

void AddVisibilityFlags(FlagSet& flags, VisibilityFlags& out) {
  flags.String("visibility-listen", &out.listen,
               "the HTTPS aggregated API visibility.gpusched.io (pending "
               "workloads of each queue) listens here (e.g. 0.0.0.0:8443); "
               "needs live mode; empty: off",
               "ADDR:PORT");
  flags.String("visibility-dns-names", &out.dns_names,
               "comma-separated names (or IPs) of the visibility API's "
               "serving certificate (its Service's DNS names)",
               "NAMES");
  flags.String("visibility-secret", &out.secret,
               "the Secret holding the visibility API's CA and certificate; "
               "created when absent",
               "NS/NAME");
  flags.String("visibility-apiservice", &out.apiservice,
               "APIService whose caBundle gpusched keeps "
               "(v1alpha1.visibility.gpusched.io)",
               "NAME");
}

absl::StatusOr<VisibilityServerOptions> VisibilityServerOptionsFrom(
    const VisibilityFlags& flags) {
  VisibilityServerOptions options{.apiservice = flags.apiservice};
  options.listener.listen = flags.listen;
  kube::WebhookCertOptions& certs = options.listener.certs;
  if (absl::Status s =
          SecretFromFlag("--visibility-secret", flags.secret, certs);
      !s.ok()) {
    return s;
  }
  certs.names = absl::StrSplit(flags.dns_names, ',', absl::SkipWhitespace());
  if (certs.names.empty() || flags.apiservice.empty()) {
    return absl::InvalidArgumentError(
        "serve: --visibility-dns-names and --visibility-apiservice must not "
        "be empty");
  }
  return options;
}

int64_t UnixMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

VisibilityApiOptions ApiOptionsFrom(
    VisibilityReads reads,
    decltype(VisibilityApiOptions::authenticate) authenticate,
    decltype(VisibilityApiOptions::authorize) authorize) {
  return {.queues = std::move(reads.queues),
          .authenticate = std::move(authenticate),
          .authorize = std::move(authorize),
          .now_ms = UnixMillisNow,
          .forecast = std::move(reads.forecast),
          .explain = std::move(reads.explain),
          .deciding = std::move(reads.deciding),
          .gpu_map = std::move(reads.gpu_map),
          .decisions = std::move(reads.decisions)};
}

VisibilityServer::VisibilityServer(kube::KubeClient& client,
                                   VisibilityReads reads)
    : client_(client),
      reviewer_({.post = kube::PostSubjectAccessReview(client)}),
      api_(ApiOptionsFrom(
          std::move(reads),
          [this](const http::Request& request) {
            return authenticator_.Authenticate(request);
          },
          [this](const RequestUser& user, const ResourceAttributes& a) {
            return reviewer_.Review(user, a);
          })) {}

std::unique_ptr<VisibilityServer> VisibilityServer::Start(
    kube::KubeClient& client, VisibilityServerOptions options,
    VisibilityReads reads) {
  std::unique_ptr<VisibilityServer> server(
      new VisibilityServer(client, std::move(reads)));
  VisibilityServer* raw = server.get();
  const std::string apiservice = options.apiservice;
  const CertifiedListenerSettings& listener = options.listener;
  CertifiedServerOptions certified{
      .component = "visibility",
      .down_effect = "the visibility API is down",
      .server = {.listen = listener.listen,
                 .ask_client_certificate = true,
                 .keep_headers = true,
                 .body_limit_bytes = 64 << 10,
                 .read_timeout = listener.read_timeout,
                 .threads = listener.threads,
                 // A queue request may wait on a SubjectAccessReview (up
                 // to 5 s): handlers run on a pool, never on I/O threads.
                 .blocking = [](const http::Request&) { return true; },
                 .blocking_threads = 4},
      .certs = listener.certs,
      .ca_bundle_holder = absl::StrCat("APIService ", apiservice),
      .ensure_ca_bundle =
          [apiservice](kube::KubeClient& c, std::string_view ca_pem,
                       std::stop_token stop) {
            return kube::EnsureApiServiceCaBundle(c, apiservice, ca_pem, stop);
          },
      .prepare =
          [raw](std::stop_token stop) { return raw->LoadFrontProxy(stop); },
      .refresh = [raw](std::stop_token stop) { raw->RefreshFrontProxy(stop); },
      .recheck = listener.recheck};
  server->server_ = CertifiedServer::Start(client, std::move(certified),
                                           [raw](const http::Request& request) {
                                             return raw->api_.Handle(request);
                                           });
  return server;
}

void VisibilityServer::Shutdown() {
  if (server_ != nullptr) server_->Shutdown();
}

// A rotated CA that cannot be read keeps the previous one: requests go on
// being served while the operator is told.
void VisibilityServer::RefreshFrontProxy(std::stop_token stop) {
  if (absl::Status s = LoadFrontProxy(stop);
      !s.ok() && !stop.stop_requested()) {
    spdlog::warn("visibility: keeping the front proxy settings read before: {}",
                 Message(s));
  }
}

absl::Status VisibilityServer::LoadFrontProxy(std::stop_token stop) {
  absl::StatusOr<RequestHeaderConfig> config =
      kube::ReadRequestHeaderConfig(client_, stop);
  if (!config.ok()) return config.status();
  if (authenticator_.configured() && *config == loaded_) {
    return absl::OkStatus();
  }
  if (absl::Status s = authenticator_.Update(*config); !s.ok()) return s;
  loaded_ = *std::move(config);
  spdlog::info(
      "visibility: front proxy allowed_names=[{}] user_headers=[{}] "
      "group_headers=[{}]",
      absl::StrJoin(loaded_.allowed_names, ","),
      absl::StrJoin(loaded_.username_headers, ","),
      absl::StrJoin(loaded_.group_headers, ","));
  return absl::OkStatus();
}

}  // namespace gpusched
