#include "api/server/certified_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

// 1 s, doubling up to `limit`: retries of a step that failed.
std::chrono::milliseconds NextBackoff(std::chrono::milliseconds backoff,
                                      std::chrono::milliseconds limit) {
  return std::min(backoff * 2, limit);
}

constexpr std::chrono::milliseconds kFirstBackoff{1000};

}  // namespace

absl::Status SecretFromFlag(std::string_view flag, const std::string& value,
                            kube::WebhookCertOptions& certs) {
  std::vector<std::string> parts = absl::StrSplit(value, '/');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serve: ", Sv(flag), " wants NAMESPACE/NAME, got \"", value, "\""));
  }
  certs.secret_namespace = parts[0];
  certs.secret_name = parts[1];
  return absl::OkStatus();
}

CertifiedServer::CertifiedServer(kube::KubeClient& client,
                                 CertifiedServerOptions options,
                                 http::Handler handler)
    : client_(client),
      options_(std::move(options)),
      handler_(std::move(handler)) {}

std::unique_ptr<CertifiedServer> CertifiedServer::Start(
    kube::KubeClient& client, CertifiedServerOptions options,
    http::Handler handler) {
  std::unique_ptr<CertifiedServer> server(
      new CertifiedServer(client, std::move(options), std::move(handler)));
  server->thread_ = std::jthread(
      [raw = server.get()](std::stop_token stop) { raw->Run(stop); });
  return server;
}

CertifiedServer::~CertifiedServer() { Shutdown(); }

void CertifiedServer::Shutdown() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  // The thread has ended, so server_ is no longer written.
  if (server_ != nullptr) server_->Shutdown();
}

void CertifiedServer::Run(std::stop_token stop) {
  std::optional<kube::WebhookCerts> certs = AcquireCerts(stop);
  if (!certs.has_value() || !Prepare(stop) || !Listen(*certs, stop)) return;
  KeepCaBundle(certs->ca_pem, stop);
}

bool CertifiedServer::Pause(std::chrono::milliseconds pause,
                            std::stop_token stop) {
  std::unique_lock lock(pause_mu_);
  pause_cv_.wait_for(lock, stop, pause, [] { return false; });
  return !stop.stop_requested();
}

std::optional<kube::WebhookCerts> CertifiedServer::AcquireCerts(
    std::stop_token stop) {
  const std::string& component = options_.component;
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stop.stop_requested()) {
    absl::StatusOr<kube::WebhookCerts> certs =
        kube::GetOrCreateWebhookSecret(client_, options_.certs, stop);
    if (certs.ok()) {
      for (const std::string& problem :
           kube::ServingProblems(*certs, options_.certs.names)) {
        spdlog::warn(
            "{}: the certificate of Secret {}/{} {}; delete the Secret and "
            "restart gpusched to make a new one",
            component, options_.certs.secret_namespace,
            options_.certs.secret_name, problem);
      }
      return *std::move(certs);
    }
    if (stop.stop_requested()) break;
    spdlog::error("{}: no certificate yet, {}: {}", component,
                  options_.down_effect, Message(certs.status()));
    if (!Pause(backoff, stop)) break;
    backoff = NextBackoff(backoff, options_.recheck);
  }
  return std::nullopt;
}

bool CertifiedServer::Prepare(std::stop_token stop) {
  if (!options_.prepare) return true;
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stop.stop_requested()) {
    absl::Status status = options_.prepare(stop);
    if (status.ok()) return true;
    if (stop.stop_requested()) break;
    spdlog::error("{}: not listening yet, {}: {}", options_.component,
                  options_.down_effect, Message(status));
    if (!Pause(backoff, stop)) break;
    backoff = NextBackoff(backoff, options_.recheck);
  }
  return false;
}

bool CertifiedServer::Listen(const kube::WebhookCerts& certs,
                             std::stop_token stop) {
  http::ServerOptions server_options = options_.server;
  server_options.tls_cert_pem = certs.cert_pem;
  server_options.tls_key_pem = certs.key_pem;
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stop.stop_requested()) {
    absl::StatusOr<std::unique_ptr<http::Server>> server =
        http::Server::Start(server_options, handler_);
    if (server.ok()) {
      server_ = *std::move(server);
      spdlog::info("{}: serving url={}", options_.component, server_->url());
      return true;
    }
    spdlog::error("{}: cannot listen, {}: {}", options_.component,
                  options_.down_effect, Message(server.status()));
    if (!Pause(backoff, stop)) break;
    backoff = NextBackoff(backoff, options_.recheck);
  }
  return false;
}

void CertifiedServer::KeepCaBundle(const std::string& ca_pem,
                                   std::stop_token stop) {
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stop.stop_requested()) {
    absl::StatusOr<bool> patched =
        options_.ensure_ca_bundle(client_, ca_pem, stop);
    std::chrono::milliseconds pause = options_.recheck;
    if (patched.ok() && *patched) {
      spdlog::info("{}: set the caBundle of {}", options_.component,
                   options_.ca_bundle_holder);
    }
    if (!patched.ok() && !stop.stop_requested()) {
      spdlog::warn(
          "{}: caBundle of {} not set, the API server cannot call gpusched "
          "yet: {}",
          options_.component, options_.ca_bundle_holder,
          Message(patched.status()));
      pause = backoff;
      backoff = NextBackoff(backoff, options_.recheck);
    } else {
      backoff = kFirstBackoff;
    }
    if (options_.refresh && !stop.stop_requested()) options_.refresh(stop);
    if (!Pause(pause, stop)) break;
  }
}

}  // namespace gpusched
