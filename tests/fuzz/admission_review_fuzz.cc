// The admission webhook's reader (admission_review.h): an AdmissionReview
// body as the API server posts it to /mutate-pods, decided and answered.
// Variants by first byte: a, every pod of our scheduler is gated; m, only
// those with a queue label (as `gpusched serve` decides).
#include <cstddef>
#include <cstdint>

#include "api/server/admission_review.h"
#include "tests/fuzz/fuzz_util.h"

namespace gpusched {
namespace {

void Review(std::string_view body, bool only_queued) {
  AdmissionWebhookOptions options;
  if (only_queued) {
    options.manages = [](const Pod& pod) {
      return pod.meta.labels.contains("kueue.x-k8s.io/queue-name");
    };
  }
  absl::StatusOr<AdmissionDecision> decision = DecidePodGating(body, options);
  if (!decision.ok()) return;
  // The decision's own invariant: a gate comes with its patch, and nothing
  // else does.
  if ((decision->gating == PodGating::kGate) == decision->patch.empty()) {
    __builtin_trap();
  }
  (void)AdmissionResponseJson(*decision);
}

}  // namespace
}  // namespace gpusched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [variant, text] = gpusched::fuzz::Pick(data, size, "am");
  gpusched::Review(text, variant == 1);
  return 0;
}
