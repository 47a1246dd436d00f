#ifndef GPUSCHED_API_CODEC_EXTENDER_JSON_H_
#define GPUSCHED_API_CODEC_EXTENDER_JSON_H_

// The kube-scheduler extender v1 wire types (k8s.io/kube-scheduler/extender/v1)
// <-> domain values. The Go types have no json tags, so keys are the Go field
// names ("Pod", "NodeNames", ...); Go decodes keys case-insensitively, and so
// do we. null is accepted for every pointer, map and list.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/extender_service.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// ExtenderArgs (filter and prioritize).
struct ExtenderArgs {
  Pod pod;
  // Candidate names: NodeNames, or the names of Nodes.items.
  std::vector<std::string> node_names;
  bool has_node_names = false;  // NodeNames was a list (nodeCacheCapable)
  bool has_nodes = false;       // Nodes was a NodeList (not cache capable)
  std::vector<Node> nodes;      // decoded Nodes.items
  std::vector<std::string> node_json;  // each item, minified, to echo back
};

struct PreemptionArgs {
  Pod pod;
  std::vector<PreemptionCandidate> candidates;
};

// Each fails with InvalidArgument naming the field or byte at fault.
absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body);
absl::StatusOr<PreemptionArgs> DecodePreemptionArgs(std::string_view body);
absl::StatusOr<BindRequest> DecodeBindingArgs(std::string_view body);

// ExtenderFilterResult: NodeNames back when the request had NodeNames, Nodes
// back (the passing items) when it had Nodes.
std::string EncodeFilterResult(const ExtenderArgs& args,
                               const FilterOutcome& outcome);
std::string EncodeFilterError(std::string_view error);
// HostPriorityList: a bare JSON array.
std::string EncodeHostPriorities(const std::vector<HostScore>& scores);
// ExtenderPreemptionResult, always in the meta (UID) form.
std::string EncodePreemptionResult(
    const std::vector<PreemptionCandidate>& candidates);
std::string EncodePreemptionError(std::string_view error);
// ExtenderBindingResult.
std::string EncodeBindingResult(std::string_view error);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_EXTENDER_JSON_H_
