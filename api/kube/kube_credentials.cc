#include "api/kube/kube_credentials.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_format.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube::internal {
namespace {

using Clock = std::chrono::steady_clock;

// A fixed token, or a token file, take precedence over a plugin: kubectl's
// plugin steps aside for a request that already carries credentials.
bool UsesPlugin(const KubeConfig& config) {
  return config.exec.has_value() && config.token.empty() &&
         config.token_file.empty();
}

// Unauthenticated whatever the cause: callers read codes as the API
// server's answers (NotFound: the object is gone, DeadlineExceeded: the
// server may have acted), and none of those happened.
absl::Status NotSent(const absl::Status& status) {
  absl::Status not_sent = absl::UnauthenticatedError(
      absl::StrFormat("getting credentials: %s", Message(status)));
  not_sent.SetPayload(http::kNotSentPayload, absl::Cord("1"));
  return not_sent;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KubeCredentials>> KubeCredentials::Create(
    const KubeConfig& config, CredentialOptions options) {
  absl::StatusOr<std::unique_ptr<http::Client>> http =
      http::Client::Create(config.host, config.port, options.transport);
  if (!http.ok()) return http.status();
  return std::unique_ptr<KubeCredentials>(
      new KubeCredentials(config, std::move(options), *std::move(http)));
}

KubeCredentials::KubeCredentials(const KubeConfig& config,
                                 CredentialOptions options,
                                 std::unique_ptr<http::Client> http)
    : config_(config),
      options_(std::move(options)),
      exec_(UsesPlugin(config)
                ? std::make_unique<ExecCredentialSource>(config, options_.exec)
                : nullptr),
      http_(std::move(http)),
      http_cert_pem_(config.client_cert_pem) {}

// The header value; a token file is re-read once `token_reload` has passed,
// and a failed re-read keeps the last good token (kubelet rewrites the file
// atomically, so a failure is transient).
absl::StatusOr<std::string> KubeCredentials::TokenHeader() {
  if (config_.token_file.empty()) {
    if (config_.token.empty()) return std::string();
    return absl::StrFormat("Bearer %s", config_.token);
  }
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  if (token_.empty() || now - token_read_ >= options_.token_reload) {
    absl::StatusOr<std::string> text = ReadFileText(config_.token_file);
    if (text.ok()) {
      token_ = std::string(absl::StripAsciiWhitespace(*text));
      token_read_ = now;
    } else if (token_.empty()) {
      return text.status();
    }
  }
  return absl::StrFormat("Bearer %s", token_);
}

// The pool that presents the plugin's client certificate: the current one
// while the certificate is the same (its kept-alive connections stay
// useful), a new one when it changed, as client-go closes its connections
// when a plugin's certificate rotates.
absl::StatusOr<std::shared_ptr<http::Client>> KubeCredentials::PoolFor(
    const ExecCredential& credential) {
  std::lock_guard lock(mu_);
  if (credential.client_cert_pem.empty() ||
      credential.client_cert_pem == http_cert_pem_) {
    return http_;
  }
  http::ClientOptions transport = options_.transport;
  transport.cert_pem = credential.client_cert_pem;
  transport.key_pem = credential.client_key_pem;
  absl::StatusOr<std::unique_ptr<http::Client>> http =
      http::Client::Create(config_.host, config_.port, std::move(transport));
  if (!http.ok()) {
    return absl::Status(
        http.status().code(),
        absl::StrFormat("exec: the plugin's client certificate: %s",
                        Message(http.status())));
  }
  http_ = *std::move(http);
  http_cert_pem_ = credential.client_cert_pem;
  return http_;
}

absl::StatusOr<RequestCredentials> KubeCredentials::Get() {
  if (exec_ == nullptr) {
    absl::StatusOr<std::string> header = TokenHeader();
    if (!header.ok()) return NotSent(header.status());
    std::lock_guard lock(mu_);
    return RequestCredentials{.authorization = *std::move(header),
                              .http = http_};
  }
  absl::StatusOr<std::shared_ptr<const ExecCredential>> credential =
      exec_->Get();
  if (!credential.ok()) return NotSent(credential.status());
  absl::StatusOr<std::shared_ptr<http::Client>> http = PoolFor(**credential);
  if (!http.ok()) return NotSent(http.status());
  RequestCredentials out{.http = *std::move(http), .exec = *credential};
  if (!(*credential)->token.empty()) {
    out.authorization = absl::StrFormat("Bearer %s", (*credential)->token);
  }
  return out;
}

bool KubeCredentials::Refused(const RequestCredentials& used) {
  if (exec_ == nullptr || used.exec == nullptr) return false;
  exec_->Invalidate(used.exec);
  return true;
}

}  // namespace gpusched::kube::internal
