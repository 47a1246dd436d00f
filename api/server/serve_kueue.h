// What a live `gpusched serve` with queues runs in place of Kueue's
// manager, apart from the admission loop: the guard that keeps gpusched
// from deciding while a Kueue manager is active, the releaser of Kueue's
// pod finalizer, the kueue.x-k8s.io/provisioning-request admission check
// controller and, with --policy-source=kueue, the writer of the queues'
// status on Kueue's objects. ServeApp owns one; its deciding state stays in
// ServeApp, which the guard's answers go to (ServeApp's part is defined in
// serve_kueue.cc too).
#ifndef GPUSCHED_API_SERVER_SERVE_KUEUE_H_
#define GPUSCHED_API_SERVER_SERVE_KUEUE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/controller/admission_loop.h"
#include "api/controller/kueue_status.h"
#include "api/controller/provisioning_requests.h"
#include "api/kube/kube_client.h"
#include "api/kube/kueue_finalizers.h"
#include "api/kube/kueue_guard.h"
#include "api/server/policy_source.h"

namespace gpusched {

struct KueueComponentsOptions {
  // Kueue's leader Lease as "namespace/name" (--kueue-lease; checked by
  // the flags); no slash: no Lease is read.
  std::string kueue_lease;
  // --policy-source=kueue: the queues' status is written on Kueue's objects.
  bool write_status = false;
  // The guard's answers, from its thread: whether a Kueue manager is
  // active, and why.
  std::function<void(const kube::KueuePresence&)> on_presence;
};

// The client and the loop must outlive it.
class KueueComponents {
 public:
  KueueComponents(kube::KubeClient& client, AdmissionLoop& gate,
                  KueueComponentsOptions options);
  ~KueueComponents() { Stop(); }
  KueueComponents(const KueueComponents&) = delete;
  KueueComponents& operator=(const KueueComponents&) = delete;

  // Starts the threads, the guard last: its first answer may call back
  // into this object (StartedDeciding).
  void Start();
  void Stop();  // idempotent
  // This replica decides from now on: finalizers left meanwhile are
  // released at once.
  void StartedDeciding() { finalizers_->Poke(); }
  // With --policy-source=kueue, the deciding replica writes the queues'
  // status as Kueue would; a standby forgets what it wrote, since the
  // deciding one writes meanwhile.
  void PublishStatus(const std::vector<SetAsideDocument>& set_aside);

 private:
  AdmissionLoop& gate_;
  std::unique_ptr<kube::KueueGuard> guard_;
  // Kueue's pod finalizer, released where Kueue would.
  std::unique_ptr<kube::KueueFinalizers> finalizers_;
  std::unique_ptr<ProvisioningRequestController> provisioning_;
  std::unique_ptr<KueueStatusPublisher> status_;  // null without it
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_SERVE_KUEUE_H_
