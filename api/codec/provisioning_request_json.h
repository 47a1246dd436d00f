#ifndef GPUSCHED_API_CODEC_PROVISIONING_REQUEST_JSON_H_
#define GPUSCHED_API_CODEC_PROVISIONING_REQUEST_JSON_H_

// autoscaling.x-k8s.io/v1 ProvisioningRequests (the CRD of the
// k8s.io/autoscaler/cluster-autoscaler/apis module) as gpusched's
// provisioning-request controller writes and reads them, named and
// labelled as Kueue v0.19.2's controller names them
// (pkg/controller/admissionchecks/provisioning/provisioning.go), so that a
// cluster-autoscaler and an admin see the same objects under both.
//
// Decoding reads status.conditions, and apart the class and parameters;
// unknown fields are ignored and null means absent. Errors are InvalidArgument
// naming the field: `ProvisioningRequest.status.conditions[0].type: missing`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/admission_checks.h"
#include "scheduler/k8s_objects.h"
#include "simdjson.h"

namespace gpusched {

// Kueue's label on the requests and pod templates its controller creates.
inline constexpr char kManagedByKueueLabel[] = "kueue.x-k8s.io/managed";

// Kueue's ProvisioningRequestName: "<workload>-<check>-<attempt>"; a name
// longer than 247 characters keeps its first 247 and a dash and the first
// five hex digits of its SHA-1 (limitObjectName).
std::string ProvisioningRequestName(std::string_view workload,
                                    std::string_view check, int attempt);
// "ppt-<request>-<pod set>", limited likewise.
std::string ProvisioningPodTemplateName(std::string_view request,
                                        std::string_view pod_set);
// The attempt a request named `name` is for (workload, check); nullopt
// when the name is not "<workload>-<check>-<digits>" (Kueue's
// getAttemptRegex).
std::optional<int> ProvisioningRequestAttempt(std::string_view name,
                                              std::string_view workload,
                                              std::string_view check);

// An object the request (or pod template) is owned by.
struct OwnerReference {
  std::string api_version;  // "v1"
  std::string kind;         // "Pod"
  std::string name;
  std::string uid;
  bool controller = false;

  bool operator==(const OwnerReference&) const = default;
};

struct ProvisioningPodSetRef {
  std::string pod_template;  // a ProvisioningPodTemplateName
  int32_t count = 0;
};

// What a ProvisioningRequest says: the config's class and parameters (and
// the pod's provreq.kueue.x-k8s.io/ annotations, as Kueue passes them),
// one pod set per PodTemplate, and its owners (the garbage collector
// deletes it with them).
struct ProvisioningRequestSpec {
  std::string namespace_name;
  std::string name;
  std::string class_name;
  StringMap parameters;
  std::vector<ProvisioningPodSetRef> pod_sets;
  std::vector<OwnerReference> owners;
};

// The request as the JSON body of a create.
std::string ProvisioningRequestJson(const ProvisioningRequestSpec& spec);

// The PodTemplate `name` of one of `request`'s pod sets, in its namespace
// with its label and owners, its template's spec `pod_spec_json` (a member
// pod's spec as the API server returned it, as Kueue copies the job's pod
// template).
std::string ProvisioningPodTemplateJson(const ProvisioningRequestSpec& request,
                                        std::string_view name,
                                        std::string_view pod_spec_json);

// status.conditions of a ProvisioningRequest: which of Accepted,
// Provisioned, Failed, BookingExpired and CapacityRevoked are True, with
// their messages.
absl::StatusOr<RequestConditions> DecodeProvisioningRequestConditions(
    simdjson::dom::element request,
    std::string_view path = "ProvisioningRequest");

// What a request was made with: spec.provisioningClassName and
// spec.parameters (both optional; a parameter that is no string is named).
struct RequestMadeWith {
  std::string class_name;
  StringMap parameters;
};
absl::StatusOr<RequestMadeWith> DecodeProvisioningRequestMadeWith(
    simdjson::dom::element request,
    std::string_view path = "ProvisioningRequest");

// Kueue's provReqSyncedWithConfig: the request has the config's class and
// every parameter of the config with its value (parameters the pods'
// annotations added are not compared). One that is not synced is deleted
// and made again.
bool RequestSyncedWithConfig(const RequestMadeWith& request,
                             const ProvisioningRequestConfig& config);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_PROVISIONING_REQUEST_JSON_H_
