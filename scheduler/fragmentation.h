#ifndef GPUSCHED_SCHEDULER_FRAGMENTATION_H_
#define GPUSCHED_SCHEDULER_FRAGMENTATION_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace gpusched {

// A typical task shape and how often it arrives (FGD's workload model M).
struct TaskShape {
  int gpus = 1;      // GPUs per task
  int milli = 1000;  // milli-GPU per GPU (< 1000 only when gpus == 1)
  double popularity = 0;
  // Host resources the task needs beside its GPUs; 0 = not checked. FGD
  // counts a node's GPUs as fragment for a shape that lacks CPU there, the
  // commonest way whole GPUs strand on CPU-heavy clusters.
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
};

// Shapes gpusched assumes when it knows nothing of the workload: mostly
// single GPUs, some shares, some multi-GPU tasks.
std::span<const TaskShape> DefaultTaskShapes();

inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// What is left on one node, as the fragment measure sees it.
struct NodeFree {
  std::span<const int> gpu_milli;  // free milli of each healthy GPU
  int64_t cpu_milli = kUnlimited;
  int64_t memory_bytes = kUnlimited;
};

// How much a GPU stranded by the node's CPU or memory weighs against FGD's
// expected fragment. FGD's term is the loss for the next task only; GPUs
// whose node has run out of CPU are lost to every later task as well, so
// they weigh more than one expected fragment. Measured with the default
// scorer on the Alibaba trace replay at 130 % load (bench/results/
// trace_replay.md): 1 -> about 94.9 %, 4 -> 95.4 %, 8 -> 95.5 %, 16 ->
// 95.6 % GPU allocation; 8 is where the gain flattens.
inline constexpr double kHostStrandWeight = 8.0;

// The fragment measure of one node, in milli-GPU:
//  1. FGD's (Weng et al., ATC '23, §4.1): for each shape, if it fits (GPUs,
//     CPU and memory), the free milli on GPUs too small for one of its
//     slices; if not, all free milli; weighted by popularity. GPU-free
//     shapes are skipped: they never strand GPUs.
//  2. plus kHostStrandWeight x the free milli the workload cannot reach
//     because, at its popularity-weighted CPU (memory) per milli-GPU, the
//     node's free CPU (memory) runs out first. FGD sees CPU only where a
//     shape stops fitting; this sees the node's whole CPU budget, so that
//     CPU-heavy pods go to CPU-rich nodes before the CPU-poor ones strand.
// Shapes that ask no CPU or memory (DefaultTaskShapes) make step 2 zero.
double NodeFragmentation(const NodeFree& free,
                         std::span<const TaskShape> shapes);
// The GPU-only form: CPU and memory are not checked.
double NodeFragmentation(std::span<const int> free_milli,
                         std::span<const TaskShape> shapes);

// The shapes a scheduler has seen, learned online.
//
// Why learned: FGD scores against the workload's shape distribution. The
// paper reads it from the whole trace ahead of time, which a live scheduler
// cannot; the pods it is asked to place are the best sample of that
// distribution it has, and they follow the workload when it changes. Counts
// are halved every `half_life` observations so that last month's jobs fade.
// Until `min_observations` pods are seen, DefaultTaskShapes() stands in.
//
// A shape's popularity is its share of the GPU demand (pods x GPU milli),
// not of the pods. Like FGD's GetTypicalPods, only the most popular shapes
// that together cover `coverage` are kept (at most `max_shapes`), and
// renormalised: the rare tail costs time on every score and barely moves
// the measure.
//
// The shape list is republished only after the observations grow by a
// quarter (at most every `max_republish_interval`), so that scores stay
// comparable between calls and callers may cache them per version().
//
// Thread-safe: the live extender observes from filter while prioritize
// reads concurrently.
class TaskShapeModel {
 public:
  struct Options {
    int64_t min_observations = 64;
    double coverage = 0.9;
    int max_shapes = 24;
    int64_t half_life = 20000;
    int64_t max_republish_interval = 2048;
  };

  TaskShapeModel();
  explicit TaskShapeModel(Options options);

  // Records one pod's shape (popularity ignored). Pods without GPUs are
  // ignored.
  void Observe(const TaskShape& shape);
  // The current shapes; DefaultTaskShapes() until enough were seen. The
  // returned list stays valid for as long as the pointer is held.
  std::shared_ptr<const std::vector<TaskShape>> Shapes() const;
  // Increases each time Shapes() changes.
  uint64_t version() const;

 private:
  struct Key {
    int gpus;
    int milli;
    int64_t cpu_milli;
    int64_t memory_bytes;
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.gpus, k.milli, k.cpu_milli,
                        k.memory_bytes);
    }
  };
  void Decay();
  void Publish();

  Options options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<Key, double> weights_;
  int64_t observations_ = 0;
  int64_t published_at_ = 0;
  uint64_t version_ = 0;
  std::shared_ptr<const std::vector<TaskShape>> shapes_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_FRAGMENTATION_H_
