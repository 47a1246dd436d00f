#ifndef GPUSCHED_QUEUEING_WORKLOAD_TYPES_H_
#define GPUSCHED_QUEUEING_WORKLOAD_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "scheduler/k8s_objects.h"

namespace gpusched {

// Labels and annotations that make pods a gang or put them in a queue.
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
inline constexpr char kKueueGroupLabel[] = "kueue.x-k8s.io/pod-group-name";
inline constexpr char kKueueGroupCountAnnotation[] =
    "kueue.x-k8s.io/pod-group-total-count";
inline constexpr char kVolcanoGroupAnnotation[] =
    "scheduling.k8s.io/group-name";
inline constexpr char kCoschedulingGroupLabel[] =
    "scheduling.x-k8s.io/pod-group";
inline constexpr char kTopologyRequiredAnnotation[] =
    "gpusched.io/topology-required";
inline constexpr char kTopologyPreferredAnnotation[] =
    "gpusched.io/topology-preferred";
inline constexpr char kAdmittedLabel[] = "gpusched.io/admitted";
// The scheduling gate gpusched's webhook puts on its pods; admission
// removes it (kube-scheduler leaves gated pods alone).
inline constexpr char kAdmissionGate[] = "gpusched.io/admission";
inline constexpr char kAssignedNodeAnnotation[] = "gpusched.io/assigned-node";

// A PodGroup of Volcano (scheduling.volcano.sh/v1beta1) or of the
// coscheduling plugin (scheduling.x-k8s.io/v1alpha1).
struct PodGroup {
  enum class Flavor { kVolcano, kCoscheduling };
  ObjectMeta meta;
  Flavor flavor = Flavor::kVolcano;
  int32_t min_member = 1;
  ResourceList min_resources;       // Volcano spec.minResources
  std::string queue;                // Volcano spec.queue
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
