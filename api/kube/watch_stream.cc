#include "api/kube/watch_stream.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace internal {
namespace {

// One event is one object (etcd caps those near 1.5 MiB); a line far longer
// means a broken stream, and holding it would grow memory without bound.
constexpr size_t kMaxLineBytes = 64 << 20;

absl::StatusCode CodeForHttp(int code) {
  switch (code) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return code >= 500 ? absl::StatusCode::kUnavailable
                         : absl::StatusCode::kUnknown;
  }
}

}  // namespace

std::string WatchTarget(std::string_view path,
                        std::string_view resource_version,
                        std::chrono::seconds timeout) {
  std::string target = absl::StrFormat(
      "%s%swatch=1&allowWatchBookmarks=true&timeoutSeconds=%d", path,
      path.find('?') == std::string_view::npos ? "?" : "&", timeout.count());
  if (!resource_version.empty()) {
    target += absl::StrFormat("&resourceVersion=%s", resource_version);
  }
  return target;
}

absl::Status WatchLineReader::Feed(std::string_view data) {
  pending_.append(data);
  size_t start = 0;
  for (size_t end; (end = pending_.find('\n', start)) != std::string::npos;
       start = end + 1) {
    absl::Status handled =
        HandleLine(std::string_view(pending_).substr(start, end - start));
    if (!handled.ok()) return handled;
  }
  pending_.erase(0, start);
  if (pending_.size() > kMaxLineBytes) {
    return absl::DataLossError(absl::StrFormat(
        "%s: an event is longer than %d bytes", what_, kMaxLineBytes));
  }
  return absl::OkStatus();
}

absl::Status WatchLineReader::Finish() {
  std::string last = std::move(pending_);
  pending_.clear();
  return HandleLine(last);
}

absl::Status WatchLineReader::HandleLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
    line.remove_suffix(1);
  }
  if (line.empty()) return absl::OkStatus();
  absl::StatusOr<WatchEventJson> event = decoder_.Decode(line);
  if (!event.ok()) {
    return absl::DataLossError(absl::StrFormat("%s: malformed event: %s: %s",
                                               what_, Message(event.status()),
                                               line.substr(0, 200)));
  }
  if (event->type == "ERROR") {
    return StatusFromCode(static_cast<int>(event->error_code),
                          event->error_message, what_);
  }
  const std::optional<WatchEventType> known =
      WatchEventTypeFromName(event->type);
  if (!known) {
    return absl::DataLossError(absl::StrFormat("%s: unknown event type %s: %s",
                                               what_, event->type,
                                               line.substr(0, 200)));
  }
  return handler_(WatchEvent{.type = *known,
                             .resource_version = event->resource_version,
                             .object = event->object});
}

absl::StatusOr<ListResult> ParseListMeta(std::string body,
                                         std::string_view path) {
  absl::StatusOr<ListMeta> meta = DecodeListMeta(body);
  if (!meta.ok()) {
    return absl::DataLossError(absl::StrFormat(
        "GET %s: the answer is not a List: %s", path, Message(meta.status())));
  }
  return ListResult{.body = std::move(body),
                    .resource_version = std::move(meta->resource_version),
                    .continue_token = std::move(meta->continue_token)};
}

absl::Status StatusFromCode(int code, std::string_view message,
                            std::string_view what) {
  absl::Status status(
      CodeForHttp(code),
      absl::StrFormat("%s: HTTP %d: %s", what, code,
                      message.empty() ? "(no message)" : message));
  // Several HTTP codes share a status code (every 5xx is Unavailable, as a
  // transport fault is); a caller that tells users what to do needs which.
  status.SetPayload(kHttpStatusPayload, absl::Cord(absl::StrCat(code)));
  status.SetPayload(kServerMessagePayload, absl::Cord(Sv(message)));
  return status;
}

}  // namespace internal

absl::Status StatusFromHttp(int code, std::string_view body,
                            std::string_view what) {
  // The API server answers errors with a Status object; anything else (a
  // proxy's HTML page) is quoted, shortened.
  absl::StatusOr<std::string> told = DecodeStatusMessage(body);
  const std::string message =
      told.ok() ? *std::move(told) : std::string(body.substr(0, 300));
  return internal::StatusFromCode(code, message, what);
}

std::optional<HttpFailure> HttpFailureOf(const absl::Status& status) {
  auto code = status.GetPayload(kHttpStatusPayload);
  HttpFailure failure;
  if (!code.has_value() ||
      !absl::SimpleAtoi(std::string(*code), &failure.code)) {
    return std::nullopt;
  }
  if (auto message = status.GetPayload(kServerMessagePayload)) {
    failure.message = std::string(*message);
  }
  return failure;
}

bool IsGone(const absl::Status& status) {
  return status.code() == absl::StatusCode::kOutOfRange;
}

}  // namespace gpusched::kube
