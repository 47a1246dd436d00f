#include "api/server/admission_review.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "api/codec/admission_review_json.h"

namespace gpusched {
namespace {

// A pod of another scheduler: moved to ours and gated only when its
// scheduler is adopted and the queueing core holds it; any other passes.
AdmissionDecision DecideAdoption(const AdmissionReviewRequest& review,
                                 const AdmissionWebhookOptions& options,
                                 AdmissionDecision decision) {
  if (!options.manages ||
      !absl::c_linear_search(options.adopted_schedulers,
                             review.scheduler_name) ||
      !options.manages(review.pod) ||
      (options.adopting && !options.adopting())) {
    return decision;
  }
  decision.gating = PodGating::kAdopt;
  decision.patch = EncodeAdoptPatch(review.gates, kAdmissionGateName,
                                    options.scheduler_name);
  return decision;
}

}  // namespace

// decode (api/codec) -> decide -> the patch (api/codec).
absl::StatusOr<AdmissionDecision> DecidePodGating(
    std::string_view body, const AdmissionWebhookOptions& options) {
  absl::StatusOr<AdmissionReviewRequest> review =
      DecodeAdmissionReview(body, options.body_limit_bytes, kAdmissionGateName);
  if (!review.ok()) return review.status();
  AdmissionDecision decision{.uid = review->uid, .pod = review->pod_for_logs};
  if (!review->pod_create) return decision;
  if (review->scheduler_name != options.scheduler_name) {
    return DecideAdoption(*review, options, std::move(decision));
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
  return EncodeAdmissionResponse(decision.uid,
                                 decision.gating == PodGating::kGate ||
                                         decision.gating == PodGating::kAdopt
                                     ? decision.patch
                                     : std::string());
}

}  // namespace gpusched
