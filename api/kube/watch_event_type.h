// The type of a watch event, read from the stream's "type" once
// (WatchLineReader) so that listeners compare values, not strings.
#ifndef GPUSCHED_API_KUBE_WATCH_EVENT_TYPE_H_
#define GPUSCHED_API_KUBE_WATCH_EVENT_TYPE_H_

#include <initializer_list>
#include <optional>
#include <string_view>

namespace gpusched::kube {

// An "ERROR" line is not an event: the reader turns it into a Status.
enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark };

// The API server's name for it ("ADDED", ...), for logs.
constexpr std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
  }
  return "?";
}

// Nothing for a name the API server does not send in an event.
constexpr std::optional<WatchEventType> WatchEventTypeFromName(
    std::string_view name) {
  for (WatchEventType type :
       {WatchEventType::kAdded, WatchEventType::kModified,
        WatchEventType::kDeleted, WatchEventType::kBookmark}) {
    if (WatchEventTypeName(type) == name) return type;
  }
  return std::nullopt;
}

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_WATCH_EVENT_TYPE_H_
