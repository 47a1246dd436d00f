#include "api/kube/podgroup_status.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "api/kube/podgroup_api.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

// The object, or its status subresource where the API has one.
std::string StatusPath(PodGroup::Flavor flavor, const PodGroupTarget& group) {
  const PodGroupApi& api = PodGroupApiOf(flavor);
  return absl::StrFormat("/apis/%s/namespaces/%s/podgroups/%s%s",
                         api.group_version, group.namespace_name, group.name,
                         api.status_subresource ? "/status" : "");
}

absl::StatusOr<PodGroupWriteResult> Outcome(
    const absl::StatusOr<std::string>& patched) {
  if (absl::IsNotFound(patched.status())) {
    return PodGroupWriteResult{PodGroupWriteOutcome::kGroupGone,
                               std::string(Message(patched.status()))};
  }
  if (!patched.ok()) return patched.status();
  return PodGroupWriteResult{PodGroupWriteOutcome::kWritten, "status written"};
}

absl::StatusOr<PodGroupWriteResult> PatchGroup(KubeClient& client,
                                               PodGroup::Flavor flavor,
                                               const PodGroupTarget& group,
                                               const std::string& patch,
                                               const CallOptions& call) {
  return Outcome(client.Patch(StatusPath(flavor, group), patch, call));
}

}  // namespace

absl::StatusOr<PodGroupWriteResult> WriteVolcanoStatus(
    KubeClient& client, const PodGroupTarget& group,
    const VolcanoStatus& status, const CallOptions& call) {
  return PatchGroup(client, PodGroup::Flavor::kVolcano, group,
                    EncodeVolcanoStatusPatch(status), call);
}

absl::StatusOr<PodGroupWriteResult> WriteCoschedulingStatus(
    KubeClient& client, const PodGroupTarget& group,
    const CoschedulingStatus& status, const CallOptions& call) {
  return PatchGroup(client, PodGroup::Flavor::kCoscheduling, group,
                    EncodeCoschedulingStatusPatch(status), call);
}

absl::StatusOr<PodGroupWriteResult> WriteNativeStatus(
    KubeClient& client, const PodGroupTarget& group,
    const NativeAdmissionCondition& condition, const CallOptions& call) {
  return Outcome(
      client.StrategicPatch(StatusPath(PodGroup::Flavor::kNative, group),
                            EncodeNativeStatusPatch(condition), call));
}

}  // namespace gpusched::kube
