#include "scheduler/dra_inventory.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {

std::string DraDeviceKey(std::string_view driver, std::string_view pool,
                         std::string_view device) {
  return absl::StrCat(Sv(driver), "/", Sv(pool), "/", Sv(device));
}

bool DraDeviceState::tainted() const {
  return std::any_of(
      device.taints.begin(), device.taints.end(), [](const DeviceTaint& taint) {
        return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
      });
}

// The slices of one pool's newest generation on a node.
struct DraInventory::PoolSlices {
  int64_t generation = -1;
  int64_t expected = 0;
  std::vector<const ResourceSlice*> slices;
};

void DraInventory::UpsertSlice(ResourceSlice slice) {
  DeleteSlice(slice.meta.name);
  if (slice.node_name.empty()) return;
  slices_by_node_[slice.node_name].insert(slice.meta.name);
  std::string name = slice.meta.name;
  slices_.insert_or_assign(std::move(name), std::move(slice));
}

void DraInventory::DeleteSlice(std::string_view name) {
  auto it = slices_.find(name);
  if (it == slices_.end()) return;
  auto node = slices_by_node_.find(it->second.node_name);
  if (node != slices_by_node_.end()) {
    node->second.erase(it->first);
    if (node->second.empty()) slices_by_node_.erase(node);
  }
  slices_.erase(it);
}

void DraInventory::UpsertClaim(ResourceClaim claim) {
  std::string key = DraKey(claim.meta);
  DeleteClaim(key);
  for (const DraAllocatedDevice& device : claim.allocation) {
    if (device.admin_access) continue;
    holder_[DraDeviceKey(device.driver, device.pool, device.device)] = key;
  }
  claims_.insert_or_assign(std::move(key), std::move(claim));
}

void DraInventory::DeleteClaim(std::string_view key) {
  auto it = claims_.find(key);
  if (it == claims_.end()) return;
  for (const DraAllocatedDevice& device : it->second.allocation) {
    auto held =
        holder_.find(DraDeviceKey(device.driver, device.pool, device.device));
    // Only this claim's: two claims naming one device is the API server's
    // inconsistency to settle, and the other keeps it held meanwhile.
    if (held != holder_.end() && held->second == key) holder_.erase(held);
  }
  claims_.erase(it);
}

void DraInventory::UpsertTaintRule(DeviceTaintRule rule) {
  std::string name = rule.meta.name;
  rules_.insert_or_assign(std::move(name), std::move(rule));
}

void DraInventory::DeleteTaintRule(std::string_view name) {
  auto it = rules_.find(name);
  if (it != rules_.end()) rules_.erase(it);
}

void DraInventory::ClearSlices() {
  slices_.clear();
  slices_by_node_.clear();
}

void DraInventory::ClearClaims() {
  claims_.clear();
  holder_.clear();
}

std::vector<std::string> DraInventory::Nodes() const {
  std::vector<std::string> nodes;
  for (const auto& [node, unused] : slices_by_node_) nodes.push_back(node);
  return nodes;
}

const std::string& DraInventory::HolderOf(std::string_view device_key) const {
  static const std::string kNobody;
  auto it = holder_.find(device_key);
  return it == holder_.end() ? kNobody : it->second;
}

bool SameDraDevices(const std::shared_ptr<const DraNodeDevices>& a,
                    const std::shared_ptr<const DraNodeDevices>& b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a == b || *a == *b;
}

const std::string& DraInventory::ReservedFor(std::string_view claim) const {
  static const std::string kNobody;
  auto it = claims_.find(claim);
  if (it == claims_.end() || it->second.reserved_for_uids.empty()) {
    return kNobody;
  }
  return it->second.reserved_for_uids.front();
}

