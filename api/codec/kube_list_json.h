#ifndef GPUSCHED_API_CODEC_KUBE_LIST_JSON_H_
#define GPUSCHED_API_CODEC_KUBE_LIST_JSON_H_

// The Kubernetes API's envelopes around objects: List bodies (their
// metadata and items), watch events (one JSON object a line), and the
// Status object of an error answer. The HTTP and watch mechanics stay in
// api/kube; what the bytes say is read here. Errors are InvalidArgument
// naming the field ("WatchEvent.type: missing").
//
// Exposes simdjson like k8s_json.h: a watch event's object is decoded by
// the watcher's own decoder (DecodePod, DecodeLease, ...) in place.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "queueing/workload_types.h"
#include "scheduler/k8s_objects.h"
#include "simdjson.h"

namespace gpusched {

// metadata of a List body.
struct ListMeta {
  std::string resource_version;  // metadata.resourceVersion: watch from here
  std::string continue_token;    // metadata.continue: non-empty if more pages
};
absl::StatusOr<ListMeta> DecodeListMeta(std::string_view body);

// One watch event line. Views into the decoder's document: valid until its
// next Decode.
struct WatchEventJson {
  std::string_view type;              // ADDED, MODIFIED, ..., ERROR
  simdjson::dom::element object;      // the object, or a Status for ERROR
  std::string_view resource_version;  // object.metadata.resourceVersion
  // ERROR only: the Status's code (500 when it has none) and message.
  int64_t error_code = 500;
  std::string_view error_message;
};
// One per watch stream: it keeps its parser's buffers from one event to
// the next. Not thread-safe.
class WatchEventDecoder {
 public:
  absl::StatusOr<WatchEventJson> Decode(std::string_view line);

 private:
  simdjson::dom::parser parser_;
};

// The message of a Status error body with its details.causes' messages
// appended ("... (cause; cause)"): a disruption budget's 429 names the
// budget only there. InvalidArgument when the body is not a Status.
absl::StatusOr<std::string> DecodeStatusMessage(std::string_view body);

// metadata.name of an object, or "?": for log lines about an object that
// did not decode.
std::string_view ObjectNameForLogs(simdjson::dom::element object);
// "namespace/name" of a namespaced object, its name otherwise; "?" parts
// where they do not read.
std::string ObjectKeyForLogs(simdjson::dom::element object);

// A List body's items, decoded one by one: an item that does not decode is
// set aside with its name and error rather than failing the whole list
// (one odd object must not stop a cluster's sync).
struct SkippedItem {
  std::string name;  // metadata.name, or "?"
  std::string key;   // "namespace/name" (ObjectKeyForLogs)
  absl::Status error;
};
template <typename T>
struct DecodedList {
  std::vector<T> items;
  std::vector<SkippedItem> skipped;
};
// Hands every item of the List `body` to `visit`, in order; `kind`
// ("PodList") names the list in errors.
absl::Status VisitListItems(
    std::string_view body, std::string_view kind,
    const std::function<void(simdjson::dom::element)>& visit);
// Decodes every item with `decode(item)` (an absl::StatusOr<T>).
template <typename T, typename Decode>
absl::StatusOr<DecodedList<T>> DecodeListItems(std::string_view body,
                                               std::string_view kind,
                                               Decode&& decode) {
  DecodedList<T> list;
  absl::Status status =
      VisitListItems(body, kind, [&](simdjson::dom::element item) {
        absl::StatusOr<T> decoded = decode(item);
        if (decoded.ok()) {
          list.items.push_back(*std::move(decoded));
        } else {
          list.skipped.push_back({.name = std::string(ObjectNameForLogs(item)),
                                  .key = ObjectKeyForLogs(item),
                                  .error = decoded.status()});
        }
      });
  if (!status.ok()) return status;
  return list;
}
absl::StatusOr<DecodedList<Node>> DecodeNodeList(std::string_view body);
absl::StatusOr<DecodedList<Pod>> DecodePodList(std::string_view body);
// Lists leave out apiVersion and kind on their items, and the PodGroup
// decoder needs apiVersion to tell the flavors apart: items without one
// are read as `api_version` ("scheduling.volcano.sh/v1beta1").
absl::StatusOr<DecodedList<PodGroup>> DecodePodGroupList(
    std::string_view body, std::string_view api_version);
// One such item (a List's or a watch event's object).
absl::StatusOr<PodGroup> DecodePodGroupItem(simdjson::dom::element item,
                                            std::string_view api_version);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_KUBE_LIST_JSON_H_
