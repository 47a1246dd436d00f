#ifndef GPUSCHED_API_SERVER_SIMULATE_COMMAND_H_
#define GPUSCHED_API_SERVER_SIMULATE_COMMAND_H_

#include <string>
#include <vector>

namespace gpusched {

// `gpusched simulate SCENARIO.yaml [--output REPORT.json]
//                   [--compare EXPECTED.json] [--check-invariants]`
//
// Parses the scenario (scenario_yaml.h), runs it on the simulator's virtual
// clock and writes the report (report_json.h) to --output or stdout.
// --compare checks the report without wallSeconds byte for byte against
// EXPECTED.json and prints a diff on mismatch; with --compare the report is
// written only when --output is given, so that a check prints nothing but
// its verdict. --check-invariants checks queueing/invariants.h after every
// step and stops at the first violation. Exit codes: 0 done (and equal), 1 a
// bad scenario, an unreadable or unwritable file or a mismatch, 2 bad usage.
int RunSimulate(const std::vector<std::string>& args);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_SIMULATE_COMMAND_H_
