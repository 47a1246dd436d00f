#include "api/kube/live_mode.h"

#include <utility>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {

absl::StatusOr<KubeConfig> ResolveKubeConfig(const LiveOptions& options) {
  if (!options.kubeconfig.empty()) return LoadKubeconfig(options.kubeconfig);
  if (options.in_cluster) return LoadInClusterConfig();
  return absl::InvalidArgumentError(
      "live mode needs --kubeconfig FILE or to run in a pod (in-cluster)");
}

absl::StatusOr<std::unique_ptr<LiveCluster>> LiveCluster::Create(
    LiveOptions options) {
  absl::StatusOr<KubeConfig> config = ResolveKubeConfig(options);
  if (!config.ok()) return config.status();
  absl::StatusOr<std::unique_ptr<KubeClient>> client =
      KubeClient::Create(*std::move(config), options.client);
  if (!client.ok()) return client.status();
  return std::unique_ptr<LiveCluster>(
      new LiveCluster(std::move(options), *std::move(client)));
}

LiveCluster::LiveCluster(LiveOptions options,
                         std::unique_ptr<KubeClient> client)
    : options_(std::move(options)),
      client_(std::move(client)),
      sink_(*client_, options_.bind_budget) {}

LiveCluster::~LiveCluster() { Stop(); }

void LiveCluster::StartSync(ExtenderService& service) {
  if (sync_ != nullptr) return;
  spdlog::info("kube: following the cluster ({})", source());
  sync_ = std::make_unique<ClusterSync>(*client_, service, options_.sync);
  sync_->Start();
}

bool LiveCluster::synced() const { return sync_ != nullptr && sync_->synced(); }

void LiveCluster::Stop() {
  if (sync_ != nullptr) sync_->Stop();
}

absl::StatusOr<std::unique_ptr<LiveCluster>> CreateLiveBinder(
    LiveOptions options) {
  return LiveCluster::Create(std::move(options));
}

absl::StatusOr<std::unique_ptr<LiveCluster>> StartLiveCluster(
    ExtenderService& service, LiveOptions options) {
  absl::StatusOr<std::unique_ptr<LiveCluster>> live =
      LiveCluster::Create(std::move(options));
  if (!live.ok()) return live.status();
  (*live)->StartSync(service);
  return live;
}

}  // namespace gpusched::kube
