#ifndef GPUSCHED_SCHEDULER_DRA_UNDECIDED_H_
#define GPUSCHED_SCHEDULER_DRA_UNDECIDED_H_

// The device selectors gpusched does not evaluate (outside its CEL subset,
// dra_selector.h), gathered from the DRA objects for /v1/nodes: an admin
// sees which expressions leave feasibility to kube-scheduler, and where
// they are written, without reading the log.

#include <cstddef>
#include <string>
#include <vector>

#include "scheduler/dra_demand.h"

namespace gpusched {

struct DraUndecidedSelector {
  // Names at most this many of the objects that hold the expression: a
  // template's pods each get a claim with the same selectors.
  static constexpr size_t kMaxNamed = 5;

  std::string expression;
  std::string error;  // "outside the supported CEL subset at byte 31: ..."
  // "DeviceClass gpu-h100", "ResourceClaimTemplate ml/x request gpus",
  // "ResourceClaim ml/y request gpus", in that order of kinds, by name.
  std::vector<std::string> written_in;
  size_t objects = 0;  // how many hold it, named or not
};

// One entry per distinct expression outside the subset, by expression.
std::vector<DraUndecidedSelector> UndecidedSelectors(const DraCatalog& catalog);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_UNDECIDED_H_
