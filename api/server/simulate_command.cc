#include "api/server/simulate_command.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "api/codec/file_text.h"
#include "api/codec/report_json.h"
#include "api/codec/scenario_yaml.h"
#include "api/server/flags.h"
#include "queueing/simulator.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

struct SimulateOptions {
  std::string scenario;
  std::string output;   // empty: stdout (unless comparing)
  std::string compare;  // empty: no comparison
  bool check_invariants = false;
};

// The options, or the exit code of a usage error already reported (0 after
// --help).
std::optional<SimulateOptions> ParseOptions(
    const std::vector<std::string>& args, int* exit_code) {
  SimulateOptions options;
  bool help = false;
  FlagSet flags("simulate SCENARIO.yaml");
  flags.String("output", &options.output,
               "write the report JSON here (default: stdout)");
  flags.String("compare", &options.compare,
               "compare the report, without wallSeconds, with this file; "
               "exit 1 and print a diff when they differ");
  flags.Bool("check-invariants", &options.check_invariants,
             "check the queueing invariants after every step; stop with "
             "exit 1 at the first violation");
  flags.Bool("help", &help, "this text");
  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(args, &positional); !s.ok()) {
    std::cerr << s.message() << "\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  if (help) {
    std::cout << flags.Usage();
    *exit_code = 0;
    return std::nullopt;
  }
  if (positional.size() != 1) {
    std::cerr << "gpusched simulate: expected one scenario file, got "
              << positional.size() << "\n"
              << flags.Usage();
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  options.scenario = positional[0];
  return options;
}

// Runs the scenario; the wall time is measured here, around the engine, so
// that the simulator itself never reads a real clock.
absl::StatusOr<SimulationReport> Simulate(const Scenario& scenario,
                                          const SimulateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<SimulationReport> report =
      RunSimulation(scenario, {.check_invariants = options.check_invariants});
  if (!report.ok()) return report;
  const std::chrono::duration<double> wall =
      std::chrono::steady_clock::now() - start;
  report->summary.wall_seconds = wall.count();
  return report;
}

absl::Status WriteReport(const SimulateOptions& options,
                         const SimulationReport& report) {
  if (options.output.empty()) {
    if (!options.compare.empty()) return absl::OkStatus();
    std::cout << EncodeReport(report) << std::flush;
    return absl::OkStatus();
  }
  return WriteTextFile(options.output, EncodeReport(report));
}

// The wall time a report written by --output carries, if any.
std::optional<double> WallSecondsIn(const std::string& text) {
  constexpr std::string_view kKey = "\"wallSeconds\": ";
  const size_t at = text.find(kKey);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(text.c_str() + at + kKey.size(), nullptr);
}

// Exit code of the comparison; the diff goes to stderr. Wall time is never
// compared: a file written by --output has it, and it is taken over.
int Compare(const SimulateOptions& options, SimulationReport report) {
  absl::StatusOr<std::string> expected = ReadTextFile(options.compare);
  if (!expected.ok()) {
    std::cerr << "gpusched simulate: " << expected.status().message() << "\n";
    return kExitFailure;
  }
  const std::optional<double> wall = WallSecondsIn(*expected);
  if (wall.has_value()) report.summary.wall_seconds = *wall;
  const std::string actual =
      EncodeReport(report, /*include_wall_seconds=*/wall.has_value());
  const std::string diff =
      DiffText(*expected, actual, options.compare,
               absl::StrCat(options.scenario, " (report)"));
  if (diff.empty()) return 0;
  std::cerr << "gpusched simulate: report differs from " << options.compare
            << "\n"
            << diff;
  return kExitFailure;
}

}  // namespace

int RunSimulate(const std::vector<std::string>& args) {
  int exit_code = 0;
  std::optional<SimulateOptions> options = ParseOptions(args, &exit_code);
  if (!options.has_value()) return exit_code;
  absl::StatusOr<Scenario> scenario = ParseScenarioFile(options->scenario);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message() << "\n";
    return kExitFailure;
  }
  absl::StatusOr<SimulationReport> simulated = Simulate(*scenario, *options);
  if (!simulated.ok()) {
    std::cerr << "gpusched simulate: " << options->scenario << ": "
              << simulated.status().message() << "\n";
    return kExitFailure;
  }
  const SimulationReport& report = *simulated;
  if (absl::Status s = WriteReport(*options, report); !s.ok()) {
    std::cerr << "gpusched simulate: " << s.message() << "\n";
    return kExitFailure;
  }
  if (options->compare.empty()) return 0;
  return Compare(*options, report);
}

}  // namespace gpusched
