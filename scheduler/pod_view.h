#ifndef GPUSCHED_SCHEDULER_POD_VIEW_H_
#define GPUSCHED_SCHEDULER_POD_VIEW_H_

#include <string>

#include "scheduler/gpu_request.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// A pod with what every node check needs computed once per request.
struct PodView {
  const Pod* pod = nullptr;
  ResourceList requests;  // effective requests
  GpuRequest gpu;
  // Set when the pod itself is malformed (bad annotation): it then fails
  // every node with this reason, as unresolvable.
  std::string invalid_reason;

  static PodView Of(const Pod& pod);
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_POD_VIEW_H_
