#ifndef GPUSCHED_API_CODEC_ADMISSION_REVIEW_JSON_H_
#define GPUSCHED_API_CODEC_ADMISSION_REVIEW_JSON_H_

// admission.k8s.io/v1 AdmissionReview JSON, as the mutating webhook reads
// and answers it: what the review says of one pod CREATE, the JSONPatch that
// adds a scheduling gate, and the response. The decision between them is
// the webhook's (api/server/admission_review.h). Errors are InvalidArgument
// naming the field: "AdmissionReview request.uid: missing".

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// Where a reviewed pod's spec.schedulingGates stands for one gate.
enum class GateListing {
  kNoList,       // absent or null: a patch creates the list
  kWithoutGate,  // a list without the gate: a patch appends to it
  kWithGate,     // the gate is there already
};

struct AdmissionReviewRequest {
  std::string uid;  // request.uid, echoed in the response
  // A CREATE of a core Pod (no subresource). Only then are the fields
  // below read.
  bool pod_create = false;
  std::string scheduler_name;  // request.object.spec.schedulerName
  // Namespace, name, labels and annotations (non-string values, invalid in
  // a pod, are skipped), the native PodGroup it names
  // (spec.schedulingGroup.podGroupName), and the admission state they say
  // (ReadPodAdmissionState): what decides whether the queueing core holds it.
  Pod pod;
  std::string pod_for_logs;  // "namespace/name" or "namespace/generateName*"
  GateListing gates = GateListing::kNoList;
};

// Refuses a body over `limit_bytes`, malformed JSON, another apiVersion or
// kind, a review without request or request.uid, a Pod CREATE without
// request.object, and a schedulingGates that is not a list. `gate` is the
// scheduling gate whose presence GateListing reports.
absl::StatusOr<AdmissionReviewRequest> DecodeAdmissionReview(
    std::string_view body, size_t limit_bytes, std::string_view gate);

// The JSONPatch that adds the gate `gate` to a pod whose gates are
// `listing` (kNoList or kWithoutGate): "add" to /spec/schedulingGates/-
// needs the list to exist, so an absent list is created whole.
std::string EncodeAddGatePatch(GateListing listing, std::string_view gate);

// The JSONPatch that moves a pod to `scheduler_name` (spec.schedulerName)
// and adds the gate unless `listing` is kWithGate.
std::string EncodeAdoptPatch(GateListing listing, std::string_view gate,
                             std::string_view scheduler_name);

// The AdmissionReview response: allowed, with `json_patch` (base64 encoded
// on the wire) unless it is empty.
std::string EncodeAdmissionResponse(std::string_view uid,
                                    std::string_view json_patch);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_ADMISSION_REVIEW_JSON_H_
