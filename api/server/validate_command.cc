#include "api/server/validate_command.h"

#include <iostream>
#include <string>
#include <vector>

#include "policies/validate_report.h"

namespace gpusched {
namespace {

constexpr char kUsage[] =
    "usage: gpusched validate FILE...\n"
    "Checks quota policy files (Kueue's ResourceFlavor, ClusterQueue,\n"
    "LocalQueue, Cohort, WorkloadPriorityClass, and gpusched's\n"
    "SchedulerConfig; multi-document YAML) as one policy. Prints every\n"
    "error and exits 1, or prints the queues and quotas and exits 0.\n"
    "Use -- before a file name that starts with '-'.\n";

}  // namespace

int RunValidate(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  bool flags_done = false;
  for (const std::string& arg : args) {
    if (!flags_done && arg == "--") {
      flags_done = true;
    } else if (!flags_done && (arg == "--help" || arg == "-h")) {
      std::cout << kUsage;
      return 0;
    } else if (!flags_done && arg.size() > 1 && arg[0] == '-') {
      std::cerr << "gpusched validate: unknown flag \"" << arg << "\"\n"
                << kUsage;
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::cerr << "gpusched validate: no policy files given\n" << kUsage;
    return 2;
  }
  return ValidatePolicyFiles(files, std::cout, std::cerr);
}

}  // namespace gpusched
