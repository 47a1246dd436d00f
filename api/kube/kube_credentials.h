// What the API client sends each request with: the Authorization header
// and the connection pool, whose TLS client certificate is part of the
// credential. Internal to kube_client.cc.
//
// Sources, in kubectl's order: a fixed token, a token file (re-read as it
// rotates), an exec plugin (exec_credential.h; its token, and its client
// certificate when it gives one). A fixed client certificate from the
// kubeconfig stays on the pool unless a plugin gives another.
//
// Thread-safety: Get and Refused may be called concurrently.
#ifndef GPUSCHED_API_KUBE_KUBE_CREDENTIALS_H_
#define GPUSCHED_API_KUBE_KUBE_CREDENTIALS_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "api/http/client.h"
#include "api/kube/exec_credential.h"
#include "api/kube/kube_config.h"

namespace gpusched::kube::internal {

struct RequestCredentials {
  std::string authorization;  // the header's value; empty: none
  std::shared_ptr<http::Client> http;
  // The plugin's credential used, if one was: what a 401 refuses.
  std::shared_ptr<const ExecCredential> exec;
};

struct CredentialOptions {
  http::ClientOptions transport;  // the kubeconfig's TLS settings
  std::chrono::seconds token_reload{60};
  ExecCredentialOptions exec;
};

class KubeCredentials {
 public:
  // Runs no plugin and reads no token file yet: the first Get does.
  // Fails only on unusable TLS settings.
  static absl::StatusOr<std::unique_ptr<KubeCredentials>> Create(
      const KubeConfig& config, CredentialOptions options);

  // Errors (a token file never read, a plugin that fails) are
  // Unauthenticated and carry the "request not sent" payload: nothing
  // reached the server.
  absl::StatusOr<RequestCredentials> Get();

  // The API server answered 401 to a request sent with `used`. True when
  // sending it once more may succeed: the plugin's credential is dropped,
  // so the next Get runs the plugin again (kubectl does the same).
  bool Refused(const RequestCredentials& used);

 private:
  KubeCredentials(const KubeConfig& config, CredentialOptions options,
                  std::unique_ptr<http::Client> http);
  absl::StatusOr<std::string> TokenHeader();
  absl::StatusOr<std::shared_ptr<http::Client>> PoolFor(
      const ExecCredential& credential);

  const KubeConfig config_;
  const CredentialOptions options_;
  // Set when the user has a plugin and no token of its own.
  const std::unique_ptr<ExecCredentialSource> exec_;

  std::mutex mu_;
  std::string token_;                                 // guarded by mu_
  std::chrono::steady_clock::time_point token_read_;  // guarded by mu_
  // The pool, rebuilt when a plugin's client certificate changes (requests
  // in flight keep the old one until they end).
  std::shared_ptr<http::Client> http_;  // guarded by mu_
  std::string http_cert_pem_;           // guarded by mu_: http_'s certificate
};

}  // namespace gpusched::kube::internal

#endif  // GPUSCHED_API_KUBE_KUBE_CREDENTIALS_H_
