// Certificates for gpusched's admission webhook, managed by gpusched itself
// (as Kueue's internal cert management does), so that `kubectl apply -k
// deploy/` needs no cert-manager and no manual step:
//
//   1. Get the Secret (--webhook-secret). Absent: make a self-signed CA and a
//      serving certificate for the configured names, and create the Secret.
//      A 409 means another replica created it first: read and use that one,
//      so every replica presents a certificate of the same CA.
//   2. Serve HTTPS with the Secret's certificate (held in memory only).
//   3. Patch the caBundle of every webhook in the MutatingWebhookConfiguration
//      (--webhook-config-name) when it differs from the Secret's CA; repeat
//      now and then, since a re-apply of the manifest may clear it.
//
// The CA's private key is not kept: nothing re-signs, so a leaked Secret
// cannot mint certificates for other names. To change names or renew, delete
// the Secret and restart gpusched; the certificates are valid for ten years.
// The calls need secrets get/create and mutatingwebhookconfigurations
// get/patch, nothing else (deploy/manifests/10-rbac.yaml).
#ifndef GPUSCHED_API_KUBE_WEBHOOK_CERTS_H_
#define GPUSCHED_API_KUBE_WEBHOOK_CERTS_H_

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/codec/webhook_json.h"  // WebhookCerts
#include "api/kube/kube_client.h"

namespace gpusched::kube {

// PEM text of the CA and the serving certificate (api/codec/webhook_json.h).
using ::gpusched::WebhookCerts;

struct WebhookCertOptions {
  std::string secret_namespace = "gpusched-system";
  std::string secret_name = "gpusched-webhook-tls";
  std::string webhook_config_name = "gpusched";
  // Subject alternative names of the serving certificate; an IP literal
  // becomes an IP SAN, anything else a DNS SAN.
  std::vector<std::string> names = {
      "gpusched-webhook.gpusched-system.svc",
      "gpusched-webhook.gpusched-system.svc.cluster.local"};
  std::chrono::hours validity{24 * 365 * 10};
};

// A new CA (P-256, self-signed) and a serving certificate for `names`
// (serverAuth), both valid from an hour ago (clock skew) for `validity`.
absl::StatusOr<WebhookCerts> MakeWebhookCerts(
    const std::vector<std::string>& names, std::chrono::hours validity);

// What is wrong with serving `names` with `certs` now: a name the serving
// certificate does not cover, or its expiry within 30 days. Empty: nothing.
std::vector<std::string> ServingProblems(const WebhookCerts& certs,
                                         const std::vector<std::string>& names);

// Step 1 above.
absl::StatusOr<WebhookCerts> GetOrCreateWebhookSecret(
    KubeClient& client, const WebhookCertOptions& options,
    std::stop_token stop = {});

// Step 3 above, once: true if it patched, false if the caBundle was right.
absl::StatusOr<bool> EnsureCaBundle(KubeClient& client,
                                    std::string_view config_name,
                                    std::string_view ca_pem,
                                    std::stop_token stop = {});

// The same for the APIService `name` (spec.caBundle), for an aggregated
// API server; needs apiservices get/patch.
absl::StatusOr<bool> EnsureApiServiceCaBundle(KubeClient& client,
                                              std::string_view name,
                                              std::string_view ca_pem,
                                              std::stop_token stop = {});

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_WEBHOOK_CERTS_H_
