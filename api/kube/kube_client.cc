#include "api/kube/kube_client.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "api/kube/connection.h"
#include "api/kube/watch_stream.h"
#include "scheduler/extender_service.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

using internal::Connection;
using internal::OutgoingRequest;
using internal::WholeResponse;
using Clock = std::chrono::steady_clock;

std::string ServerName(const KubeConfig& config) {
  return config.tls_server_name.empty() ? config.host : config.tls_server_name;
}

}  // namespace

class KubeClient::Impl {
 public:
  Impl(KubeConfig config, KubeClientOptions options,
       std::unique_ptr<boost::asio::ssl::context> tls)
      : config_(std::move(config)),
        options_(options),
        tls_(std::move(tls)),
        endpoint_{.host = config_.host,
                  .port = config_.port,
                  .server_name = ServerName(config_),
                  .tls = tls_.get()} {}

  const KubeConfig& config() const { return config_; }
  const KubeClientOptions& options() const { return options_; }

  // One request on a pooled connection; the body of a 2xx answer.
  absl::StatusOr<std::string> Call(std::string_view method,
                                   std::string_view path, std::string_view body,
                                   std::string_view content_type,
                                   internal::Millis timeout,
                                   const CallOptions& call);
  absl::Status Watch(std::string_view path, std::string_view resource_version,
                     const WatchHandler& on_event, std::stop_token stop);

 private:
  absl::StatusOr<std::string> Authorization();
  absl::StatusOr<WholeResponse> Exchange(const OutgoingRequest& request,
                                         internal::Millis timeout,
                                         std::stop_token stop);
  std::unique_ptr<Connection> TakeIdle();
  void DropIdle();
  void Release(std::unique_ptr<Connection> connection);

  const KubeConfig config_;
  const KubeClientOptions options_;
  const std::unique_ptr<boost::asio::ssl::context> tls_;
  const internal::Endpoint endpoint_;

  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
  std::string token_;                              // guarded by mu_
  Clock::time_point token_read_;                   // guarded by mu_
};

// The header value; a token file is re-read once `token_reload` has passed,
// and a failed re-read keeps the last good token (kubelet rewrites the file
// atomically, so a failure is transient).
absl::StatusOr<std::string> KubeClient::Impl::Authorization() {
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

std::unique_ptr<Connection> KubeClient::Impl::TakeIdle() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return nullptr;
  std::unique_ptr<Connection> connection = std::move(idle_.back());
  idle_.pop_back();
  return connection;
}

void KubeClient::Impl::DropIdle() {
  std::lock_guard lock(mu_);
  idle_.clear();
}

void KubeClient::Impl::Release(std::unique_ptr<Connection> connection) {
  if (!connection->reusable()) return;
  std::lock_guard lock(mu_);
  if (idle_.size() < options_.max_idle_connections) {
    idle_.push_back(std::move(connection));
  }
}

// The time left for a call: its own deadline when one is set and sooner
// than `timeout` from now.
internal::Millis TimeLeft(internal::Millis timeout, const CallOptions& call) {
  if (!call.deadline) return timeout;
  auto left = std::chrono::duration_cast<internal::Millis>(*call.deadline -
                                                           Clock::now());
  return std::min(timeout, left);
}

// A kept-alive connection the server has closed meanwhile fails with a
// "stale" error before the server saw the request; that one is resent on a
// fresh connection. Our requests are safe to repeat (a repeated binding
// answers 409, which the bind sink checks).
absl::StatusOr<WholeResponse> KubeClient::Impl::Exchange(
    const OutgoingRequest& request, internal::Millis timeout,
    std::stop_token stop) {
  for (int attempt = 0;; ++attempt) {
    // A retry never takes another idle connection: when the server closed
    // one (a restart, a reset), it closed them all.
    std::unique_ptr<Connection> connection =
        attempt == 0 ? TakeIdle() : nullptr;
    const bool reused = connection != nullptr;
    if (!reused) {
      auto opened = Connection::Open(
          endpoint_, std::min(timeout, options_.request_timeout), stop);
      if (!opened.ok()) {
        absl::Status not_sent = opened.status();
        not_sent.SetPayload(kRequestNotSentPayload, absl::Cord("1"));
        return not_sent;
      }
      connection = *std::move(opened);
    }
    bool stale = false;
    absl::StatusOr<WholeResponse> response =
        connection->RoundTrip(request, timeout, stop, &stale);
    if (!response.ok() && stale && reused && attempt == 0) {
      DropIdle();
      continue;
    }
    if (response.ok()) Release(std::move(connection));
    return response;
  }
}

absl::StatusOr<std::string> KubeClient::Impl::Call(
    std::string_view method, std::string_view path, std::string_view body,
    std::string_view content_type, internal::Millis timeout,
    const CallOptions& call) {
  absl::StatusOr<std::string> authorization = Authorization();
  if (!authorization.ok()) return authorization.status();
  const std::string target = config_.base_path + std::string(path);
  const std::string what = absl::StrFormat("%s %s", method, path);
  timeout = TimeLeft(timeout, call);
  if (timeout <= internal::Millis::zero()) {
    return absl::DeadlineExceededError(
        absl::StrFormat("%s: no time left before the call's deadline", what));
  }
  absl::StatusOr<WholeResponse> response =
      Exchange(OutgoingRequest{.method = method,
                               .target = target,
                               .body = body,
                               .content_type = content_type,
                               .authorization = *authorization},
               timeout, call.stop);
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
  absl::StatusOr<std::string> authorization = Authorization();
  if (!authorization.ok()) return authorization.status();
  const std::string target =
      config_.base_path +
      internal::WatchTarget(path, resource_version, options_.watch_timeout);
  const std::string what = absl::StrFormat("watch %s", path);
  auto connection = Connection::Open(endpoint_, options_.request_timeout, stop);
  if (!connection.ok()) {
    return absl::Status(
        connection.status().code(),
        absl::StrFormat("%s: %s", what, Message(connection.status())));
  }
  internal::WatchLineReader reader(on_event, what);
  absl::StatusOr<WholeResponse> response =
      (*connection)
          ->Stream(
              OutgoingRequest{.method = "GET",
                              .target = target,
                              .authorization = *authorization},
              options_.request_timeout,
              options_.watch_timeout + std::chrono::seconds(30),
              [&](std::string_view data) { return reader.Feed(data); }, stop);
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
  std::unique_ptr<boost::asio::ssl::context> tls;
  if (config.tls) {
    auto context = internal::MakeTlsContext(config);
    if (!context.ok()) {
      return absl::Status(
          context.status().code(),
          absl::StrFormat("%s: %s",
                          config.source.empty() ? "kube client" : config.source,
                          Message(context.status())));
    }
    tls = *std::move(context);
  }
  return std::unique_ptr<KubeClient>(new KubeClient(
      std::make_unique<Impl>(std::move(config), options, std::move(tls))));
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

absl::StatusOr<std::string> KubeClient::Post(std::string_view path,
                                             std::string_view json,
                                             const CallOptions& call) {
  return impl_->Call("POST", path, json, "application/json",
                     impl_->options().request_timeout, call);
}

}  // namespace gpusched::kube
