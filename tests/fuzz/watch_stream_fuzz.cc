// The watch event stream (watch_stream.h): newline-delimited events split
// across reads at arbitrary points, each decoded and applied to a model as
// the cluster and PodGroup syncs do (cluster_sync.cc, podgroup_sync.cc).
// The first byte picks the stream: n nodes, p pods, g PodGroups, m nodes and
// pods mixed (routed by the object's kind, so pods land on watched nodes);
// the second byte is the read size (1..256). The whole text is also read as
// a List answer and as an error body, the other two things the API server
// sends.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/codec/k8s_json.h"
#include "api/codec/podgroup_decode.h"
#include "api/kube/model_updater.h"
#include "api/kube/watch_stream.h"
#include "tests/fuzz/fuzz_util.h"

namespace gpusched {
namespace {

using kube::WatchEvent;

enum Stream { kNodes, kPods, kPodGroups, kMixed };

void ApplyObject(Stream stream, const WatchEvent& event,
                 kube::internal::ModelUpdater& updater) {
  if (stream == kMixed) {
    std::string_view kind;
    if (event.object["kind"].get_string().get(kind)) return;
    stream = kind == "Node" ? kNodes : kPods;
  }
  if (stream == kNodes) {
    absl::StatusOr<Node> node = DecodeNode(event.object, "Node");
    if (node.ok()) updater.ApplyNode(event.type, *std::move(node));
  } else if (stream == kPods) {
    absl::StatusOr<Pod> pod = DecodePod(event.object, "Pod");
    if (pod.ok()) updater.ApplyPod(event.type, *pod);
  } else {
    (void)DecodePodGroup(event.object, "PodGroup");
  }
}

void Run(Stream stream, size_t read_size, std::string_view body) {
  ExtenderService service;
  kube::internal::ModelUpdater updater(service);
  std::string version;
  const kube::WatchHandler handler = [&](const WatchEvent& event) {
    if (!event.resource_version.empty()) {
      version = std::string(event.resource_version);
    }
    if (event.type != kube::WatchEventType::kBookmark)
      ApplyObject(stream, event, updater);
    return absl::OkStatus();
  };
  kube::internal::WatchLineReader reader(handler, "watch fuzz");
  bool ok = true;
  for (size_t at = 0; ok && at < body.size(); at += read_size) {
    ok = reader.Feed(body.substr(at, read_size)).ok();
  }
  if (ok) (void)reader.Finish();
  (void)kube::internal::ParseListMeta(std::string(body), "/api/v1/pods");
  (void)kube::StatusFromHttp(500, body, "watch fuzz");
}

}  // namespace
}  // namespace gpusched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [stream, rest] = gpusched::fuzz::Pick(data, size, "npgm");
  if (rest.empty()) return 0;
  const size_t read_size = static_cast<uint8_t>(rest[0]) + 1;
  gpusched::Run(static_cast<gpusched::Stream>(stream), read_size,
                rest.substr(1));
  return 0;
}
