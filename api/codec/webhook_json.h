#ifndef GPUSCHED_API_CODEC_WEBHOOK_JSON_H_
#define GPUSCHED_API_CODEC_WEBHOOK_JSON_H_

// The Kubernetes objects of gpusched's self-certified listeners
// (api/kube/webhook_certs.h): the kubernetes.io/tls Secret that keeps their
// certificates, and the merge patches that put the CA into a
// MutatingWebhookConfiguration's caBundles and an APIService's.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched {

// PEM text of a CA certificate, and of a serving certificate it signed with
// that certificate's private key.
struct WebhookCerts {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
};

// The Secret `namespace_name`/`name` (type kubernetes.io/tls: tls.crt,
// tls.key, plus ca.crt) as JSON.
std::string EncodeWebhookSecret(std::string_view namespace_name,
                                std::string_view name,
                                const WebhookCerts& certs);

// The certificates of a Secret as the API server returns it; an error names
// the missing or undecodable key ("Secret.data[\"tls.key\"]: missing").
absl::StatusOr<WebhookCerts> DecodeWebhookSecret(std::string_view json);

// The merge patch that sets every webhook's clientConfig.caBundle to
// `ca_pem` (base64 encoded), or nullopt when all of them hold it already.
// Every other field of the webhooks is sent back as it was read (the list is
// replaced as a whole), with the configuration's resourceVersion, so that a
// concurrent change gets a 409 rather than being overwritten.
absl::StatusOr<std::optional<std::string>> EncodeCaBundlePatch(
    std::string_view config_json, std::string_view ca_pem);

// The merge patch that sets an APIService's spec.caBundle to `ca_pem`
// (base64 encoded), with its resourceVersion, or nullopt when it holds it
// already.
absl::StatusOr<std::optional<std::string>> EncodeApiServiceCaBundlePatch(
    std::string_view apiservice_json, std::string_view ca_pem);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_WEBHOOK_JSON_H_
