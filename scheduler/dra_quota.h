#ifndef GPUSCHED_SCHEDULER_DRA_QUOTA_H_
#define GPUSCHED_SCHEDULER_DRA_QUOTA_H_

// How a pod's resource claims are charged, in the resource names quota
// counts (Kueue's Configuration resources.deviceClassMappings): a request
// for 2 devices of a class mapped to nvidia.com/gpu charges nvidia.com/gpu:
// 2, exactly as a device-plugin request of 2 GPUs would. That one number
// is then all that quota, gang admission and placement see of the claim.
//
// As Kueue counts: allocationMode All is not charged (the count is not
// known before allocation), and firstAvailable only when every alternative
// maps to the same resource and count. A claim kube-scheduler made for an
// extended resource (KEP-5004) is not charged here: the container's
// nvidia.com/gpu request already is, so the GPUs are charged once.

#include <string>
#include <vector>

#include "scheduler/dra_demand.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/resource_list.h"

namespace gpusched {

// One entry of deviceClassMappings: the claims' devices of these classes
// count as `resource`.
struct DeviceClassMapping {
  std::string resource;
  std::vector<std::string> device_classes;
};

// Without mappings in the policy: a class with extendedResourceName X is
// X, and NVIDIA's whole-GPU class gpu.nvidia.com is nvidia.com/gpu.
std::string DefaultClassResource(const DeviceClass& device_class);

struct ClaimCharge {
  ResourceList requests;
  // Requests not charged, and why ("claim e2e/a request gpus: allocation
  // mode All is not counted"), for the log and explain.
  std::vector<std::string> uncharged;
};

// The charge of the pod's resource claims (resolved claims, else their
// templates; allocated or not: a running pod is still charged).
ClaimCharge ChargeClaims(const Pod& pod, const DraCatalog& catalog,
                         const std::vector<DeviceClassMapping>& mappings);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_QUOTA_H_
