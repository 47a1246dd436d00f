// Queued workloads for the queueing benchmarks: a policy of ClusterQueues
// in one cohort, and gang members as the webhook and codec would leave
// them.
#ifndef GPUSCHED_BENCH_LIB_QUEUED_WORKLOADS_H_
#define GPUSCHED_BENCH_LIB_QUEUED_WORKLOADS_H_

#include <cstdint>
#include <vector>

#include "queueing/policy.h"
#include "scheduler/cluster_model.h"
#include "scheduler/k8s_objects.h"

namespace gpusched::bench {

// `queues` ClusterQueues cq-0.. in cohort "all", `gpus_each` GPUs of
// nominal quota each (cpu and memory unbounded), preempting lower
// priority within the queue; LocalQueue "q" in namespace ns-<i> for each.
Policy QueuesPolicy(int queues, int64_t gpus_each);

// Puts `nodes` in `model`; returns how many GPUs they have.
int64_t LoadNodes(std::vector<Node> nodes, ClusterModel& model);

// Member `p` of gang `w` (of `pods` members, `gpus` GPUs each) in queue
// `q`'s namespace, its admission state decoded as api/codec would.
Pod QueuedGangPod(int w, int p, int pods, int gpus, int q,
                  StringMap extra_annotations = {});

}  // namespace gpusched::bench

#endif  // GPUSCHED_BENCH_LIB_QUEUED_WORKLOADS_H_
