#ifndef GPUSCHED_SCHEDULER_RESOURCE_LIST_H_
#define GPUSCHED_SCHEDULER_RESOURCE_LIST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched {

// Well-known resource names.
inline constexpr std::string_view kCpu = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kPods = "pods";
inline constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

// Integer amounts per resource name, kept sorted by name so that iteration is
// deterministic. Units: cpu in milli-CPU, every other resource in its base
// unit (bytes for memory, devices for GPUs and MIG instances, count for pods).
class ResourceList {
 public:
  using Entry = std::pair<std::string, int64_t>;

  ResourceList() = default;
  ResourceList(std::initializer_list<Entry> entries);

  // Parses one quantity for `name` with the unit convention above.
  static absl::StatusOr<int64_t> ParseAmount(std::string_view name,
                                             std::string_view quantity);

  int64_t Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  void Set(std::string_view name, int64_t amount);
  void Add(std::string_view name, int64_t amount);
  void Add(const ResourceList& other);
  void Subtract(const ResourceList& other);
  // Per-resource maximum (used for init containers vs app containers).
  void MaxWith(const ResourceList& other);
  bool empty() const { return entries_.empty(); }
  const std::vector<Entry>& entries() const { return entries_; }

  // Formats an amount of `name` for messages: cpu "500m", memory "64Gi".
  static std::string FormatAmount(std::string_view name, int64_t amount);

  friend bool operator==(const ResourceList&, const ResourceList&) = default;

 private:
  std::vector<Entry>::iterator Find(std::string_view name);
  std::vector<Entry>::const_iterator Find(std::string_view name) const;
  std::vector<Entry> entries_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_RESOURCE_LIST_H_
