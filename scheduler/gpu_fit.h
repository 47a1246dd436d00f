#ifndef GPUSCHED_SCHEDULER_GPU_FIT_H_
#define GPUSCHED_SCHEDULER_GPU_FIT_H_

#include "scheduler/fit_verdict.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/gpu_request.h"

namespace gpusched {

// The GPU check and the device allocator in one: whether `request` fits the
// node's free GPUs and, if so, which devices it gets.
//
// Allocation rules:
//  - k whole GPUs: the free set with the best link score (ChooseGpuSet);
//    with gpusched.io/gpu-link=nvlink, only sets inside one NVLink island.
//  - a share (gpusched.io/gpu-milli) on a time-sliced/MPS node: the fitting
//    GPU that leaves the least free share behind (best fit), lowest index on
//    ties, so whole GPUs stay free for whole-GPU pods.
//  - k plain replicas on a time-sliced/MPS node: k different GPUs with a
//    replica (1000/replicas milli) free each, best fit first.
//  - MIG: instances are counted per profile resource.
struct GpuPlan {
  FitVerdict verdict = FitVerdict::Fits();
  GpuAssignment assignment;
};

GpuPlan PlanGpus(const GpuRequest& request, const GpuInventory& inventory);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_FIT_H_
