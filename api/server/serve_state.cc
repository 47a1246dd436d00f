// What a live server keeps in ConfigMaps of its own across restarts and
// failovers: the runtimes finished workloads took (the forecast's history)
// and the workloads' requeue state (what Kueue keeps in Workload objects).
#include <utility>

#include "api/server/serve.h"

namespace gpusched {
namespace {

// "ns/name" of a flag ParseServeFlags checked.
std::pair<std::string, std::string> NamespaceAndName(
    const std::string& namespaced) {
  const size_t slash = namespaced.find('/');
  return {namespaced.substr(0, slash), namespaced.substr(slash + 1)};
}

}  // namespace

void ServeApp::StartRuntimeHistory(const ServeConfig& config) {
  if (config.runtime_history.empty() || gate_ == nullptr) return;
  auto [namespace_name, name] = NamespaceAndName(config.runtime_history);
  AdmissionLoop* gate = gate_.get();
  history_store_ = std::make_unique<kube::RuntimeHistoryStore>(
      live_->client(), runtime_log_,
      kube::RuntimeHistoryStoreOptions{
          .namespace_name = std::move(namespace_name),
          .name = std::move(name),
          .deciding = [gate] { return gate->deciding(); }});
  history_store_->Start();
}

// The loop was created waiting for the first read (keep_requeue_state):
// until it arrives, no pass runs.
void ServeApp::StartRequeueState(const ServeConfig& config) {
  if (config.requeue_state.empty() || gate_ == nullptr) return;
  auto [namespace_name, name] = NamespaceAndName(config.requeue_state);
  AdmissionLoop* gate = gate_.get();
  requeue_store_ = std::make_unique<kube::RequeueStateStore>(
      live_->client(),
      kube::RequeueStateStoreOptions{
          .namespace_name = std::move(namespace_name),
          .name = std::move(name),
          .deciding = [gate] { return gate->deciding(); },
          .current = [gate] { return gate->RequeueRecords(); },
          .loaded =
              [gate](std::vector<RequeueRecord> records, bool initial) {
                gate->RequeueStateLoaded(std::move(records), initial);
              }});
  requeue_store_->Start();
}

}  // namespace gpusched
