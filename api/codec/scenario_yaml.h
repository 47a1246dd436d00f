#ifndef GPUSCHED_API_CODEC_SCENARIO_YAML_H_
#define GPUSCHED_API_CODEC_SCENARIO_YAML_H_

// Simulator scenarios (`gpusched simulate SCENARIO.yaml`) to the domain
// Scenario:
//
//   apiVersion: gpusched.io/v1alpha1
//   kind: Scenario
//   nodes: nodes.yaml        # a path, or an inline list of Node objects
//   policy: policy.yaml      # a path, or an inline list of policy documents
//   requeuePreempted: true   # optional, default true
//   until: 3600s             # optional end of simulated time
//   events:
//   - at: 0s
//     create: [ ...Pod and PodGroup objects... ]
//     finish: [ "team-a/job-1" ]   # a pod or a workload: its pods succeed
//     delete: [ "team-b/pod-7" ]
//     nodeDown: [ "gpu-node-3" ]   # and nodeUp
//
// The format is strict, because a typo in a scenario silently changes what
// is simulated: unknown or repeated keys at the top level and in events are
// errors; `metadata` (ignored) is the one extra top-level key allowed. Rules
// beyond the shape:
// - Durations are Go's ("0s", "90s", "5m", "1h30m", "250ms"; bare "0").
// - Paths are relative to `base_dir` (the scenario's directory).
// - `nodes` as a path is a cluster file (cluster_file.h) that must hold
//   Nodes only: Pods there are an error, because a scenario's pods come from
//   `create` events so that the whole timeline is in the scenario. Inline
//   items are Nodes (`kind` may be omitted). Node names must be unique.
// - `policy` may be absent (no queues: every workload runs outside quota).
// - Every event needs `at` and at least one action; actions combine freely.
//   Events keep their file position in `index` and are sorted stably by
//   time. `create` items are Pods or PodGroups by `kind`; a missing
//   namespace becomes "default"; names are required.
// - `finish`/`delete` items are "namespace/name" and must name a Pod, a
//   PodGroup or a pod-group label/annotation value created somewhere in the
//   scenario; `nodeDown`/`nodeUp` items must name a node of the scenario.
//
// Errors are InvalidArgument naming the file, the line (where yaml-cpp knows
// it), the event index and the field:
//   scenario.yaml: line 14: events[2].finish[0]: must be "namespace/name",
//   got "job-1"
// Policy errors are those of the policy loader, one per line, compiler
// style; for an inline policy they name the scenario file and its lines.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "queueing/scenario.h"

namespace gpusched {

// `file_name` names the scenario in errors.
absl::StatusOr<Scenario> ParseScenarioText(std::string_view yaml,
                                           std::string_view file_name,
                                           std::string_view base_dir);

// Reads `path` and parses it, resolving relative paths against its
// directory.
absl::StatusOr<Scenario> ParseScenarioFile(const std::string& path);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_SCENARIO_YAML_H_
