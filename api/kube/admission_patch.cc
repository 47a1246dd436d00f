#include "api/kube/admission_patch.h"

#include "absl/strings/str_cat.h"
#include "api/codec/json_writer.h"
#include "queueing/workload_types.h"

namespace gpusched::kube {

absl::Status ApplyAdmissionPatch(KubeClient& client, const AdmissionPatch& patch) {
  const std::string path = absl::StrCat("/api/v1/namespaces/", patch.pod_namespace,
                                        "/pods/", patch.pod_name);
  JsonWriter metadata;
  metadata.Raw(R"({"metadata":{"labels":{)")
      .Key(kAdmittedLabel)
      .String("true")
      .Raw(R"(},"annotations":{)")
      .Key(kAssignedNodeAnnotation)
      .String(patch.node)
      .Raw("}}}");
  if (auto result = client.Patch(path, metadata.Take()); !result.ok()) {
    return result.status();
  }
  JsonWriter status;
  status.Raw(R"({"status":{)").Key("nominatedNodeName").String(patch.node).Raw("}}");
  auto result = client.Patch(path + "/status", status.Take());
  return result.ok() ? absl::OkStatus() : result.status();
}

}  // namespace gpusched::kube
