#include "api/server/admission_webhook.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scheduler/base/strings.h"

namespace gpusched {

void AdmissionWebhook::Register(http::Router& router) const {
  router.Add("POST", kMutatePodsPath,
             [webhook = *this](const http::Request& request) {
               return webhook.Handle(request);
             });
}

http::Response AdmissionWebhook::Handle(const http::Request& request) const {
  absl::StatusOr<AdmissionDecision> decision =
      DecidePodGating(request.body, options_);
  if (!decision.ok()) {
    spdlog::warn("webhook: bad review remote={} error={}", request.remote,
                 Message(decision.status()));
    return http::JsonError(400, Message(decision.status()));
  }
  if (decision->gating == PodGating::kGate) {
    spdlog::debug("webhook: gated pod={} uid={}", decision->pod, decision->uid);
  }
  return http::Response{.body = AdmissionResponseJson(*decision)};
}

void AddWebhookFlags(FlagSet& flags, WebhookFlags& out) {
  flags.String("webhook-listen", &out.listen,
               "ADDR:PORT for the HTTPS mutating webhook that gates new pods "
               "(e.g. 0.0.0.0:9443); needs live mode; empty: off");
  flags.String("webhook-dns-names", &out.dns_names,
               "comma-separated names (or IPs) of the webhook's serving "
               "certificate (the Service's DNS names)");
  flags.String("webhook-secret", &out.secret,
               "NAMESPACE/NAME of the Secret holding the webhook's CA and "
               "certificate; created when absent");
  flags.String("webhook-config-name", &out.config_name,
               "MutatingWebhookConfiguration whose caBundle gpusched keeps "
               "(gpusched)");
  flags.String("webhook-scheduler-name", &out.scheduler_name,
               "pods with this spec.schedulerName are gated (gpusched)");
}

absl::StatusOr<WebhookServerOptions> WebhookServerOptionsFrom(
    const WebhookFlags& flags) {
  WebhookServerOptions options{.listen = flags.listen};
  options.review.scheduler_name = flags.scheduler_name;
  std::vector<std::string> secret = absl::StrSplit(flags.secret, '/');
  if (secret.size() != 2 || secret[0].empty() || secret[1].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("serve: --webhook-secret wants NAMESPACE/NAME, got \"",
                     flags.secret, "\""));
  }
  options.certs.secret_namespace = secret[0];
  options.certs.secret_name = secret[1];
  options.certs.webhook_config_name = flags.config_name;
  options.certs.names =
      absl::StrSplit(flags.dns_names, ',', absl::SkipWhitespace());
  if (options.certs.names.empty() || flags.config_name.empty() ||
      flags.scheduler_name.empty()) {
    return absl::InvalidArgumentError(
        "serve: --webhook-dns-names, --webhook-config-name and "
        "--webhook-scheduler-name must not be empty");
  }
  return options;
}

WebhookServer::WebhookServer(kube::KubeClient& client,
                             WebhookServerOptions options)
    : client_(client), options_(std::move(options)) {}

std::unique_ptr<WebhookServer> WebhookServer::Start(
    kube::KubeClient& client, WebhookServerOptions options) {
  std::unique_ptr<WebhookServer> server(
      new WebhookServer(client, std::move(options)));
  server->thread_ = std::jthread(
      [raw = server.get()](std::stop_token stop) { raw->Run(stop); });
  return server;
}

WebhookServer::~WebhookServer() { Shutdown(); }

void WebhookServer::Shutdown() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  // The thread has ended, so server_ is no longer written.
  if (server_ != nullptr) server_->Shutdown();
}

void WebhookServer::Run(std::stop_token stop) {
  std::optional<kube::WebhookCerts> certs = AcquireCerts(stop);
  if (!certs.has_value() || !Listen(*certs, stop)) return;
  KeepCaBundle(certs->ca_pem, stop);
}

