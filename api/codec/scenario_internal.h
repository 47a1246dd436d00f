#ifndef GPUSCHED_API_CODEC_SCENARIO_INTERNAL_H_
#define GPUSCHED_API_CODEC_SCENARIO_INTERNAL_H_

// Internal: the parts of the scenario parser (scenario_yaml.h), one file
// per part: shared helpers (scenario_fields.cc), nodes (scenario_nodes.cc),
// policy (scenario_policy.cc) and events (scenario_events.cc). Include only
// from .cc files: it exposes yaml-cpp.
//
// Unless a function says otherwise, its errors are FieldError texts
// ("line N: path: message") without the file name, which
// ParseScenarioText adds once at the top.

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/codec/k8s_decode_impl.h"
#include "queueing/scenario.h"
#include "yaml-cpp/yaml.h"

namespace gpusched::scenario_internal {

using codec_internal::PathSegment;

// The scenario being read, for what needs more than one YAML value.
struct ScenarioSource {
  std::string_view text;  // the whole file: inline policy is cut from it
  std::string_view file_name;
  std::string_view base_dir;  // relative paths start here; "" is the cwd
};

// One member of a mapping.
struct Field {
  YAML::Node key;
  YAML::Node value;
  // Where errors about the value point: yaml-cpp marks a null value at the
  // token after it, often the next line, so a null points at its key.
  int line() const;
};

// The members of a mapping by key, in key order.
using FieldMap = std::map<std::string, Field, std::less<>>;

// ---------------------------------------------------------------------------
// scenario_fields.cc

// 1-based line of `node`, 0 when unknown.
int LineOf(const YAML::Node& node);
// FieldError at `line`, or at `node`'s line.
absl::Status ErrorAt(int line, const PathSegment& at, std::string_view message);
absl::Status ErrorAt(const YAML::Node& node, const PathSegment& at,
                     std::string_view message);
// "expected <what>, got <kind of node>" at `line` (0: `node`'s line).
absl::Status TypeErrorAt(const YAML::Node& node, const PathSegment& at,
                         std::string_view expected, int line = 0);

// The members of mapping `node`; every key must be one of `allowed` and
// appear once, because a misspelt or repeated key would otherwise be
// dropped without a word.
absl::StatusOr<FieldMap> CollectFields(
    const YAML::Node& node, const PathSegment& at,
    std::span<const std::string_view> allowed);

// A scalar's text; any other kind is a type error naming `expected`.
// `line` as for TypeErrorAt.
absl::StatusOr<std::string> ScalarText(const YAML::Node& node,
                                       const PathSegment& at,
                                       std::string_view expected, int line = 0);

// A Go duration in milliseconds ("90s", "1h30m", "250ms", "0").
absl::StatusOr<int64_t> DecodeDuration(const Field& field,
                                       const PathSegment& at);

// `path` joined onto the scenario's directory unless absolute.
std::string ResolvePath(const ScenarioSource& source, std::string_view path);

// yaml-cpp's exception for malformed text as InvalidArgument naming
// `source` and the line.
absl::Status MalformedYaml(std::string_view source, const YAML::Exception& e);

// ---------------------------------------------------------------------------
// scenario_nodes.cc

// `nodes:`, a cluster file path or an inline list of Node objects. At least
// one node; names present and unique.
absl::StatusOr<std::vector<Node>> DecodeScenarioNodes(
    const YAML::Node& node, const PathSegment& at,
    const ScenarioSource& source);

// ---------------------------------------------------------------------------
// scenario_policy.cc

// `policy:`, a path or an inline list of policy documents; absent or null
// gives the empty policy. Errors are the policy loader's, one per line, each
// already naming its file and line (for inline documents the scenario's
// file and lines), so the caller must not prefix them again.
absl::StatusOr<Policy> DecodeScenarioPolicy(const YAML::Node& node,
                                            const PathSegment& at,
                                            const ScenarioSource& source,
                                            int end_line);

// ---------------------------------------------------------------------------
// scenario_events.cc

// `events:`, in file order (sorting is the caller's). nodeDown/nodeUp items
// must be in `node_names`.
absl::StatusOr<std::vector<ScenarioEvent>> DecodeScenarioEvents(
    const YAML::Node& node, const PathSegment& at,
    const std::set<std::string, std::less<>>& node_names);

// Every finish/delete item must name something some event creates.
absl::Status CheckEventReferences(const YAML::Node& node, const PathSegment& at,
                                  const std::vector<ScenarioEvent>& events);

}  // namespace gpusched::scenario_internal

#endif  // GPUSCHED_API_CODEC_SCENARIO_INTERNAL_H_
