// A small Kubernetes API client: list, watch, get, merge-patch (strategic
// merge-patch for built-in objects' keyed lists) and post, with
// a bearer token and per-request timeouts. It speaks JSON bodies as text;
// decoding objects is the caller's job (api/codec/k8s_json.h).
//
// Thread-safety: all methods may be called concurrently. List, Get, Patch and
// Post share a small pool of kept-alive connections; each Watch uses its own
// connection for as long as it streams. Every call takes an optional
// std::stop_token: requesting a stop closes that call's socket from any
// thread, so the call returns Cancelled within milliseconds. List, Get,
// Patch and Post also take an optional deadline for the whole call, connect
// included (bind must answer kube-scheduler within its httpTimeout).
//
// Errors: transport faults are Unavailable, a call that runs out of time is
// DeadlineExceeded (whether the server acted on it is then unknown); a
// non-2xx answer becomes a status
// carrying the API server's own message ("pods \"x\" not found"), with the
// code mapped from the HTTP status: 400/422 InvalidArgument, 401
// Unauthenticated, 403 PermissionDenied, 404 NotFound, 409 Aborted, 410
// OutOfRange (see IsGone), 429 ResourceExhausted, 504 DeadlineExceeded,
// other 5xx Unavailable.
//
// Credentials: a token, a token file (re-read as it rotates), a client
// certificate, or an exec plugin's token or certificate (exec_credential.h).
// When the API server answers 401 to a plugin's credential, the plugin is
// run again and the request sent once more, as kubectl does. A failure to
// get credentials is Unauthenticated and marked "not sent"
// (http::kNotSentPayload).
#ifndef GPUSCHED_API_KUBE_KUBE_CLIENT_H_
#define GPUSCHED_API_KUBE_KUBE_CLIENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/kube/exec_credential.h"
#include "api/kube/kube_config.h"
#include "api/kube/watch_event_type.h"
#include "simdjson.h"

namespace gpusched::kube {

struct KubeClientOptions {
  // Connecting, and each Get/Patch/Post round trip.
  std::chrono::milliseconds request_timeout{10000};
  // A List round trip: a large cluster's pod list takes a while to send.
  std::chrono::milliseconds list_timeout{60000};
  // Asked of the server as timeoutSeconds; it then ends the watch and the
  // caller re-watches. The client gives up on a silent stream 30 s later.
  std::chrono::seconds watch_timeout{300};
  // Kept-alive connections held between calls. As many as the server's
  // blocking pool (http::ServerOptions::blocking_threads) has binds in
  // flight: with fewer, every bind past the pool's size opened a fresh TLS
  // connection, and the handshakes cost the API server about 1 ms of CPU
  // per pod in the kube-scheduler throughput benchmark.
  size_t max_idle_connections = 16;
  // How long a token read from KubeConfig::token_file is used before the
  // file is read again (kubelet rotates projected tokens).
  std::chrono::seconds token_reload{60};
  // Running KubeConfig::exec's plugin: its timeout, output cap and expiry
  // margin.
  ExecCredentialOptions exec;
};

struct ListResult {
  std::string body;              // the whole List object as JSON
  std::string resource_version;  // metadata.resourceVersion: watch from here
  std::string continue_token;    // metadata.continue: non-empty if more pages
};

// One watch event. `object` is valid only during the handler call.
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  std::string_view resource_version;  // the object's metadata.resourceVersion
  simdjson::dom::element object;
};

// Per-call settings for List, Get, Patch and Post.
struct CallOptions {
  std::stop_token stop;
  // The call fails with DeadlineExceeded at this time, whatever step it is
  // in; unset: the client's request_timeout (list_timeout for List).
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

// Returning an error ends the watch; Watch returns that error.
using WatchHandler = std::function<absl::Status(const WatchEvent&)>;

class KubeClient {
 public:
  // Does not connect: the first call does, so a process can start (and say
  // it is not ready) before the API server is reachable.
  static absl::StatusOr<std::unique_ptr<KubeClient>> Create(
      KubeConfig config, KubeClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // GET `path` (which may carry a query such as "?limit=500").
  absl::StatusOr<ListResult> List(std::string_view path,
                                  const CallOptions& call = {});

  // Watches `path` from `resource_version`, calling `on_event` for each
  // event as it arrives. Returns OK when the server ends the watch (the
  // caller re-watches from the last version it saw), OutOfRange when the
  // version is too old (HTTP 410 or an ERROR event with code 410: the caller
  // relists), another error for an ERROR event, a transport fault or a
  // handler error, and Cancelled on `stop`.
  absl::Status Watch(std::string_view path, std::string_view resource_version,
                     const WatchHandler& on_event, std::stop_token stop = {});

  // Each returns the response body of a 2xx answer.
  absl::StatusOr<std::string> Get(std::string_view path,
                                  const CallOptions& call = {});
  absl::StatusOr<std::string> Patch(std::string_view path,
                                    std::string_view merge_patch_json,
                                    const CallOptions& call = {});
  // A strategic merge patch: lists the built-in type keys (conditions by
  // type) are merged entry by entry rather than replaced. Built-in types
  // only: the API server refuses it for custom resources (415).
  absl::StatusOr<std::string> StrategicPatch(std::string_view path,
                                             std::string_view patch_json,
                                             const CallOptions& call = {});
  absl::StatusOr<std::string> Post(std::string_view path, std::string_view json,
                                   const CallOptions& call = {});
  absl::StatusOr<std::string> Delete(std::string_view path,
                                     const CallOptions& call = {});

  const KubeConfig& config() const;

 private:
  class Impl;
  explicit KubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Payloads of a status made from a non-2xx answer (StatusFromHttp).
inline constexpr char kHttpStatusPayload[] = "gpusched.io/http-status";
inline constexpr char kServerMessagePayload[] = "gpusched.io/server-message";

// What the API server answered when a call failed with a non-2xx status.
struct HttpFailure {
  int code = 0;         // 403, 404, 503, ...
  std::string message;  // the Status object's message, or the body quoted
};
// The answer behind `status`; nullopt when there was none (a transport
// fault, a timeout, no credentials).
std::optional<HttpFailure> HttpFailureOf(const absl::Status& status);

// True for the status of a 410 Gone: the resource version is too old.
bool IsGone(const absl::Status& status);

// The status for an HTTP `code` with Kubernetes Status `body` (or any body):
// "<what>: HTTP <code>: <server message>", with the code and message also
// as payloads (HttpFailureOf).
absl::Status StatusFromHttp(int code, std::string_view body,
                            std::string_view what);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_KUBE_CLIENT_H_
