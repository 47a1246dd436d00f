#include "api/kube/kube_bind_sink.h"

#include "absl/strings/str_format.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"
#include "scheduler/gpu_inventory.h"
#include "simdjson.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

std::string PodPath(const Pod& pod) {
  return absl::StrFormat("/api/v1/namespaces/%s/pods/%s",
                         pod.meta.namespace_name, pod.meta.name);
}

struct BoundTo {
  std::string uid;
  std::string node;
};

absl::StatusOr<BoundTo> ParseBoundTo(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body).get(root)) {
    return absl::DataLossError("the pod is not valid JSON");
  }
  std::string_view uid, node;
  // Absent fields stay empty, which then simply does not match.
  if (root.at_pointer("/metadata/uid").get_string().get(uid)) uid = {};
  if (root.at_pointer("/spec/nodeName").get_string().get(node)) node = {};
  return BoundTo{std::string(uid), std::string(node)};
}

}  // namespace

std::string BindingJson(const Pod& pod, const std::string& node,
                        const GpuAssignment& assignment) {
  JsonWriter w;
  w.Raw("{").Key("apiVersion").String("v1").Raw(",");
  w.Key("kind").String("Binding").Raw(",");
  w.Key("metadata").Raw("{").Key("name").String(pod.meta.name).Raw(",");
  w.Key("namespace").String(pod.meta.namespace_name);
  if (!pod.meta.uid.empty()) w.Raw(",").Key("uid").String(pod.meta.uid);
  if (!assignment.gpu_ids.empty()) {
    w.Raw(",").Key("annotations").Raw("{");
    w.Key(kGpuIdsAnnotation).String(FormatGpuIds(assignment.gpu_ids));
    w.Raw("}");
  }
  w.Raw("},").Key("target").Raw("{").Key("apiVersion").String("v1").Raw(",");
  w.Key("kind").String("Node").Raw(",").Key("name").String(node);
  w.Raw("}}");
  return w.Take();
}

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
      PodPath(pod) + "/binding", BindingJson(pod, node, assignment), call);
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
  absl::StatusOr<BoundTo> bound = ParseBoundTo(*body);
  if (!bound.ok()) return conflict;
  const bool same_pod = pod.meta.uid.empty() || bound->uid == pod.meta.uid;
  if (same_pod && bound->node == node) {
    spdlog::info("kube: pod {} was already bound to node {}", pod.Key(), node);
    return absl::OkStatus();
  }
  return conflict;
}

}  // namespace gpusched::kube
