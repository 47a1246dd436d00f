#include "api/kube/watch_stream.h"

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

std::string_view StringAt(simdjson::dom::element object,
                          std::string_view pointer) {
  std::string_view value;
  if (object.at_pointer(pointer).get_string().get(value)) return {};
  return value;
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
  simdjson::dom::element root;
  std::string_view type;
  simdjson::dom::element object;
  if (parser_.parse(line.data(), line.size()).get(root) ||
      root["type"].get_string().get(type) || root["object"].get(object)) {
    return absl::DataLossError(
        absl::StrFormat("%s: malformed event: %s", what_, line.substr(0, 200)));
  }
  if (type == "ERROR") {
    int64_t code = 500;
    if (object["code"].get_int64().get(code)) code = 500;
    return StatusFromCode(static_cast<int>(code), StringAt(object, "/message"),
                          what_);
  }
  const std::optional<WatchEventType> known = WatchEventTypeFromName(type);
  if (!known) {
    return absl::DataLossError(absl::StrFormat(
        "%s: unknown event type %s: %s", what_, type, line.substr(0, 200)));
  }
  return handler_(WatchEvent{
      .type = *known,
      .resource_version = StringAt(object, "/metadata/resourceVersion"),
      .object = object});
}

absl::StatusOr<ListResult> ParseListMeta(std::string body,
                                         std::string_view path) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body).get(root) || !root.is_object()) {
    return absl::DataLossError(
        absl::StrFormat("GET %s: the answer is not a JSON object", path));
  }
  ListResult result;
  result.resource_version =
      std::string(StringAt(root, "/metadata/resourceVersion"));
  result.continue_token = std::string(StringAt(root, "/metadata/continue"));
  result.body = std::move(body);
  return result;
}

absl::Status StatusFromCode(int code, std::string_view message,
                            std::string_view what) {
  return absl::Status(
      CodeForHttp(code),
      absl::StrFormat("%s: HTTP %d: %s", what, code,
                      message.empty() ? "(no message)" : message));
}

}  // namespace internal

absl::Status StatusFromHttp(int code, std::string_view body,
                            std::string_view what) {
  // The API server answers errors with a Status object; anything else (a
  // proxy's HTML page) is quoted, shortened.
  // Its details' causes say what the message does not (a disruption
  // budget's 429 names the budget only there).
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  std::string message(body.substr(0, 300));
  if (!parser.parse(body.data(), body.size()).get(root)) {
    std::string_view from_status;
    if (!root["message"].get_string().get(from_status)) {
      message = std::string(from_status);
    }
    simdjson::dom::array causes;
    if (!root["details"]["causes"].get_array().get(causes)) {
      std::string told;
      for (simdjson::dom::element cause : causes) {
        std::string_view text;
        if (cause["message"].get_string().get(text) || text.empty()) continue;
        absl::StrAppend(&told, told.empty() ? "" : "; ", std::string(text));
      }
      if (!told.empty()) absl::StrAppend(&message, " (", told, ")");
    }
  }
  return internal::StatusFromCode(code, message, what);
}

bool IsGone(const absl::Status& status) {
  return status.code() == absl::StatusCode::kOutOfRange;
}

}  // namespace gpusched::kube
