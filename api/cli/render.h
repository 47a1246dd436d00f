// The human output of each command, from the decoded answers
// (api/codec/visibility_decode.h): pure functions of the data and the
// time, so that tests pin the text.
#ifndef GPUSCHED_API_CLI_RENDER_H_
#define GPUSCHED_API_CLI_RENDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/codec/visibility_decode.h"

namespace gpusched::cli {

// `queue`: NAME, LOCALQUEUE, POSITION, PRIORITY, REASON, EXPECTED START,
// AGE, one row per workload, sorted by position in the ClusterQueue (then
// LocalQueue and name, for workloads of different ClusterQueues).
// POSITION counts from 0, as the API and kueuectl do.
std::string RenderQueue(std::vector<PendingItem> items, int64_t now);

// `status`: one row per ClusterQueue, flavor and resource (the queue's
// counts repeated on each, so that a grep for a queue keeps them), then,
// when there are cohorts, a blank line and one row per cohort, flavor and
// resource.
std::string RenderStatus(const std::vector<ClusterQueueStatus>& queues,
                         const std::vector<CohortStatus>& cohorts);

// `explain`: the workload's state, queues and positions, why it waits and
// when it starts, then its quota, placement and the workloads ahead.
std::string RenderExplanation(const ExplainedWorkload& explanation,
                              int64_t now);

}  // namespace gpusched::cli

#endif  // GPUSCHED_API_CLI_RENDER_H_
