#ifndef GPUSCHED_POLICIES_YAML_GUARD_H_
#define GPUSCHED_POLICIES_YAML_GUARD_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace gpusched {

// What a YAML text may hold before yaml-cpp is given it.
struct YamlLimits {
  size_t max_bytes = size_t{512} << 20;
  // Block indentation levels plus open [ ] and { }: yaml-cpp recurses once
  // per level, and Kubernetes objects nest about 15 deep.
  int max_depth = 100;
};

// Every YAML text goes through this before yaml-cpp sees it, because
// Debian 12's yaml-cpp (0.7) has inputs it never finishes and others that
// blow up what reads its tree:
//   - a ',' where a value starts outside any [ ] or { } ("{a: 1},", a
//     document that is only ",", an indented JSON array item cut from its
//     array): its scanner loops, allocating, until memory runs out;
//   - aliases (*name): each shares its anchor's node, so walking the tree
//     expands them, exponentially when they nest;
//   - nesting deep enough to exhaust the stack.
// The scan is one pass, linear in the text, and allocates nothing. Returns
// InvalidArgument "line L, column C: ..." for the first byte it rejects.
absl::Status CheckYamlText(std::string_view text,
                           const YamlLimits& limits = {});

// The same, for readers that report by line: the 1-based line of the
// rejected byte (0 for the size) and what is wrong there, with its column.
struct YamlRejection {
  int line = 0;
  std::string message;  // "column C: ..." (the size: the whole sentence)
};
std::optional<YamlRejection> FindYamlRejection(std::string_view text,
                                               const YamlLimits& limits = {});

}  // namespace gpusched

#endif  // GPUSCHED_POLICIES_YAML_GUARD_H_
