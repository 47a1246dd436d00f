#include "scheduler/fragmentation.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace gpusched {
namespace {

bool HostFits(const NodeFree& free, const TaskShape& shape) {
  return free.cpu_milli >= shape.cpu_milli &&
         free.memory_bytes >= shape.memory_bytes;
}

// One shape's fragment on a node with `all_free` milli free (FGD): if the
// shape fits, the free milli on GPUs too small for one of its slices; if
// not, all of it.
int64_t ShapeFragment(std::span<const int> gpu_milli, int64_t all_free,
                      const TaskShape& shape, bool host_fits) {
  if (!host_fits) return all_free;
  int hosts = 0;
  int64_t too_small = 0;
  for (int free : gpu_milli) {
    if (free >= shape.milli) {
      ++hosts;
    } else {
      too_small += free;
    }
  }
  return hosts >= shape.gpus ? too_small : all_free;
}

// The free GPU milli the workload's tasks cannot reach because the node's
// CPU or memory runs out first, at the workload's own CPU and memory per
// milli-GPU (popularity-weighted over the shapes).
double HostStranded(const NodeFree& free, std::span<const TaskShape> shapes,
                    int64_t all_free) {
  double cpu = 0;
  double memory = 0;
  double gpu = 0;
  for (const TaskShape& shape : shapes) {
    if (shape.gpus <= 0) continue;
    cpu += shape.popularity * static_cast<double>(shape.cpu_milli);
    memory += shape.popularity * static_cast<double>(shape.memory_bytes);
    gpu += shape.popularity * shape.gpus * shape.milli;
  }
  if (gpu <= 0) return 0;
  double reachable = static_cast<double>(all_free);
  if (cpu > 0 && free.cpu_milli != kUnlimited) {
    reachable = std::min(reachable, free.cpu_milli / (cpu / gpu));
  }
  if (memory > 0 && free.memory_bytes != kUnlimited) {
    reachable = std::min(reachable, free.memory_bytes / (memory / gpu));
  }
  return static_cast<double>(all_free) - std::max(0.0, reachable);
}

}  // namespace

std::span<const TaskShape> DefaultTaskShapes() {
  static constexpr TaskShape kShapes[] = {
      {1, 1000, 0.40}, {1, 500, 0.15},  {1, 250, 0.15},
      {2, 1000, 0.10}, {4, 1000, 0.10}, {8, 1000, 0.10},
  };
  return kShapes;
}

double NodeFragmentation(const NodeFree& free,
                         std::span<const TaskShape> shapes) {
  int64_t all_free = 0;
  for (int milli : free.gpu_milli) all_free += milli;
  if (all_free == 0) return 0;  // nothing left to strand
  double total = kHostStrandWeight * HostStranded(free, shapes, all_free);
  for (const TaskShape& shape : shapes) {
    if (shape.gpus <= 0) continue;
    const int64_t fragment =
        ShapeFragment(free.gpu_milli, all_free, shape, HostFits(free, shape));
    total += shape.popularity * static_cast<double>(fragment);
  }
  return total;
}

double NodeFragmentation(std::span<const int> free_milli,
                         std::span<const TaskShape> shapes) {
  return NodeFragmentation(NodeFree{.gpu_milli = free_milli}, shapes);
}

TaskShapeModel::TaskShapeModel() : TaskShapeModel(Options{}) {}

TaskShapeModel::TaskShapeModel(Options options) : options_(options) {
  shapes_ = std::make_shared<const std::vector<TaskShape>>(
      DefaultTaskShapes().begin(), DefaultTaskShapes().end());
}

void TaskShapeModel::Observe(const TaskShape& shape) {
  if (shape.gpus <= 0 || shape.milli <= 0) return;
  std::lock_guard lock(mu_);
  // Weighted by the GPU the pod asks for: fragments are milli-GPU, and an
  // 8-GPU job brings as much demand as eight 1-GPU jobs. Counted by pods,
  // the rare large jobs fall below the coverage cut, and FGD then happily
  // breaks up the last empty nodes they need.
  weights_[Key{shape.gpus, shape.milli, shape.cpu_milli, shape.memory_bytes}] +=
      static_cast<double>(shape.gpus) * shape.milli / 1000.0;
  ++observations_;
  if (observations_ % options_.half_life == 0) Decay();
  const int64_t since = observations_ - published_at_;
  const bool first =
      published_at_ == 0 && observations_ >= options_.min_observations;
  const bool grown =
      published_at_ > 0 &&
      (since * 4 >= published_at_ || since >= options_.max_republish_interval);
  if (first || grown) Publish();
}

// Halves every count; shapes that faded to almost nothing are dropped.
void TaskShapeModel::Decay() {
  for (auto& [key, weight] : weights_) weight /= 2;
  absl::erase_if(weights_, [](const auto& kv) { return kv.second < 0.01; });
}

void TaskShapeModel::Publish() {
  std::vector<std::pair<Key, double>> ranked(weights_.begin(), weights_.end());
  // Most frequent first; the key decides ties, never the hash order.
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return std::tie(a.first.gpus, a.first.milli, a.first.cpu_milli,
                    a.first.memory_bytes) <
           std::tie(b.first.gpus, b.first.milli, b.first.cpu_milli,
                    b.first.memory_bytes);
  });
  double total = 0;
  for (const auto& [key, weight] : ranked) total += weight;
  auto shapes = std::make_shared<std::vector<TaskShape>>();
  double kept = 0;
  for (const auto& [key, weight] : ranked) {
    if (kept >= options_.coverage * total ||
        static_cast<int>(shapes->size()) >= options_.max_shapes) {
      break;
    }
    shapes->push_back(TaskShape{.gpus = key.gpus,
                                .milli = key.milli,
                                .popularity = weight,
                                .cpu_milli = key.cpu_milli,
                                .memory_bytes = key.memory_bytes});
    kept += weight;
  }
  for (TaskShape& shape : *shapes) shape.popularity /= kept;
  shapes_ = std::move(shapes);
  published_at_ = observations_;
  ++version_;
}

std::shared_ptr<const std::vector<TaskShape>> TaskShapeModel::Shapes() const {
  std::lock_guard lock(mu_);
  return shapes_;
}

uint64_t TaskShapeModel::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

}  // namespace gpusched
