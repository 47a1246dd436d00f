// An HTTPS listener that kube-apiserver calls, with a certificate gpusched
// makes and keeps itself (kube/webhook_certs.h): the admission webhook's
// and the aggregated visibility API's. Start returns at once; a thread
//
//   1. gets or creates the Secret with the CA and serving certificate,
//   2. runs the owner's `prepare` step until it succeeds (e.g. reading the
//      front proxy's CA), then listens,
//   3. keeps the CA in the caBundle of the object that tells kube-apiserver
//      how to call the listener (a MutatingWebhookConfiguration, an
//      APIService), and runs the owner's `refresh` step, every `recheck`,
//
// retrying each step with backoff and logging why it waits. Nothing else
// in gpusched waits for any of this.
#ifndef GPUSCHED_API_SERVER_CERTIFIED_SERVER_H_
#define GPUSCHED_API_SERVER_CERTIFIED_SERVER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "api/http/message.h"
#include "api/http/server.h"
#include "api/kube/kube_client.h"
#include "api/kube/webhook_certs.h"

namespace gpusched {

// What `gpusched serve` sets of such a listener.
struct CertifiedListenerSettings {
  std::string listen;
  kube::WebhookCertOptions certs;
  int threads = 1;
  std::chrono::milliseconds read_timeout{10000};
  // How often the caBundle is checked once it was right (a re-apply of the
  // manifest may clear it), and the longest pause between failed attempts.
  std::chrono::seconds recheck{60};
};

struct CertifiedServerOptions {
  // Names the listener in logs ("webhook", "visibility").
  std::string component;
  // What is missing while it does not serve, for logs ("pods are not
  // gated").
  std::string down_effect;
  // Listen address, threads, limits; the TLS identity is filled in.
  http::ServerOptions server;
  kube::WebhookCertOptions certs;
  // What holds the caBundle, for logs ("APIService v1alpha1.x.io").
  std::string ca_bundle_holder;
  // Puts `ca_pem` into that object; true if it patched.
  std::function<absl::StatusOr<bool>(kube::KubeClient&, std::string_view,
                                     std::stop_token)>
      ensure_ca_bundle;
  // Optional: before listening, retried until it succeeds.
  std::function<absl::Status(std::stop_token)> prepare;
  // Optional: every `recheck` once listening; logs its own failures.
  std::function<void(std::stop_token)> refresh;
  // How often the caBundle is checked once it was right (a re-apply of the
  // manifest may clear it), and the longest pause between failed attempts.
  std::chrono::seconds recheck{60};
};

// `flag` ("--webhook-secret") holds NAMESPACE/NAME of the Secret: into
// `certs`, or an error naming the flag.
absl::Status SecretFromFlag(std::string_view flag, const std::string& value,
                            kube::WebhookCertOptions& certs);

class CertifiedServer {
 public:
  // `client` must outlive the server (or its Shutdown call).
  static std::unique_ptr<CertifiedServer> Start(kube::KubeClient& client,
                                                CertifiedServerOptions options,
                                                http::Handler handler);
  ~CertifiedServer();  // Shutdown()
  // Stops the thread (cancelling its API calls) and the listener.
  // Idempotent.
  void Shutdown();

 private:
  CertifiedServer(kube::KubeClient& client, CertifiedServerOptions options,
                  http::Handler handler);
  void Run(std::stop_token stop);
  std::optional<kube::WebhookCerts> AcquireCerts(std::stop_token stop);
  bool Prepare(std::stop_token stop);
  bool Listen(const kube::WebhookCerts& certs, std::stop_token stop);
  void KeepCaBundle(const std::string& ca_pem, std::stop_token stop);
  // Waits `pause` or until stop; false on stop.
  bool Pause(std::chrono::milliseconds pause, std::stop_token stop);

  kube::KubeClient& client_;
  const CertifiedServerOptions options_;
  const http::Handler handler_;
  std::unique_ptr<http::Server> server_;  // set by the thread
  std::mutex pause_mu_;
  std::condition_variable_any pause_cv_;
  std::jthread thread_;  // last: stopped first
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_CERTIFIED_SERVER_H_
