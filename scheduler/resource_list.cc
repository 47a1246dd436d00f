#include "scheduler/resource_list.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/quantity.h"

namespace gpusched {

ResourceList::ResourceList(std::initializer_list<Entry> entries) {
  for (const auto& [name, amount] : entries) Set(name, amount);
}

absl::StatusOr<int64_t> ResourceList::ParseAmount(std::string_view name,
                                                  std::string_view quantity) {
  return ParseQuantity(quantity, name == kCpu ? 1000 : 1);
}

std::vector<ResourceList::Entry>::iterator ResourceList::Find(
    std::string_view name) {
  return std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const Entry& e, std::string_view n) { return e.first < n; });
}

std::vector<ResourceList::Entry>::const_iterator ResourceList::Find(
    std::string_view name) const {
  return std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const Entry& e, std::string_view n) { return e.first < n; });
}

int64_t ResourceList::Get(std::string_view name) const {
  auto it = Find(name);
  return it != entries_.end() && it->first == name ? it->second : 0;
}

bool ResourceList::Has(std::string_view name) const {
  auto it = Find(name);
  return it != entries_.end() && it->first == name;
}

void ResourceList::Set(std::string_view name, int64_t amount) {
  auto it = Find(name);
  if (it != entries_.end() && it->first == name) {
    it->second = amount;
  } else {
    entries_.emplace(it, std::string(name), amount);
  }
}

void ResourceList::Add(std::string_view name, int64_t amount) {
  auto it = Find(name);
  if (it != entries_.end() && it->first == name) {
    it->second += amount;
  } else {
    entries_.emplace(it, std::string(name), amount);
  }
}

void ResourceList::Add(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_) Add(name, amount);
}

void ResourceList::Subtract(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_) Add(name, -amount);
}

void ResourceList::MaxWith(const ResourceList& other) {
  for (const auto& [name, amount] : other.entries_) {
    if (amount > Get(name)) Set(name, amount);
  }
}

std::string ResourceList::FormatAmount(std::string_view name, int64_t amount) {
  if (name == kCpu) return FormatMilli(amount);
  if (name == kMemory || name.find("storage") != std::string_view::npos) {
    static constexpr std::pair<int64_t, const char*> kUnits[] = {
        {int64_t{1} << 40, "Ti"},
        {int64_t{1} << 30, "Gi"},
        {int64_t{1} << 20, "Mi"},
        {int64_t{1} << 10, "Ki"}};
    for (const auto& [size, suffix] : kUnits) {
      if (amount >= size && amount % size == 0) {
        return absl::StrCat(amount / size, suffix);
      }
    }
    for (const auto& [size, suffix] : kUnits) {
      if (amount >= size) {
        return absl::StrFormat("%.1f%s", static_cast<double>(amount) / size,
                               suffix);
      }
    }
  }
  return absl::StrCat(amount);
}

}  // namespace gpusched
