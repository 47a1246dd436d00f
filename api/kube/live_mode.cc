#include "api/kube/live_mode.h"

#include <chrono>
#include <thread>
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
  ClusterSyncOptions sync = options_.sync;
  if (options_.dra) {
    // Created before the ClusterSync it pokes, started after it exists.
    dra_ = std::make_unique<DraSync>(
        *client_, DraSyncOptions{.on_change = [this] { sync_->PokeDra(); }});
    dra_attacher_ =
        std::make_unique<DraAttacher>(*dra_, options_.device_class_mappings);
    sync.dra = dra_attacher_.get();
    sync.take_dra_touched = [this] { return dra_->TakeTouched(); };
  }
  sync_ = std::make_unique<ClusterSync>(*client_, service, sync);
  if (dra_ != nullptr) WaitForDra();
  sync_->Start();
}

// Pods are charged for their claims only once the claims, templates and
// classes are known: list those first (a cluster without DRA answers at
// once; one that hangs delays the start by dra_settle_wait at most).
void LiveCluster::WaitForDra() {
  dra_->Start();
  const auto deadline =
      std::chrono::steady_clock::now() + options_.dra_settle_wait;
  while (!dra_->settled() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!dra_->settled()) {
    spdlog::warn(
        "kube: DRA objects not listed after {} ms; following the "
        "cluster anyway, claims are charged as they arrive",
        options_.dra_settle_wait.count());
  }
}

bool LiveCluster::synced() const { return sync_ != nullptr && sync_->synced(); }

void LiveCluster::Stop() {
  if (dra_ != nullptr) dra_->Stop();
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
