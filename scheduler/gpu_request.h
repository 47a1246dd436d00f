#ifndef GPUSCHED_SCHEDULER_GPU_REQUEST_H_
#define GPUSCHED_SCHEDULER_GPU_REQUEST_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// Annotation a pod sets to require its whole GPUs to share one NVLink island
// ("nvlink"); without it topology only scores, it never filters.
inline constexpr char kGpuLinkAnnotation[] = "gpusched.io/gpu-link";

// What a pod asks of a node's GPUs, derived from its effective requests and
// annotations.
struct GpuRequest {
  // nvidia.com/gpu: whole GPUs, or replicas on a time-sliced/MPS node.
  int gpus = 0;
  // gpusched.io/gpu-milli: a share of one GPU (1..999); 0 when absent.
  int milli = 0;
  // The whole GPUs must lie on one NVLink island.
  bool require_nvlink = false;
  // nvidia.com/mig-<profile> resources and counts, sorted by name.
  std::vector<std::pair<std::string, int64_t>> mig;

  bool empty() const { return gpus == 0 && milli == 0 && mig.empty(); }
};

// Fails with InvalidArgument when the annotations are malformed or
// inconsistent (a share needs exactly nvidia.com/gpu: 1).
absl::StatusOr<GpuRequest> GpuRequestOf(const Pod& pod,
                                        const ResourceList& requests);

// The pod annotations a node fit reads (the GPU share, the NVLink
// requirement, a bound pod's GPU ids): pods that differ only in other
// annotations fit the same nodes, which the queueing core's equivalence
// classes rely on. A new annotation the fit reads belongs here.
bool ReadByNodeFit(std::string_view annotation);

// True for nvidia.com/gpu and nvidia.com/mig-*: the resources the GPU fit
// check owns, so the generic resource check skips them.
bool IsGpuResource(std::string_view name);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_REQUEST_H_
