#include "scheduler/pod_view.h"

namespace gpusched {

PodView PodView::Of(const Pod& pod) {
  PodView view;
  view.pod = &pod;
  view.requests = EffectiveRequests(pod);
  absl::StatusOr<GpuRequest> gpu = GpuRequestOf(pod, view.requests);
  if (gpu.ok()) {
    view.gpu = *std::move(gpu);
  } else {
    view.invalid_reason = std::string(gpu.status().message());
  }
  return view;
}

}  // namespace gpusched
