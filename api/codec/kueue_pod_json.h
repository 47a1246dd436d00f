// A pod of Kueue's pod integration (label kueue.x-k8s.io/managed=true), read
// for the one thing gpusched does with it beyond admission: releasing the
// kueue.x-k8s.io/managed finalizer Kueue's webhook put on it, where Kueue's
// manager would have, once that manager is gone (api/kube/kueue_finalizers.h).
#ifndef GPUSCHED_API_CODEC_KUEUE_POD_JSON_H_
#define GPUSCHED_API_CODEC_KUEUE_POD_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "simdjson.h"

namespace gpusched {

inline constexpr std::string_view kKueueManagedFinalizer =
    "kueue.x-k8s.io/managed";

struct KueueManagedPod {
  std::string namespace_name;
  std::string name;
  std::string uid;
  // Its Kueue pod group (the kueue.x-k8s.io/pod-group-name label, else the
  // annotation of that name Kueue writes with WorkloadIdentifierAnnotations);
  // "" for a pod alone.
  std::string group;
  bool has_finalizer = false;  // metadata.finalizers names Kueue's
  bool terminal = false;       // status.phase Succeeded or Failed
  bool deleting = false;       // metadata.deletionTimestamp is set
  std::string Key() const { return namespace_name + "/" + name; }
};

// Errors name the field: `metadata.finalizers: expected an array of
// strings`; a pod without metadata.name or namespace is refused.
absl::StatusOr<KueueManagedPod> DecodeKueueManagedPod(
    simdjson::dom::element pod);

// The strategic merge patch that removes Kueue's finalizer from the pod
// whose metadata.uid is `uid`, and leaves any other (a Job's tracking
// finalizer) where it is.
std::string ReleaseKueueFinalizerPatch(std::string_view uid);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_KUEUE_POD_JSON_H_
