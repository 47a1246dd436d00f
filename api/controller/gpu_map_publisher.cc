#include "api/controller/gpu_map_publisher.h"

#include <utility>

namespace gpusched {

GpuMapPublisher::GpuMapPublisher(const ExtenderService& service)
    : service_(service) {
  Refresh();
}

void GpuMapPublisher::Refresh() {
  std::lock_guard build_lock(build_mu_);
  const int64_t now = service_.NowMs();
  std::shared_ptr<const GpuMap> map = service_.Read(
      [&](const ClusterModel& model) { return builder_.Build(model, now); });
  std::lock_guard lock(mu_);
  latest_ = std::move(map);
}

std::shared_ptr<const GpuMap> GpuMapPublisher::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

}  // namespace gpusched
