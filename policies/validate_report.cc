#include "policies/validate_report.h"

#include "absl/strings/str_join.h"
#include "policies/policy_loader.h"

namespace gpusched {

int ValidatePolicyFiles(const std::vector<std::string>& paths,
                        std::ostream& out, std::ostream& err) {
  const PolicyResult result = LoadPolicyFiles(paths);
  if (!result.ok()) {
    for (const PolicyError& error : result.errors) {
      err << error.message << "\n";
    }
    const size_t count = result.errors.size();
    err << count << (count == 1 ? " error" : " errors") << "; the policy was "
        << "not loaded\n";
    return 1;
  }
  out << absl::StrJoin(paths, ", ") << ": OK\n\n"
      << PolicySummary(*result.policy);
  return 0;
}

}  // namespace gpusched
