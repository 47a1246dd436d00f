#include "scheduler/fragmentation.h"

#include <cstdint>

namespace gpusched {

std::span<const TaskShape> DefaultTaskShapes() {
  static constexpr TaskShape kShapes[] = {
      {1, 1000, 0.40}, {1, 500, 0.15}, {1, 250, 0.15},
      {2, 1000, 0.10}, {4, 1000, 0.10}, {8, 1000, 0.10},
  };
  return kShapes;
}

double NodeFragmentation(std::span<const int> free_milli,
                         std::span<const TaskShape> shapes) {
  double total = 0;
  for (const TaskShape& shape : shapes) {
    int hosts = 0;
    int64_t too_small = 0;
    int64_t all_free = 0;
    for (int free : free_milli) {
      all_free += free;
      if (free >= shape.milli) {
        ++hosts;
      } else {
        too_small += free;
      }
    }
    const int64_t fragment = hosts >= shape.gpus ? too_small : all_free;
    total += shape.popularity * static_cast<double>(fragment);
  }
  return total;
}

}  // namespace gpusched
