// A node's DRA devices for tests, as NVIDIA's DRA driver publishes them
// (driver gpu.nvidia.com, devices gpu-N of type gpu, MIG devices of type
// mig with their profile), with claims and taints on them:
//
//   std::shared_ptr<const DraNodeDevices> dgx = MakeDraDevices("dgx-1")
//       .Gpus(8).Claim("gpu-2", "ml/a-gpus", "uid-a")
//       .Taint("gpu-5", {"xid", "79", "NoExecute"});
#ifndef GPUSCHED_TESTS_SCHEDULER_DRA_BUILDERS_H_
#define GPUSCHED_TESTS_SCHEDULER_DRA_BUILDERS_H_

#include <memory>
#include <string>
#include <utility>

#include "scheduler/dra_demand.h"
#include "scheduler/dra_inventory.h"

namespace gpusched::testing {

class DraDevicesBuilder {
 public:
  explicit DraDevicesBuilder(std::string pool) : pool_(std::move(pool)) {}

  // gpu-0 .. gpu-(n-1), with the driver's index and product name.
  DraDevicesBuilder& Gpus(int n,
                          std::string product = "NVIDIA H100 80GB HBM3") {
    for (int i = 0; i < n; ++i) {
      DraDeviceState& gpu = Add("gpu-" + std::to_string(i), "gpu");
      gpu.device.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt,
                                                       "", i};
      gpu.device.attributes["gpu.nvidia.com/productName"] = {
          DraAttribute::Kind::kString, product};
    }
    return *this;
  }
  // n MIG devices of `profile` ("1g.10gb") on GPU `parent`:
  // gpu-<parent>-mig-<profile>-<k>.
  DraDevicesBuilder& Mig(int parent, const std::string& profile, int n) {
    for (int k = 0; k < n; ++k) {
      DraDeviceState& mig = Add("gpu-" + std::to_string(parent) + "-mig-" +
                                    profile + "-" + std::to_string(k),
                                "mig");
      mig.device.attributes["gpu.nvidia.com/profile"] = {
          DraAttribute::Kind::kString, profile};
    }
    return *this;
  }
  DraDevicesBuilder& Claim(const std::string& device, std::string claim,
                           std::string reserved_for = "") {
    DraDeviceState& state = Find(device);
    state.claim = std::move(claim);
    state.reserved_for = std::move(reserved_for);
    return *this;
  }
  DraDevicesBuilder& Taint(const std::string& device, DeviceTaint taint) {
    Find(device).device.taints.push_back(std::move(taint));
    return *this;
  }
  // Free, but partitions took the shared counters it needs.
  DraDevicesBuilder& CountersSpent(const std::string& device) {
    Find(device).counters_spent = true;
    return *this;
  }
  DraDevicesBuilder& Problem(std::string problem) {
    devices_.problems.push_back(std::move(problem));
    return *this;
  }

  std::shared_ptr<const DraNodeDevices> Build() const {
    return std::make_shared<const DraNodeDevices>(devices_);
  }
  operator std::shared_ptr<const DraNodeDevices>() const {  // NOLINT
    return Build();
  }

 private:
  DraDeviceState& Add(std::string name, const std::string& type) {
    DraDeviceState state{.driver = "gpu.nvidia.com", .pool = pool_};
    state.device.name = std::move(name);
    state.device.attributes["gpu.nvidia.com/type"] = {
        DraAttribute::Kind::kString, type};
    devices_.devices.push_back(std::move(state));
    return devices_.devices.back();
  }
  DraDeviceState& Find(const std::string& device) {
    for (DraDeviceState& state : devices_.devices) {
      if (state.device.name == device) return state;
    }
    return Add(device, "gpu");  // a test names a device it did not add
  }

  std::string pool_;
  DraNodeDevices devices_;
};

inline DraDevicesBuilder MakeDraDevices(std::string pool) {
  return DraDevicesBuilder(std::move(pool));
}

inline constexpr char kGpuClassSelector[] =
    "device.driver == 'gpu.nvidia.com' && "
    "device.attributes['gpu.nvidia.com'].type == 'gpu'";

// NVIDIA's whole-GPU DeviceClass and a ResourceClaimTemplate `ns/name`
// whose request "gpus" asks `count` of it (with `mode` and the request's
// own selectors).
inline DraCatalog GpuTemplateCatalog(
    const std::string& ns, const std::string& name, int64_t count,
    DraRequestAlternative::Mode mode = DraRequestAlternative::Mode::kExactCount,
    std::vector<std::string> own_selectors = {}) {
  DraCatalog catalog;
  DeviceClass gpu_class;
  gpu_class.meta.name = "gpu.nvidia.com";
  gpu_class.selectors = {kGpuClassSelector};
  catalog.classes["gpu.nvidia.com"] = gpu_class;
  ResourceClaimTemplate claim_template;
  claim_template.meta.name = name;
  claim_template.meta.namespace_name = ns;
  DraRequestAlternative alt{.name = "gpus",
                            .device_class = "gpu.nvidia.com",
                            .selectors = std::move(own_selectors),
                            .mode = mode,
                            .count = count};
  claim_template.spec.requests.push_back({"gpus", {alt}});
  catalog.templates[ns + "/" + name] = claim_template;
  return catalog;
}

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_SCHEDULER_DRA_BUILDERS_H_
