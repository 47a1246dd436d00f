// What `explain` says about a workload's DRA claims: each request (claim,
// request, device class, count, selectors, and whether gpusched checks it
// on each node or leaves it to kube-scheduler and why), how it is charged
// to quota, how a node's devices stand against it, and the devices an
// admitted member holds by their DRA names. Computed on demand for one
// workload; nothing here runs on the filter's path.
#ifndef GPUSCHED_SCHEDULER_DRA_EXPLAIN_H_
#define GPUSCHED_SCHEDULER_DRA_EXPLAIN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/dra_demand.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/dra_quota.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/resource_list.h"

namespace gpusched {

// One way to meet one request of a claim (its `exactly`, or one of its
// firstAvailable alternatives, in order).
struct DraRequestLine {
  std::string claim;    // "ns/name", or "template ns/name" before the claim
  std::string request;  // "gpus", or "gpus/h100" for an alternative
  std::string device_class;
  int64_t count = 0;
  // The CEL expressions gpusched evaluates: the class's, then the
  // request's own (an expression outside the subset is not among them).
  std::vector<std::string> selectors;
  // Empty when gpusched checks it on each node; else why kube-scheduler
  // alone decides it ("allocationMode All takes every matching device").
  std::string left_to_kube_scheduler;
  friend bool operator==(const DraRequestLine&,
                         const DraRequestLine&) = default;
};

// The DRA devices one admitted member holds on its node, by their names.
struct DraMemberDevices {
  std::string pod;
  std::string node;
  // What its claims' allocations name ("gpu-2"), and those claims.
  std::vector<std::string> allocated;
  std::vector<std::string> claims;
  // What gpusched planned while no allocation is reserved for the pod yet
  // (gpusched.io/planned-gpus; kube-scheduler allocates).
  std::vector<std::string> planned;
  friend bool operator==(const DraMemberDevices&,
                         const DraMemberDevices&) = default;
};

struct DraExplanation {
  std::string pod;  // the member whose claims are shown
  std::vector<DraRequestLine> requests;
  std::vector<std::string> allocated_claims;  // allocated before admission
  std::string allocated_node;                 // where they pin the pod
  std::vector<std::string> missing;           // claims, templates, classes
  ResourceList charged;                       // in quota's resource names
  std::vector<std::string> uncharged;         // request: why not charged
  // Why quota cannot charge the claims as they stand, naming the field
  // (ClaimCharge::hold): the workload waits; "" when it can.
  std::string held;
  std::vector<DraMemberDevices> members;  // admitted members' devices
  friend bool operator==(const DraExplanation&,
                         const DraExplanation&) = default;
};

// A pod's claims read at one moment: what they ask and their charge.
struct DraPodClaims {
  DraDemand demand;
  ClaimCharge charge;
};

// Where explain reads the DRA objects: the live DRA sync. A model pod
// carries a demand only where its charged count does not say all
// (Pod::dra_demand), and no reasons for what was not charged. Unset: only
// what the pod carries.
struct DraLookup {
  std::function<DraPodClaims(const Pod&,
                             const std::vector<DeviceClassMapping>&)>
      claims;
};

// True when the pod asks anything of DRA (claims, or a claim made for an
// extended resource, or an attached demand).
bool HasDraClaims(const Pod& pod);

// The pod's claims: from the lookup when it has one, else what the pod
// carries (its attached demand, possibly none, and its charged count).
DraPodClaims ClaimsForExplain(const Pod& pod, const DraLookup& lookup,
                              const std::vector<DeviceClassMapping>& mappings);

// The pod's requests, charge and pins, as explain shows them.
DraExplanation ExplainDraDemand(const Pod& pod, const DraDemand& demand,
                                const ClaimCharge& charge);

// How the node's devices stand against each decided request they cannot
// meet: "claim ml/a request gpus wants 2 gpu.nvidia.com: 1 free, 6
// allocated, 1 tainted (gpu-7 xid=79:NoExecute) of 8 matching". "" when
// every decided request finds enough free matching devices.
std::string DraNodeShortage(const DraDemand& demand,
                            const DraNodeDevices& devices);

// The devices claims reserved for pod `uid` hold on the node.
DraMemberDevices DraDevicesOfPod(const DraNodeDevices& devices,
                                 std::string_view uid);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_EXPLAIN_H_
