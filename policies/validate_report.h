#ifndef GPUSCHED_POLICIES_VALIDATE_REPORT_H_
#define GPUSCHED_POLICIES_VALIDATE_REPORT_H_

// What `gpusched validate FILE...` prints, apart from the process, so that
// tests can run it on streams.

#include <ostream>
#include <string>
#include <vector>

namespace gpusched {

// Loads `paths` as one policy. Valid: writes "FILES: OK" and the summary to
// `out`, returns 0. Otherwise writes every error, one per line, and a count
// to `err`, returns 1.
int ValidatePolicyFiles(const std::vector<std::string>& paths,
                        std::ostream& out, std::ostream& err);

}  // namespace gpusched

#endif  // GPUSCHED_POLICIES_VALIDATE_REPORT_H_
