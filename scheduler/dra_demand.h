#ifndef GPUSCHED_SCHEDULER_DRA_DEMAND_H_
#define GPUSCHED_SCHEDULER_DRA_DEMAND_H_

// What a pod asks of DRA devices, resolved from its ResourceClaims (or,
// before the resourceclaim controller made them, their templates) and the
// DeviceClasses they name, and whether one node can meet it now.
//
// gpusched judges a node only where it can do so exactly: selectors in the
// CEL subset (dra_selector.h), ExactCount requests. A selector outside the
// subset, allocationMode All, or firstAvailable alternatives that differ
// leave the request "undecided": gpusched does not refuse the node for
// it, and kube-scheduler's DynamicResources plugin, which allocates, has
// the last word.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/dra_inventory.h"
#include "scheduler/dra_objects.h"
#include "scheduler/dra_selector.h"
#include "scheduler/dra_selector_memo.h"

namespace gpusched {

// The DRA objects a pod's demand is resolved against, by DraKey.
struct DraCatalog {
  std::map<std::string, ResourceClaim, std::less<>> claims;
  std::map<std::string, ResourceClaimTemplate, std::less<>> templates;
  std::map<std::string, DeviceClass, std::less<>> classes;
};

// One way to meet a request (its `exactly`, or one of `firstAvailable`).
struct DraAlternativeDemand {
  std::string name;  // "request" or "request/subrequest"
  std::string device_class;
  int64_t count = 0;
  // The class's selectors, then the request's: all must hold.
  std::vector<DeviceSelector> selectors;
  std::vector<DeviceToleration> tolerations;
  // Non-empty when gpusched leaves this alternative to kube-scheduler.
  std::string undecided;
  // The request adds selectors of its own to its class's.
  bool own_selectors = false;
  // The selectors' expressions and the tolerations, each length-prefixed:
  // a node's devices memoise which of them this alternative can take
  // under it (DraNodeDevices::memo).
  DraMemoKey match_key;
};

struct DraRequestDemand {
  std::string claim;  // "ns/name" of the claim, or "template ns/name"
  std::string request;
  // Tried in order, as kube-scheduler tries firstAvailable.
  std::vector<DraAlternativeDemand> alternatives;
};

struct DraDemand {
  std::vector<DraRequestDemand> requests;
  // Claims already allocated: the devices are the claim's wherever it is;
  // the pod can only go where the allocation is (allocated_node).
  std::vector<std::string> allocated_claims;
  std::string allocated_node;  // "" when none is node-bound
  // A claim or template the pod names that is not known (yet), or a
  // class a request names that does not exist: the pod cannot be
  // scheduled until it is, as kube-scheduler says.
  std::vector<std::string> missing;

  bool empty() const {
    return requests.empty() && allocated_claims.empty() && missing.empty();
  }
};

// The pod's DRA demand; a pod without resource claims has none.
DraDemand DraDemandOf(const Pod& pod, const DraCatalog& catalog);

// True when the GPU count the claims are charged (Pod::claim_requests)
// says all a node must offer: one alternative per request, ExactCount, no
// selectors or tolerations beyond the class's, nothing missing or pinned.
// Otherwise the node check needs FitDraDemand.
bool CountSaysAll(const DraDemand& demand);

// Text that differs whenever two demands could fit different nodes (a key
// of the filter's verdict cache).
std::string DraDemandSignature(const DraDemand& demand);

struct DraNodeFit {
  bool fits = false;
  std::string reason;  // why not, naming the claim and request
  // Per request, the devices gpusched would pick (indices into
  // DraNodeDevices::devices), in the order of DraDemand::requests; empty
  // for an undecided request.
  std::vector<std::vector<size_t>> picked;
};

// Whether `node`'s offered devices meet the demand: every decided request
// gets `count` devices that match all its selectors, no device twice.
DraNodeFit FitDraDemand(const DraDemand& demand, std::string_view node,
                        const DraNodeDevices& devices);

// Whether some taint on the device, not tolerated by the alternative,
// keeps it off (effect NoSchedule or NoExecute).
bool TaintKeepsOff(const DraAlternativeDemand& alt,
                   const DraDeviceState& state);

// How a device answers all of one alternative's selectors.
enum class DeviceMatch { kYes, kNo, kError };

// On kError, `error` (when given) names the selector, the device and
// CEL's message.
DeviceMatch MatchDevice(const DraAlternativeDemand& alt,
                        const DraDeviceState& state, std::string* error);

// The fit's picks as DraDeviceKeys ("driver/pool/device").
std::vector<std::vector<std::string>> PickedDeviceKeys(
    const DraNodeFit& fit, const DraNodeDevices& devices);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_DEMAND_H_
