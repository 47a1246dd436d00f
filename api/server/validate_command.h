#ifndef GPUSCHED_API_SERVER_VALIDATE_COMMAND_H_
#define GPUSCHED_API_SERVER_VALIDATE_COMMAND_H_

#include <string>
#include <vector>

namespace gpusched {

// `gpusched validate FILE...`: checks policy files (policies/policy_loader.h)
// as one policy. Prints every error to stderr and returns 1, or a summary
// of queues and quotas to stdout and returns 0. No files or an unknown
// flag: usage to stderr, 2. --help: usage to stdout, 0.
int RunValidate(const std::vector<std::string>& args);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_VALIDATE_COMMAND_H_
