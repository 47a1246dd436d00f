// gpusched's mutating admission webhook (DESIGN.md §2 step 4): a pod created
// with spec.schedulerName gpusched gets the scheduling gate
// gpusched.io/admission, so kube-scheduler does not retry it and cluster
// autoscalers do not add nodes for it while it waits for quota; the queueing
// core removes the gate when it admits the pod.
//
// The webhook never denies a pod. It is registered with failurePolicy
// Ignore, and a pod that arrives without the gate (gpusched was down, or the
// certificate was not in place yet) is still served by the extender's filter
// path. So every review it understands is answered allowed; only a request
// that is not an AdmissionReview gets a 400 (which the API server, with
// failurePolicy Ignore, also lets pass).
#ifndef GPUSCHED_API_SERVER_ADMISSION_WEBHOOK_H_
#define GPUSCHED_API_SERVER_ADMISSION_WEBHOOK_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/http/message.h"
#include "api/http/router.h"
#include "api/http/server.h"
#include "api/kube/kube_client.h"
#include "api/kube/webhook_certs.h"
#include "api/server/admission_review.h"
#include "api/server/certified_server.h"
#include "api/server/flags.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

inline constexpr std::string_view kMutatePodsPath = "/mutate-pods";

// POST /mutate-pods: DecidePodGating and AdmissionResponseJson over HTTP.
// Stateless and thread-safe.
class AdmissionWebhook {
 public:
  explicit AdmissionWebhook(AdmissionWebhookOptions options)
      : options_(std::move(options)) {}
  void Register(http::Router& router) const;
  http::Response Handle(const http::Request& request) const;

 private:
  const AdmissionWebhookOptions options_;
};

// `gpusched serve --webhook-*` flags.
struct WebhookFlags {
  std::string listen;  // empty: no webhook
  std::string dns_names =
      "gpusched-webhook.gpusched-system.svc,"
      "gpusched-webhook.gpusched-system.svc.cluster.local";
  std::string secret = "gpusched-system/gpusched-webhook-tls";
  std::string config_name = "gpusched";
  std::string scheduler_name = "gpusched";
  std::string adopted_schedulers = "default-scheduler";
};
void AddWebhookFlags(FlagSet& flags, WebhookFlags& out);

struct WebhookServerOptions {
  CertifiedListenerSettings listener;
  AdmissionWebhookOptions review;
};

// The options `flags` ask for; an error names a malformed flag.
absl::StatusOr<WebhookServerOptions> WebhookServerOptionsFrom(
    const WebhookFlags& flags);

// Serves the webhook over HTTPS with gpusched's own certificate
// (certified_server.h), keeping the MutatingWebhookConfiguration's
// caBundle. The extender never waits for any of this: without the webhook,
// pods are only ungated.
class WebhookServer {
 public:
  // `client` must outlive the server (or its Shutdown call).
  static std::unique_ptr<WebhookServer> Start(kube::KubeClient& client,
                                              WebhookServerOptions options);
  // Stops the thread (cancelling its API calls) and the listener.
  // Idempotent.
  void Shutdown() { server_->Shutdown(); }

 private:
  explicit WebhookServer(std::unique_ptr<CertifiedServer> server)
      : server_(std::move(server)) {}
  std::unique_ptr<CertifiedServer> server_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_ADMISSION_WEBHOOK_H_
