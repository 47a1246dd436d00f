// The admission webhook's reader and writer of admission.k8s.io/v1
// AdmissionReview objects: what gpusched decides for one pod CREATE, as a
// value, with no HTTP or TLS (admission_webhook.h serves it). Apart from the
// server so that it can be fuzzed alone (tests/fuzz/admission_review_fuzz).
#ifndef GPUSCHED_API_SERVER_ADMISSION_REVIEW_H_
#define GPUSCHED_API_SERVER_ADMISSION_REVIEW_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/codec/pod_admission_state.h"  // kAdmissionGate
#include "scheduler/k8s_objects.h"

namespace gpusched {

inline constexpr std::string_view kAdmissionGateName = kAdmissionGate;

struct AdmissionWebhookOptions {
  // Pods of this scheduler are gated; all others pass untouched, but
  // those of the schedulers below.
  std::string scheduler_name = "gpusched";
  // A pod of one of these schedulers that the queueing core holds (a queue
  // label or a gang key: `manages` below, which must be set) is moved to
  // `scheduler_name` and gated. Without this, a pod a Job makes for the
  // default scheduler in a queued namespace (the norm under Kueue, whose
  // webhook gates pods whatever their scheduler) is bound at once, past its
  // queue's quota. schedulerName is immutable after creation, so the
  // webhook is the one place to change it.
  std::vector<std::string> adopted_schedulers = {"default-scheduler"};
  // Whether to move them now; unset: always.
  std::function<bool()> adopting;
  // A larger review gets a 400. A pod is at most 1.5 MiB in etcd, and the API
  // server takes request bodies of at most 3 MiB, so a review of a pod
  // CREATE (object, no oldObject) stays well below this.
  size_t body_limit_bytes = 4 << 20;
  // Whether the queueing core holds the pod (a queue label or a gang key),
  // from its namespace, name, labels and annotations. Only such pods are
  // gated: any other pod of our scheduler has no admission to wait for, so
  // it goes straight to kube-scheduler and filter, and a gate nobody lifts
  // would hold it forever. Unset: every pod of our scheduler is gated.
  std::function<bool(const Pod&)> manages;
};

// What the webhook does with one review: a value, not an error.
enum class PodGating {
  kNotOurs,       // not a Pod CREATE of our scheduler: allowed as is
  kNotManaged,    // our scheduler's, but no queue or gang: allowed as is
  kAlreadyGated,  // ours, and the gate is there already
  kGate,          // ours: allowed with a patch that adds the gate
  kAdopt,         // an adopted scheduler's, managed: moved to ours, gated
};

struct AdmissionDecision {
  std::string uid;  // request.uid, echoed in the response
  PodGating gating = PodGating::kNotOurs;
  std::string patch;  // JSONPatch (not yet base64) when gating == kGate
  std::string pod;    // "namespace/name" (or generateName), for logs
};

// Decodes an admission.k8s.io/v1 AdmissionReview and decides. Errors
// (InvalidArgument) name the field: not JSON, wrong apiVersion/kind, no
// request, no request.uid, a body over the limit, malformed schedulingGates.
absl::StatusOr<AdmissionDecision> DecidePodGating(
    std::string_view body, const AdmissionWebhookOptions& options);

// The AdmissionReview response for `decision`: always allowed.
std::string AdmissionResponseJson(const AdmissionDecision& decision);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_ADMISSION_REVIEW_H_
