#ifndef GPUSCHED_QUEUEING_SIMULATOR_H_
#define GPUSCHED_QUEUEING_SIMULATOR_H_

#include "absl/status/statusor.h"
#include "queueing/scenario.h"

namespace gpusched {

// Runs `scenario` on a virtual clock through the queueing engine and the
// same placement and bind code the extender uses. Deterministic: the same
// scenario gives the same report (wall_seconds aside).
SimulationReport RunSimulation(const Scenario& scenario);

struct SimulationOptions {
  // Checks the invariants (invariants.h) after every step and stops at the
  // first violation, with an error naming the step, the time and what was
  // violated.
  bool check_invariants = false;
};
absl::StatusOr<SimulationReport> RunSimulation(
    const Scenario& scenario, const SimulationOptions& options);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_SIMULATOR_H_
