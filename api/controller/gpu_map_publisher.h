// Publishes the extender's GPU map (scheduler/gpu_map.h) for the read
// surfaces: Refresh, called from serve's ticker (once a second), takes the
// model's shared lock for as long as it takes to look at each node's
// generation and map the nodes that changed; a request reads the last
// snapshot and takes no lock of the model or the engine.
#ifndef GPUSCHED_API_CONTROLLER_GPU_MAP_PUBLISHER_H_
#define GPUSCHED_API_CONTROLLER_GPU_MAP_PUBLISHER_H_

#include <memory>
#include <mutex>

#include "scheduler/extender_service.h"
#include "scheduler/gpu_map.h"

namespace gpusched {

class GpuMapPublisher {
 public:
  // `service` must outlive the publisher. Publishes the map once now.
  explicit GpuMapPublisher(const ExtenderService& service);
  // Makes the map anew from the service's model. Thread-safe.
  void Refresh();
  // The last map; never null. Thread-safe.
  std::shared_ptr<const GpuMap> Latest() const;

 private:
  const ExtenderService& service_;
  std::mutex build_mu_;    // one Refresh at a time
  GpuMapBuilder builder_;  // guarded by build_mu_
  mutable std::mutex mu_;
  std::shared_ptr<const GpuMap> latest_;  // guarded by mu_
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_GPU_MAP_PUBLISHER_H_
