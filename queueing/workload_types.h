#ifndef GPUSCHED_QUEUEING_WORKLOAD_TYPES_H_
#define GPUSCHED_QUEUEING_WORKLOAD_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "scheduler/k8s_objects.h"

namespace gpusched {

// The labels and annotations that put pods in a queue or a gang are read
// by api/codec (pod_admission_state.h) into Pod::admission: the domain
// reads that record, never their strings.

// A PodGroup of Volcano (scheduling.volcano.sh/v1beta1), of the
// coscheduling plugin (scheduling.x-k8s.io/v1alpha1), or Kubernetes' own
// (scheduling.k8s.io/v1beta1, KEP-4671: kNative).
struct PodGroup {
  enum class Flavor { kVolcano, kCoscheduling, kNative };
  ObjectMeta meta;
  Flavor flavor = Flavor::kVolcano;
  // minMember; native: spec.schedulingPolicy.gang.minCount, 1 for a basic
  // policy (each pod on its own, one workload all the same).
  int32_t min_member = 1;
  ResourceList min_resources;  // Volcano spec.minResources
  // Volcano spec.queue; native: the PodGroup's own Kueue queue label, which
  // names its members' queue before theirs (WorkloadStore::Resolve).
  std::string queue;
  std::string priority_class_name;  // Volcano spec.priorityClassName
  std::optional<int64_t> schedule_timeout_seconds;  // coscheduling
  std::string Key() const {
    return (meta.namespace_name.empty() ? std::string("default")
                                        : meta.namespace_name) +
           "/" + meta.name;
  }
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_WORKLOAD_TYPES_H_
