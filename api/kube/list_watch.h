// The list-then-watch loop of client-go's reflector, for one resource and
// any reader: list every page, watch from the list's resourceVersion, and
// list again when the history is gone (410). A resource the server does
// not serve (404), or that the role may not read (403 several times in a
// row), is reported absent once and asked for again every `absent_poll`:
// a cluster without the API (an older Kubernetes, a disabled group) is a
// normal cluster. Other failures retry with a backoff doubling from
// `initial_backoff` to `max_backoff`, as ClusterSync's do.
#ifndef GPUSCHED_API_KUBE_LIST_WATCH_H_
#define GPUSCHED_API_KUBE_LIST_WATCH_H_

#include <chrono>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "api/kube/kube_client.h"
#include "api/kube/watch_event_type.h"
#include "simdjson.h"

namespace gpusched::kube {

// What the loop hands over, from its thread; must return quickly. The
// elements are views valid during the call only.
class ListWatchSink {
 public:
  virtual ~ListWatchSink() = default;
  // A complete list, item by item between BeginList and EndList: objects
  // not in it are gone.
  virtual void BeginList() = 0;
  virtual void ListItem(simdjson::dom::element item) = 0;
  virtual void EndList() = 0;
  // A watch event other than a bookmark.
  virtual void Event(WatchEventType type, simdjson::dom::element object) = 0;
  // The API is not served or may not be read: as a list with no objects.
  virtual void Absent(const absl::Status& why) = 0;
};

struct ListWatchOptions {
  std::string path;  // "/apis/resource.k8s.io/v1/resourceslices"
  std::string what;  // "ResourceSlices", for logs
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  std::chrono::milliseconds absent_poll{30000};
  int list_page_size = 500;
};

// Runs until `stop`.
void RunListWatch(KubeClient& client, const ListWatchOptions& options,
                  ListWatchSink& sink, std::stop_token stop);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_LIST_WATCH_H_