std::map<std::string, DraInventory::PoolSlices> DraInventory::CurrentPools(
    std::string_view node, DraNodeDevices& out) const {
  std::map<std::string, PoolSlices> pools;
  auto names = slices_by_node_.find(node);
  if (names == slices_by_node_.end()) return pools;
  for (const std::string& name : names->second) {
    const ResourceSlice& slice = slices_.find(name)->second;
    PoolSlices& pool = pools[absl::StrCat(slice.driver, "/", slice.pool)];
    if (slice.pool_generation < pool.generation) continue;
    if (slice.pool_generation > pool.generation) {
      pool = PoolSlices{slice.pool_generation, slice.pool_slice_count, {}};
    }
    pool.slices.push_back(&slice);
  }
  for (auto it = pools.begin(); it != pools.end();) {
    const PoolSlices& pool = it->second;
    if (static_cast<int64_t>(pool.slices.size()) >= pool.expected) {
      ++it;
      continue;
    }
    out.problems.push_back(absl::StrCat(
        "pool ", it->first, ": generation ", pool.generation, " has ",
        pool.slices.size(), " of ", pool.expected, " slices; not counted"));
    it = pools.erase(it);
  }
  return pools;
}

namespace {

bool Selects(const DeviceTaintRule& rule, const DraDeviceState& state) {
  return (!rule.driver || *rule.driver == state.driver) &&
         (!rule.pool || *rule.pool == state.pool) &&
         (!rule.device || *rule.device == state.device.name);
}

// What the pool's allocated devices took from each shared counter.
using Spent = std::map<std::pair<std::string, std::string>, int64_t>;

void AddConsumption(const DraDevice& device, Spent& spent) {
  for (const DraCounterConsumption& use : device.consumes_counters) {
    for (const auto& [counter, amount] : use.counters) {
      spent[{use.counter_set, counter}] += amount;
    }
  }
}

bool Fits(const DraDevice& device, const Spent& capacity, const Spent& spent) {
  for (const DraCounterConsumption& use : device.consumes_counters) {
    for (const auto& [counter, amount] : use.counters) {
      const std::pair<std::string, std::string> key{use.counter_set, counter};
      auto have = capacity.find(key);
      if (have == capacity.end()) return false;
      auto used = spent.find(key);
      const int64_t taken = used == spent.end() ? 0 : used->second;
      if (have->second - taken < amount) return false;
    }
  }
  return true;
}

}  // namespace

void DraInventory::AddTaintsFromRules(DraDeviceState& state) const {
  for (const auto& [name, rule] : rules_) {
    if (Selects(rule, state)) state.device.taints.push_back(rule.taint);
  }
}

// `devices` are one pool's; its counter sets may sit in any of its slices.
void DraInventory::MarkSpentCounters(
    const std::vector<const ResourceSlice*>& pool_slices,
    std::vector<DraDeviceState>& devices) const {
  Spent capacity;
  Spent spent;
  for (const ResourceSlice* slice : pool_slices) {
    for (const DraCounterSet& set : slice->shared_counters) {
      for (const auto& [counter, amount] : set.counters) {
        capacity[{set.name, counter}] = amount;
      }
    }
  }
  for (const DraDeviceState& state : devices) {
    if (!state.claim.empty()) AddConsumption(state.device, spent);
  }
  for (DraDeviceState& state : devices) {
    if (state.claim.empty() && !state.device.consumes_counters.empty()) {
      state.counters_spent = !Fits(state.device, capacity, spent);
    }
  }
}

DraNodeDevices DraInventory::NodeDevices(std::string_view node) const {
  DraNodeDevices out;
  for (const auto& [pool_key, pool] : CurrentPools(node, out)) {
    std::vector<DraDeviceState> devices;
    for (const ResourceSlice* slice : pool.slices) {
      for (const DraDevice& device : slice->devices) {
        DraDeviceState state{slice->driver, slice->pool, device};
        state.claim =
            HolderOf(DraDeviceKey(slice->driver, slice->pool, device.name));
        state.reserved_for = ReservedFor(state.claim);
        AddTaintsFromRules(state);
        devices.push_back(std::move(state));
      }
    }
    MarkSpentCounters(pool.slices, devices);
    for (DraDeviceState& state : devices)
      out.devices.push_back(std::move(state));
  }
  std::sort(out.devices.begin(), out.devices.end(),
            [](const DraDeviceState& a, const DraDeviceState& b) {
              return std::tie(a.driver, a.pool, a.device.name) <
                     std::tie(b.driver, b.pool, b.device.name);
            });
  return out;
}

}  // namespace gpusched
