// Credentials from a kubeconfig's exec plugin (users[].user.exec), the way
// kubectl gets them for EKS, GKE, AKS and OIDC users: run the command with
// KUBERNETES_EXEC_INFO set, read an ExecCredential from its stdout, and
// reuse the token (or client certificate) until it expires.
//
// The plugin runs as kubectl runs it (client-go's exec authenticator):
// without a shell, its stderr copied to ours, and standard input by its
// interactiveMode:
//   Never        /dev/null; KUBERNETES_EXEC_INFO says spec.interactive false.
//   IfAvailable  ours when it is a terminal (spec.interactive true), else
//                /dev/null (false).
//   Always       ours, which must be a terminal: otherwise the run fails
//                before the plugin starts, in kubectl's words ("exec plugin
//                cannot support interactive mode: standard input is not a
//                terminal").
// Its run is bounded: a timeout, after which it is killed, and a cap on
// its output.
//
// Thread-safety: ExecCredentialSource may be used from several threads.
// One plugin run at a time: callers that need a credential while it runs
// wait for its result rather than start another (as client-go does).
#ifndef GPUSCHED_API_KUBE_EXEC_CREDENTIAL_H_
#define GPUSCHED_API_KUBE_EXEC_CREDENTIAL_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "api/codec/exec_credential_json.h"
#include "api/kube/kube_config.h"

namespace gpusched::kube {

struct ExecCredentialOptions {
  // A plugin may open a browser and wait for a login elsewhere; a minute
  // is what such a login takes, and no plugin should need longer.
  std::chrono::milliseconds timeout{60000};
  // A credential is a few kilobytes; more is a broken plugin.
  size_t max_output = size_t{1} << 20;
  // A credential is renewed this long before its expirationTimestamp, so a
  // request does not reach the server with one that expired on the way.
  std::chrono::seconds expiry_margin{10};
  // The clock expiry is read against; empty: system_clock::now.
  std::function<std::chrono::system_clock::time_point()> now;
  // The standard input a plugin may prompt on (kubectl lends its own): 0,
  // this process's. Tests lend a pseudo-terminal or a pipe instead.
  int stdin_fd = 0;
};

struct ExecCredential {
  std::string token;            // empty when the plugin gave a certificate
  std::string client_cert_pem;  // both or neither
  std::string client_key_pem;
  // When it expires; unset: it is used until the server refuses it.
  std::optional<std::chrono::system_clock::time_point> expiry;
};

// Runs the plugin once and returns what it printed. `cluster` is sent in
// KUBERNETES_EXEC_INFO when the spec asks for it. Errors name the command
// and say what went wrong: not found (with its installHint, as kubectl
// prints it), its exit code and the end of its stderr, a timeout, too much
// output, a malformed ExecCredential, or interactiveMode Always without a
// terminal (FailedPrecondition; the plugin is not run).
absl::StatusOr<ExecCredential> RunExecPlugin(
    const ExecCredentialSpec& spec, const ExecClusterInfo& cluster,
    const ExecCredentialOptions& options = {});

// The plugin's credential, cached.
class ExecCredentialSource {
 public:
  // `config.exec` must be set; its cluster is what provideClusterInfo sends.
  explicit ExecCredentialSource(const KubeConfig& config,
                                ExecCredentialOptions options = {});

  // The cached credential while it is valid (until expiry minus the
  // margin, or for the process's life without an expiry); otherwise runs
  // the plugin and caches what it gives. A failed run caches nothing.
  absl::StatusOr<std::shared_ptr<const ExecCredential>> Get();

  // The API server refused `used` (HTTP 401): the next Get runs the plugin
  // again, unless another caller already replaced `used` (so a burst of
  // refusals costs one run, not one each).
  void Invalidate(const std::shared_ptr<const ExecCredential>& used);

 private:
  bool FreshLocked() const;

  const ExecCredentialSpec spec_;
  const ExecClusterInfo cluster_;
  const ExecCredentialOptions options_;

  // Held while the plugin runs, so concurrent callers share one run.
  std::mutex mu_;
  std::shared_ptr<const ExecCredential> cached_;  // guarded by mu_
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_EXEC_CREDENTIAL_H_
