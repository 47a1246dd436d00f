#ifndef GPUSCHED_QUEUEING_SIMULATOR_H_
#define GPUSCHED_QUEUEING_SIMULATOR_H_

#include "queueing/scenario.h"

namespace gpusched {

// Runs `scenario` on a virtual clock through the queueing engine and the
// same placement and bind code the extender uses. Deterministic: the same
// scenario gives the same report (wall_seconds aside).
SimulationReport RunSimulation(const Scenario& scenario);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_SIMULATOR_H_
