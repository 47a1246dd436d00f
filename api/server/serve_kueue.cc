// KueueComponents, and ServeApp's part that starts them and keeps its
// deciding state (it leads, and no Kueue manager is active).
#include "api/server/serve_kueue.h"

#include <utility>

#include "api/server/serve.h"

namespace gpusched {
namespace {

kube::KueueGuardOptions GuardOptions(const KueueComponentsOptions& options) {
  kube::KueueGuardOptions guard{.on_change = options.on_presence};
  const std::string& lease = options.kueue_lease;
  const size_t slash = lease.find('/');
  guard.lease_namespace =
      slash == std::string::npos ? "" : lease.substr(0, slash);
  guard.lease_name = slash == std::string::npos ? "" : lease.substr(slash + 1);
  return guard;
}

}  // namespace

KueueComponents::KueueComponents(kube::KubeClient& client, AdmissionLoop& gate,
                                 KueueComponentsOptions options)
    : gate_(gate),
      guard_(std::make_unique<kube::KueueGuard>(client, GuardOptions(options))),
      finalizers_(std::make_unique<kube::KueueFinalizers>(
          client,
          kube::KueueFinalizersOptions{
              .writing = [&gate] { return gate.deciding(); }})),
      provisioning_(std::make_unique<ProvisioningRequestController>(
          client, gate, ProvisioningRequestControllerOptions{})) {
  if (options.write_status) {
    status_ = std::make_unique<KueueStatusPublisher>(client);
  }
}

void KueueComponents::Start() {
  provisioning_->Start();
  finalizers_->Start();
  guard_->Start();
}

void KueueComponents::Stop() {
  guard_->Stop();
  provisioning_->Stop();
  finalizers_->Stop();
}

void KueueComponents::PublishStatus(
    const std::vector<SetAsideDocument>& set_aside) {
  if (status_ == nullptr) return;
  std::shared_ptr<const QueueView> view = gate_.Queues();
  if (!gate_.deciding() || view == nullptr) {
    status_->Forget();
    return;
  }
  status_->Publish(*view, set_aside);
}

// With queues, live: decide only while no Kueue manager is active.
void ServeApp::StartKueueComponents(const ServeConfig& config) {
  if (gate_ == nullptr) return;
  kueue_ = std::make_unique<KueueComponents>(
      live_->client(), *gate_,
      KueueComponentsOptions{
          .kueue_lease = config.kueue_lease,
          .write_status = config.policy_source == "kueue",
          .on_presence = [this](const kube::KueuePresence& presence) {
            ApplyDeciding([&presence](DecidingInputs& in) {
              in.kueue_active = presence.active;
              in.kueue_why = presence.why;
            });
          }});
  kueue_->Start();
}

bool ServeApp::KueueActive() const {
  std::lock_guard lock(deciding_mu_);
  return kueue_active_;
}

// Writes first: a replica that stops deciding drops what it queued before
// the next pass could add to it.
void ServeApp::ApplyDeciding(const std::function<void(DecidingInputs&)>& edit) {
  std::lock_guard lock(deciding_mu_);
  DecidingInputs inputs{.leading = leading_,
                        .kueue_active = kueue_active_,
                        .kueue_why = kueue_why_};
  edit(inputs);
  leading_ = inputs.leading;
  kueue_active_ = inputs.kueue_active;
  kueue_why_ = inputs.kueue_why;
  const bool deciding = leading_ && !kueue_active_;
  if (writer_ != nullptr) writer_->SetWriting(deciding);
  if (gate_ != nullptr) gate_->SetDeciding(deciding);
  if (deciding && kueue_ != nullptr) kueue_->StartedDeciding();
}

}  // namespace gpusched
