// Watch and list plumbing behind KubeClient: the watch URL, splitting a
// streamed body into newline-delimited events, and a List's metadata.
// Internal to the kube library.
#ifndef GPUSCHED_API_KUBE_WATCH_STREAM_H_
#define GPUSCHED_API_KUBE_WATCH_STREAM_H_

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/codec/kube_list_json.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube::internal {

// `path` plus watch=1, bookmarks, the server-side timeout and (if not
// empty) resourceVersion, joined with '?' or '&' as `path` requires.
std::string WatchTarget(std::string_view path,
                        std::string_view resource_version,
                        std::chrono::seconds timeout);

// Splits a watch body into lines (events may arrive split across reads, or
// several in one) and hands each decoded event to the handler. An ERROR event
// becomes the status its code maps to (410 -> OutOfRange); an event of a
// type the API server does not send is DataLoss, as a malformed one is.
class WatchLineReader {
 public:
  WatchLineReader(const WatchHandler& handler, std::string what)
      : handler_(handler), what_(std::move(what)) {}

  absl::Status Feed(std::string_view data);
  // Handles a last event that lacked its newline.
  absl::Status Finish();

 private:
  absl::Status HandleLine(std::string_view line);

  const WatchHandler& handler_;
  const std::string what_;
  std::string pending_;  // bytes after the last newline
  WatchEventDecoder decoder_;
};

// metadata.resourceVersion and metadata.continue of a List body.
absl::StatusOr<ListResult> ParseListMeta(std::string body,
                                         std::string_view path);

// The status for a Kubernetes error `code` and message.
absl::Status StatusFromCode(int code, std::string_view message,
                            std::string_view what);

}  // namespace gpusched::kube::internal

#endif  // GPUSCHED_API_KUBE_WATCH_STREAM_H_
