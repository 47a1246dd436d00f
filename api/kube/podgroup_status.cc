#include "api/kube/podgroup_status.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

std::string GroupPath(std::string_view api, const PodGroupTarget& group) {
  return absl::StrFormat("/apis/%s/namespaces/%s/podgroups/%s", api,
                         group.namespace_name, group.name);
}

absl::StatusOr<PodGroupWriteResult> PatchGroup(KubeClient& client,
                                               const std::string& path,
                                               const std::string& patch,
                                               const CallOptions& call) {
  absl::StatusOr<std::string> patched = client.Patch(path, patch, call);
  if (absl::IsNotFound(patched.status())) {
    return PodGroupWriteResult{PodGroupWriteOutcome::kGroupGone,
                               std::string(Message(patched.status()))};
  }
  if (!patched.ok()) return patched.status();
  return PodGroupWriteResult{PodGroupWriteOutcome::kWritten, "status written"};
}

}  // namespace

absl::StatusOr<PodGroupWriteResult> WriteVolcanoStatus(
    KubeClient& client, const PodGroupTarget& group,
    const VolcanoStatus& status, const CallOptions& call) {
  return PatchGroup(client, GroupPath("scheduling.volcano.sh/v1beta1", group),
                    EncodeVolcanoStatusPatch(status), call);
}

absl::StatusOr<PodGroupWriteResult> WriteCoschedulingStatus(
    KubeClient& client, const PodGroupTarget& group,
    const CoschedulingStatus& status, const CallOptions& call) {
  return PatchGroup(
      client, GroupPath("scheduling.x-k8s.io/v1alpha1", group) + "/status",
      EncodeCoschedulingStatusPatch(status), call);
}

}  // namespace gpusched::kube
