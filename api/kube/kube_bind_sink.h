// Live-mode bind: writes the chosen devices on the pod, then binds it.
#ifndef GPUSCHED_API_KUBE_KUBE_BIND_SINK_H_
#define GPUSCHED_API_KUBE_KUBE_BIND_SINK_H_

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "api/kube/kube_client.h"
#include "scheduler/extender_service.h"

namespace gpusched::kube {

// POSTs pods/binding with the pod's UID as a precondition, so a pod deleted
// and recreated under the same name is never bound by mistake. The chosen
// devices travel in the Binding's own annotation gpusched.io/gpu-ids
// ("0,1"), which the API server merges into the pod's annotations in the
// same write that sets spec.nodeName: a pod is never bound without its
// device ids (the kubelet may start it at once, and a restarted gpusched
// reads them back), and a bind is one API call.
//
// A 409 from the binding is success when the pod (same UID) is already on
// the requested node: kube-scheduler retries a bind whose answer timed out.
// Errors carry the API server's message.
//
// The whole bind, every call included, ends by `budget` after it starts:
// kube-scheduler waits only its extender httpTimeout (5 s by default) for
// the answer, and an answer it never reads helps nobody. A binding sent
// without a clear answer keeps the client's DeadlineExceeded or
// Unavailable: it may still land (see BindSink).
//
// Thread-safe (the client is); the client must outlive the sink.
class KubeBindSink : public BindSink {
 public:
  static constexpr std::chrono::milliseconds kDefaultBudget{3000};

  explicit KubeBindSink(KubeClient& client,
                        std::chrono::milliseconds budget = kDefaultBudget)
      : client_(client), budget_(budget) {}

  absl::Status Bind(const Pod& pod, const std::string& node,
                    const GpuAssignment& assignment) override;

 private:
  absl::Status CreateBinding(const Pod& pod, const std::string& node,
                             const GpuAssignment& assignment,
                             const CallOptions& call);
  absl::Status CheckAlreadyBound(const Pod& pod, const std::string& node,
                                 const absl::Status& conflict,
                                 const CallOptions& call);

  KubeClient& client_;
  const std::chrono::milliseconds budget_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_KUBE_BIND_SINK_H_
