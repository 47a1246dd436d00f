#include "api/kube/kube_client.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "api/http/client.h"
#include "api/kube/kube_credentials.h"
#include "api/kube/watch_stream.h"
#include "scheduler/base/strings.h"
#include "scheduler/extender_service.h"

namespace gpusched::kube {
namespace {

using http::ClientRequest;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// The scheduler reads "not sent" off a status without knowing about HTTP.
static_assert(std::string_view(http::kNotSentPayload) ==
              std::string_view(kRequestNotSentPayload));

std::string ServerName(const KubeConfig& config) {
  return config.tls_server_name.empty() ? config.host : config.tls_server_name;
}

http::ClientOptions TransportOptions(const KubeConfig& config,
                                     const KubeClientOptions& options) {
  return http::ClientOptions{
      .tls = config.tls,
      .ca_pem = config.ca_pem,
      .cert_pem = config.client_cert_pem,
      .key_pem = config.client_key_pem,
      .server_name = ServerName(config),
      .timeout = options.request_timeout,
      .max_idle_connections = options.max_idle_connections};
}

}  // namespace

class KubeClient::Impl {
 public:
  Impl(KubeConfig config, KubeClientOptions options,
       std::unique_ptr<internal::KubeCredentials> credentials)
      : config_(std::move(config)),
        options_(std::move(options)),
        credentials_(std::move(credentials)) {}

  const KubeConfig& config() const { return config_; }
  const KubeClientOptions& options() const { return options_; }

  // One request on a pooled connection; the body of a 2xx answer.
  absl::StatusOr<std::string> Call(std::string_view method,
                                   std::string_view path, std::string_view body,
                                   std::string_view content_type,
                                   Millis timeout, const CallOptions& call);
  absl::Status Watch(std::string_view path, std::string_view resource_version,
                     const WatchHandler& on_event, std::stop_token stop);

 private:
  using Send = std::function<absl::StatusOr<http::Response>(
      const internal::RequestCredentials&)>;
  absl::StatusOr<http::Response> SendAuthorized(const Send& send);

  const KubeConfig config_;
  const KubeClientOptions options_;
  const std::unique_ptr<internal::KubeCredentials> credentials_;
};

// Sends with the current credentials. A 401 to an exec plugin's credential
// may mean the server stopped accepting it before its expiry (revoked,
// rotated keys): the plugin runs again and the request goes once more. A
// 401 answer carries no body the handlers have seen, so resending is safe
// for a watch too.
absl::StatusOr<http::Response> KubeClient::Impl::SendAuthorized(
    const Send& send) {
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<internal::RequestCredentials> credentials =
        credentials_->Get();
    if (!credentials.ok()) return credentials.status();
    absl::StatusOr<http::Response> response = send(*credentials);
    if (attempt > 0 || !response.ok() || response->status != 401 ||
        !credentials_->Refused(*credentials)) {
      return response;
    }
  }
}

// The time left for a call: its own deadline when one is set and sooner
// than `timeout` from now.
Millis TimeLeft(Millis timeout, const CallOptions& call) {
  if (!call.deadline) return timeout;
  auto left = std::chrono::duration_cast<Millis>(*call.deadline - Clock::now());
  return std::min(timeout, left);
}

absl::StatusOr<std::string> KubeClient::Impl::Call(
    std::string_view method, std::string_view path, std::string_view body,
    std::string_view content_type, Millis timeout, const CallOptions& call) {
  const std::string target = config_.base_path + std::string(path);
  const std::string what = absl::StrFormat("%s %s", method, path);
  const Clock::time_point deadline = Clock::now() + TimeLeft(timeout, call);
  // Our requests are safe to repeat, as the client may (a repeated binding
  // answers 409, which the bind sink checks).
  absl::StatusOr<http::Response> response =
      SendAuthorized([&](const internal::RequestCredentials& credentials)
                         -> absl::StatusOr<http::Response> {
        const Millis left =
            std::chrono::duration_cast<Millis>(deadline - Clock::now());
        if (left <= Millis::zero()) {
          return absl::DeadlineExceededError(
              "no time left before the call's deadline");
        }
        return credentials.http->RoundTrip(
            ClientRequest{.method = method,
                          .target = target,
                          .body = body,
                          .content_type = content_type,
                          .authorization = credentials.authorization,
                          .accept = "application/json"},
            left, call.stop);
      });
  if (!response.ok()) {
    absl::Status failed(
        response.status().code(),
        absl::StrFormat("%s: %s", what, Message(response.status())));
    response.status().ForEachPayload(
        [&](absl::string_view type, const absl::Cord& payload) {
          failed.SetPayload(type, payload);
        });
    return failed;
  }
  if (response->status / 100 != 2) {
    return StatusFromHttp(response->status, response->body, what);
  }
  return std::move(response->body);
}

