// A node's GPUs as NVIDIA's DRA driver publishes them (ResourceSlices of
// driver gpu.nvidia.com), in the same inventory as device-plugin GPUs, so
// that filter, scoring, topology and gang placement treat both alike.

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/gpu_inventory.h"

namespace gpusched {
namespace {

constexpr std::string_view kNvidiaDriver = "gpu.nvidia.com";

const DraAttribute* Attribute(const DraDevice& device, std::string_view name) {
  auto it =
      device.attributes.find(absl::StrCat(Sv(kNvidiaDriver), "/", Sv(name)));
  return it == device.attributes.end() ? nullptr : &it->second;
}

std::string TextAttribute(const DraDevice& device, std::string_view name) {
  const DraAttribute* attribute = Attribute(device, name);
  return attribute != nullptr && attribute->kind == DraAttribute::Kind::kString
             ? attribute->text
             : "";
}

// The driver's `index` attribute, else the N of its "gpu-N" name.
int64_t GpuIndex(const DraDevice& device) {
  const DraAttribute* index = Attribute(device, "index");
  if (index != nullptr && index->kind == DraAttribute::Kind::kInt) {
    return index->number;
  }
  int64_t parsed = 0;
  std::string_view name = device.name;
  if (name.starts_with("gpu-") &&
      absl::SimpleAtoi(Sv(name.substr(4)), &parsed)) {
    return parsed;
  }
  return kMaxGpusPerNode;  // after the numbered ones
}

// "NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3", as GFD labels it, so
// that the product rules (default NVLink topology) apply alike.
std::string GfdProduct(const std::string& product_name) {
  return absl::StrReplaceAll(product_name, {{" ", "-"}});
}

bool Held(const DraDeviceState& state) {
  return !state.claim.empty() || state.counters_spent;
}

}  // namespace

void GpuInventory::LoadDraDevices(const DraNodeDevices& dra) {
  std::vector<const DraDeviceState*> gpus;
  for (const DraDeviceState& state : dra.devices) {
    if (state.driver == kNvidiaDriver &&
        TextAttribute(state.device, "type") == "gpu") {
      gpus.push_back(&state);
    }
  }
  std::stable_sort(gpus.begin(), gpus.end(), [](auto* a, auto* b) {
    return GpuIndex(a->device) < GpuIndex(b->device);
  });
  if (gpus.size() > static_cast<size_t>(kMaxGpusPerNode)) {
    gpus.resize(kMaxGpusPerNode);
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    const DraDeviceState& state = *gpus[i];
    GpuDevice device{.index = static_cast<int>(i),
                     .healthy = !state.tainted(),
                     .dra_name = state.device.name};
    if (Held(state)) {
      device.free_milli = 0;
      device.holders.push_back(state.claim.empty()
                                   ? "partitioned " + state.device.name
                                   : "claim " + state.claim);
      if (!state.claim.empty() && !state.reserved_for.empty()) {
        claimed_by_pod_[state.reserved_for].gpus.emplace_back(
            static_cast<int>(i), device.holders.back());
      }
    }
    devices_.push_back(std::move(device));
  }
  LoadDraMig(dra);
  if (labels_.product.empty() && !gpus.empty()) {
    labels_.product = GfdProduct(TextAttribute(gpus[0]->device, "productName"));
  }
}

// MIG devices by profile, as the device plugin's nvidia.com/mig-<profile>
// pools. A claim holds its instances under its name, recorded for the pod
// it is reserved for, so that TakeClaimedBy hands them to that pod: the
// pod's instances are counted once, not by its claim and again by it.
void GpuInventory::LoadDraMig(const DraNodeDevices& dra) {
  std::map<std::string, MigPool> pools;
  // (pod UID, resource, holder) -> instances.
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> claimed;
  for (const DraDeviceState& state : dra.devices) {
    const std::string profile = TextAttribute(state.device, "profile");
    if (state.driver != kNvidiaDriver || state.tainted() || profile.empty() ||
        TextAttribute(state.device, "type") != "mig") {
      continue;
    }
    const std::string resource = absl::StrCat(Sv(kMigResourcePrefix), profile);
    MigPool& pool = pools[resource];
    pool.capacity += 1;
    if (!Held(state)) continue;
    pool.used += 1;
    if (state.claim.empty()) continue;
    std::string holder = "claim " + state.claim;
    auto at =
        std::lower_bound(pool.holders.begin(), pool.holders.end(), holder);
    if (at == pool.holders.end() || *at != holder)
      pool.holders.insert(at, holder);
    if (!state.reserved_for.empty()) {
      claimed[{state.reserved_for, resource, std::move(holder)}] += 1;
    }
  }
  for (auto& [resource, pool] : pools) {
    pool.resource = resource;
    mig_pools_.push_back(std::move(pool));
  }
  for (const auto& [key, count] : claimed) {
    const auto& [uid, resource, holder] = key;
    claimed_by_pod_[uid].mig.push_back({resource, holder, count});
  }
}

std::vector<std::string> GpuInventory::DraNamesOf(
    const std::vector<int>& gpu_ids) const {
  std::vector<std::string> names;
  for (int id : gpu_ids) {
    if (id < 0 || id >= static_cast<int>(devices_.size()) ||
        devices_[id].dra_name.empty()) {
      return {};
    }
    names.push_back(devices_[id].dra_name);
  }
  return names;
}

std::optional<GpuAssignment> GpuInventory::TakeClaimedBy(std::string_view uid) {
  auto found = claimed_by_pod_.find(uid);
  if (found == claimed_by_pod_.end()) return std::nullopt;
  GpuAssignment assignment{.milli_per_gpu = kMilliPerGpu};
  for (const auto& [index, holder] : found->second.gpus) {
    GpuDevice& device = devices_[index];
    // Still the claim's: hand it over. Already handed over (the pod was
    // placed, removed and is placed again): the same GPUs, if free.
    if (std::erase(device.holders, holder) > 0)
      device.free_milli = kMilliPerGpu;
    assignment.gpu_ids.push_back(index);
  }
  std::sort(assignment.gpu_ids.begin(), assignment.gpu_ids.end());
  CountFree();
  TakeClaimedMig(found->second.mig, assignment);
  return assignment;
}

// As for GPUs: instances still the claim's are handed over; already handed
// over, the pod gets the same count again, if free.
void GpuInventory::TakeClaimedMig(const std::vector<ClaimedMig>& claimed,
                                  GpuAssignment& assignment) {
  std::map<std::string, int64_t> counts;  // sorted, as GpuAssignment::mig
  for (const ClaimedMig& held : claimed) {
    for (MigPool& pool : mig_pools_) {
      if (pool.resource == held.resource &&
          std::erase(pool.holders, held.holder) > 0) {
        pool.used -= held.count;
      }
    }
    counts[held.resource] += held.count;
  }
  assignment.mig.assign(counts.begin(), counts.end());
}

}  // namespace gpusched
