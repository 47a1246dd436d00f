#include "api/kube/kube_bind_sink.h"

#include "absl/strings/str_format.h"
#include "api/codec/binding_json.h"
#include "scheduler/base/strings.h"
#include "scheduler/gpu_inventory.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

std::string PodPath(const Pod& pod) {
  return absl::StrFormat("/api/v1/namespaces/%s/pods/%s",
                         pod.meta.namespace_name, pod.meta.name);
}

}  // namespace

absl::Status KubeBindSink::Bind(const Pod& pod, const std::string& node,
                                const GpuAssignment& assignment) {
  const CallOptions call{.deadline =
                             std::chrono::steady_clock::now() + budget_};
  return CreateBinding(pod, node, assignment, call);
}

absl::Status KubeBindSink::CreateBinding(const Pod& pod,
                                         const std::string& node,
                                         const GpuAssignment& assignment,
                                         const CallOptions& call) {
  absl::StatusOr<std::string> posted = client_.Post(
      PodPath(pod) + "/binding", EncodeBinding(pod, node, assignment), call);
  if (posted.ok()) {
    spdlog::info("kube: bound pod {} to node {}", pod.Key(), node);
    return absl::OkStatus();
  }
  if (posted.status().code() != absl::StatusCode::kAborted) {
    return posted.status();
  }
  return CheckAlreadyBound(pod, node, posted.status(), call);
}

// The binding conflicted: it is our earlier, retried bind when the same pod
// is already on the same node.
absl::Status KubeBindSink::CheckAlreadyBound(const Pod& pod,
                                             const std::string& node,
                                             const absl::Status& conflict,
                                             const CallOptions& call) {
  absl::StatusOr<std::string> body = client_.Get(PodPath(pod), call);
  if (!body.ok()) return conflict;
  absl::StatusOr<PodPlacement> bound = DecodePodPlacement(*body);
  if (!bound.ok()) return conflict;
  const bool same_pod = pod.meta.uid.empty() || bound->uid == pod.meta.uid;
  if (same_pod && bound->node == node) {
    spdlog::info("kube: pod {} was already bound to node {}", pod.Key(), node);
    return absl::OkStatus();
  }
  return conflict;
}

}  // namespace gpusched::kube
