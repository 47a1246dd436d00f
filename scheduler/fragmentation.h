#ifndef GPUSCHED_SCHEDULER_FRAGMENTATION_H_
#define GPUSCHED_SCHEDULER_FRAGMENTATION_H_

#include <span>

namespace gpusched {

// A typical task shape and how often it arrives (FGD's workload model M).
struct TaskShape {
  int gpus = 1;        // GPUs per task
  int milli = 1000;    // milli-GPU per GPU (< 1000 only when gpus == 1)
  double popularity = 0;
};

// Shapes gpusched assumes when it knows nothing of the workload: mostly
// single GPUs, some shares, some multi-GPU tasks.
std::span<const TaskShape> DefaultTaskShapes();

// FGD's fragment measure of one node (Weng et al., ATC '23, §4.1): for each
// shape, if it fits, the free milli on GPUs too small for one of its slices;
// if it does not fit, all free milli. Weighted by popularity.
double NodeFragmentation(std::span<const int> free_milli,
                         std::span<const TaskShape> shapes);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_FRAGMENTATION_H_
