#include "api/server/admission_review.h"

#include <utility>

#include "api/codec/admission_review_json.h"

namespace gpusched {

// decode (api/codec) -> decide -> the patch (api/codec).
absl::StatusOr<AdmissionDecision> DecidePodGating(
    std::string_view body, const AdmissionWebhookOptions& options) {
  absl::StatusOr<AdmissionReviewRequest> review =
      DecodeAdmissionReview(body, options.body_limit_bytes, kAdmissionGateName);
  if (!review.ok()) return review.status();
  AdmissionDecision decision{.uid = review->uid, .pod = review->pod_for_logs};
  if (!review->pod_create || review->scheduler_name != options.scheduler_name) {
    return decision;
  }
  if (options.manages && !options.manages(review->pod)) {
    decision.gating = PodGating::kNotManaged;
    return decision;
  }
  if (review->gates == GateListing::kWithGate) {
    decision.gating = PodGating::kAlreadyGated;
    return decision;
  }
  decision.gating = PodGating::kGate;
  decision.patch = EncodeAddGatePatch(review->gates, kAdmissionGateName);
  return decision;
}

std::string AdmissionResponseJson(const AdmissionDecision& decision) {
  return EncodeAdmissionResponse(
      decision.uid,
      decision.gating == PodGating::kGate ? decision.patch : std::string());
}

}  // namespace gpusched
