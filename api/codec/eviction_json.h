#ifndef GPUSCHED_API_CODEC_EVICTION_JSON_H_
#define GPUSCHED_API_CODEC_EVICTION_JSON_H_

// The policy/v1 Eviction a pod's eviction posts (api/kube/eviction.h).

#include <string>

namespace gpusched {

struct EvictionTarget {
  std::string namespace_name;
  std::string name;
  // Sent as the deletion's UID precondition, so a pod recreated under the
  // same name (a new incarnation a controller made) is never evicted.
  // Empty: no precondition.
  std::string uid;
  // Sent as the deletion's resourceVersion precondition: a pod that changed
  // since it was read (it ended, say) is not evicted on a stale reading.
  // Empty: no precondition.
  std::string resource_version;
};

// The Eviction body: the pod's uid, when known, as the deletion's
// precondition.
std::string EncodeEviction(const EvictionTarget& pod);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_EVICTION_JSON_H_
