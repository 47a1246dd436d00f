#ifndef GPUSCHED_API_CODEC_BINDING_JSON_H_
#define GPUSCHED_API_CODEC_BINDING_JSON_H_

// The v1 Binding a bind posts (pods/binding), and what a bind that
// conflicted reads back of the pod to tell "already ours" from "taken".

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// A v1 Binding of `pod` to `node`: metadata.uid (when the pod has one) makes
// the API server refuse a pod recreated under the name, and the GPU ids
// ride along as the gpusched.io/gpu-ids annotation.
std::string EncodeBinding(const Pod& pod, std::string_view node,
                          const GpuAssignment& assignment);

// Where a Pod (JSON) is bound: metadata.uid and spec.nodeName, each empty
// when absent or null. Errors name the field.
struct PodPlacement {
  std::string uid;
  std::string node;
};
absl::StatusOr<PodPlacement> DecodePodPlacement(std::string_view pod_json);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_BINDING_JSON_H_