bool WebhookServer::Pause(std::chrono::milliseconds pause,
                          std::stop_token stop) {
  std::unique_lock lock(pause_mu_);
  pause_cv_.wait_for(lock, stop, pause, [] { return false; });
  return !stop.stop_requested();
}

namespace {

// 1 s, doubling up to `limit`: retries of a step that failed.
std::chrono::milliseconds NextBackoff(std::chrono::milliseconds backoff,
                                      std::chrono::milliseconds limit) {
  return std::min(backoff * 2, limit);
}

constexpr std::chrono::milliseconds kFirstBackoff{1000};

}  // namespace

std::optional<kube::WebhookCerts> WebhookServer::AcquireCerts(
    std::stop_token stop) {
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stop.stop_requested()) {
    absl::StatusOr<kube::WebhookCerts> certs =
        kube::GetOrCreateWebhookSecret(client_, options_.certs, stop);
    if (certs.ok()) {
      for (const std::string& problem :
           kube::ServingProblems(*certs, options_.certs.names)) {
        spdlog::warn(
            "webhook: the certificate of Secret {}/{} {}; delete the Secret "
            "and restart gpusched to make a new one",
            options_.certs.secret_namespace, options_.certs.secret_name,
            problem);
      }
      return *std::move(certs);
    }
    if (stop.stop_requested()) break;
    spdlog::error("webhook: no certificate yet, pods are not gated: {}",
                  Message(certs.status()));
    if (!Pause(backoff, stop)) break;
    backoff = NextBackoff(backoff, options_.recheck);
  }
  return std::nullopt;
}

bool WebhookServer::Listen(const kube::WebhookCerts& certs,
                           std::stop_token stop) {
  auto router = std::make_shared<http::Router>();
  AdmissionWebhook(options_.review).Register(*router);
  http::ServerOptions server_options{
      .listen = options_.listen,
      .tls_cert_pem = certs.cert_pem,
      .tls_key_pem = certs.key_pem,
      // The handler answers a review over its own limit with a 400 naming
      // it; the transport's larger bound only stops a runaway body.
      .body_limit_bytes = 4 * options_.review.body_limit_bytes,
      .read_timeout = options_.read_timeout,
      .threads = options_.threads};
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stop.stop_requested()) {
    absl::StatusOr<std::unique_ptr<http::Server>> server = http::Server::Start(
        server_options, [router](const http::Request& request) {
          return router->Handle(request);
        });
    if (server.ok()) {
      server_ = *std::move(server);
      spdlog::info("webhook: serving url={}{} scheduler={}", server_->url(),
                   kMutatePodsPath, options_.review.scheduler_name);
      return true;
    }
    spdlog::error("webhook: cannot listen, pods are not gated: {}",
                  Message(server.status()));
    if (!Pause(backoff, stop)) break;
    backoff = NextBackoff(backoff, options_.recheck);
  }
  return false;
}

void WebhookServer::KeepCaBundle(const std::string& ca_pem,
                                 std::stop_token stop) {
  std::chrono::milliseconds backoff = kFirstBackoff;
  const std::string& name = options_.certs.webhook_config_name;
  while (!stop.stop_requested()) {
    absl::StatusOr<bool> patched =
        kube::EnsureCaBundle(client_, name, ca_pem, stop);
    std::chrono::milliseconds pause = options_.recheck;
    if (patched.ok() && *patched) {
      spdlog::info(
          "webhook: set the caBundle of MutatingWebhookConfiguration {}", name);
    }
    if (!patched.ok() && !stop.stop_requested()) {
      spdlog::warn(
          "webhook: caBundle not set, the API server cannot call the "
          "webhook yet: {}",
          Message(patched.status()));
      pause = backoff;
      backoff = NextBackoff(backoff, options_.recheck);
    } else {
      backoff = kFirstBackoff;
    }
    if (!Pause(pause, stop)) break;
  }
}

}  // namespace gpusched
