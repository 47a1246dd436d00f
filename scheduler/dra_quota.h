#ifndef GPUSCHED_SCHEDULER_DRA_QUOTA_H_
#define GPUSCHED_SCHEDULER_DRA_QUOTA_H_

// How a pod's resource claims are charged, in the resource names quota
// counts (Kueue's Configuration resources.deviceClassMappings): a request
// for 2 devices of a class mapped to nvidia.com/gpu charges nvidia.com/gpu:
// 2, exactly as a device-plugin request of 2 GPUs would. That one number
// is then all that quota, gang admission and placement see of the claim.
//
// A claim quota cannot count is never admitted uncharged: as Kueue's DRA
// integration (v0.19.2, pkg/dra), its workload is inadmissible and waits
// (ClaimHold::kInadmissible) until the claim or the mapping changes:
//   exactly, ExactCount, class mapped     charged `count`
//   exactly, allocationMode All           inadmissible
//   exactly, adminAccess                  inadmissible
//   class mapped to no resource           inadmissible
//   firstAvailable, alternatives that     inadmissible
//     differ in resource or count
// gpusched accepts more than Kueue, on purpose:
//   firstAvailable, every alternative     charged that (Kueue: inadmissible)
//     charging the same resource and count
//   class in deviceClassesOutsideQuota    charged nothing (the admin's word)
//   claim or template not known yet       waits for it (kClaimNotKnown)
//   the pod's own ResourceClaim           charged as its spec (Kueue:
//                                         inadmissible)
//   no mapping in the policy              gpu.nvidia.com is nvidia.com/gpu,
//                                         a class with extendedResourceName
//                                         X is X
// A claim kube-scheduler made for an extended resource (KEP-5004) is not
// charged here: the container's nvidia.com/gpu request already is, so the
// GPUs are charged once.

#include <string>
#include <vector>

#include "scheduler/dra_demand.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/resource_list.h"

namespace gpusched {

// One entry of deviceClassMappings: the claims' devices of these classes
// count as `resource`; or, outside_quota (SchedulerConfig
// resources.deviceClassesOutsideQuota), as nothing at all.
struct DeviceClassMapping {
  std::string resource;
  std::vector<std::string> device_classes;
  bool outside_quota = false;
};

// Without mappings in the policy: a class with extendedResourceName X is
// X, and NVIDIA's whole-GPU class gpu.nvidia.com is nvidia.com/gpu.
std::string DefaultClassResource(const DeviceClass& device_class);

struct ClaimCharge {
  ResourceList requests;
  // Requests charged nothing on purpose, and why ("template ml/nics
  // request nic: DeviceClass nic.example.com is outside quota"), for the
  // log and explain.
  std::vector<std::string> uncharged;
  // Set when the claims cannot be charged as they stand: the pod's
  // workload waits (the first inadmissible request, else the first claim
  // not known).
  ClaimHold hold;
};

// The charge of the pod's resource claims (resolved claims, else their
// templates; allocated or not: a running pod is still charged).
ClaimCharge ChargeClaims(const Pod& pod, const DraCatalog& catalog,
                         const std::vector<DeviceClassMapping>& mappings);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_QUOTA_H_