absl::Status KubeClient::Impl::Watch(std::string_view path,
                                     std::string_view resource_version,
                                     const WatchHandler& on_event,
                                     std::stop_token stop) {
  const std::string target =
      config_.base_path +
      internal::WatchTarget(path, resource_version, options_.watch_timeout);
  const std::string what = absl::StrFormat("watch %s", path);
  internal::WatchLineReader reader(on_event, what);
  absl::StatusOr<http::Response> response =
      SendAuthorized([&](const internal::RequestCredentials& credentials) {
        return credentials.http->Stream(
            ClientRequest{.method = "GET",
                          .target = target,
                          .authorization = credentials.authorization,
                          .accept = "application/json"},
            options_.request_timeout,
            options_.watch_timeout + std::chrono::seconds(30),
            [&](std::string_view data) { return reader.Feed(data); }, stop);
      });
  if (!response.ok() &&
      response.status().GetPayload(http::kNotSentPayload).has_value()) {
    return absl::Status(
        response.status().code(),
        absl::StrFormat("%s: %s", what, Message(response.status())));
  }
  if (!response.ok()) return response.status();
  if (response->status / 100 != 2) {
    return StatusFromHttp(response->status, response->body, what);
  }
  return reader.Finish();
}

absl::StatusOr<std::unique_ptr<KubeClient>> KubeClient::Create(
    KubeConfig config, KubeClientOptions options) {
  if (config.host.empty()) {
    return absl::InvalidArgumentError("kube client: no API server host");
  }
  auto credentials = internal::KubeCredentials::Create(
      config, {.transport = TransportOptions(config, options),
               .token_reload = options.token_reload,
               .exec = options.exec});
  if (!credentials.ok()) {
    return absl::Status(
        credentials.status().code(),
        absl::StrFormat("%s: %s",
                        config.source.empty() ? "kube client" : config.source,
                        Message(credentials.status())));
  }
  return std::unique_ptr<KubeClient>(new KubeClient(std::make_unique<Impl>(
      std::move(config), std::move(options), *std::move(credentials))));
}

KubeClient::KubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeClient::~KubeClient() = default;

const KubeConfig& KubeClient::config() const { return impl_->config(); }

absl::StatusOr<ListResult> KubeClient::List(std::string_view path,
                                            const CallOptions& call) {
  absl::StatusOr<std::string> body =
      impl_->Call("GET", path, "", "", impl_->options().list_timeout, call);
  if (!body.ok()) return body.status();
  return internal::ParseListMeta(*std::move(body), path);
}

absl::Status KubeClient::Watch(std::string_view path,
                               std::string_view resource_version,
                               const WatchHandler& on_event,
                               std::stop_token stop) {
  return impl_->Watch(path, resource_version, on_event, stop);
}

absl::StatusOr<std::string> KubeClient::Get(std::string_view path,
                                            const CallOptions& call) {
  return impl_->Call("GET", path, "", "", impl_->options().request_timeout,
                     call);
}

absl::StatusOr<std::string> KubeClient::Patch(std::string_view path,
                                              std::string_view json,
                                              const CallOptions& call) {
  return impl_->Call("PATCH", path, json, "application/merge-patch+json",
                     impl_->options().request_timeout, call);
}

absl::StatusOr<std::string> KubeClient::StrategicPatch(
    std::string_view path, std::string_view json, const CallOptions& call) {
  return impl_->Call("PATCH", path, json,
                     "application/strategic-merge-patch+json",
                     impl_->options().request_timeout, call);
}

absl::StatusOr<std::string> KubeClient::Post(std::string_view path,
                                             std::string_view json,
                                             const CallOptions& call) {
  return impl_->Call("POST", path, json, "application/json",
                     impl_->options().request_timeout, call);
}

absl::StatusOr<std::string> KubeClient::Delete(std::string_view path,
                                               const CallOptions& call) {
  return impl_->Call("DELETE", path, "", "", impl_->options().request_timeout,
                     call);
}

}  // namespace gpusched::kube
