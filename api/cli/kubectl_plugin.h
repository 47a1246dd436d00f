// `kubectl gpusched`: the gpusched executable run as a kubectl plugin
// (kubectl runs kubectl-gpusched from PATH for `kubectl gpusched ...`).
// It reads gpusched's visibility API through kube-apiserver with the
// user's kubeconfig, exactly as kubectl would connect: the same files,
// contexts, namespaces and credential plugins (api/kube/kube_config.h).
//
//   kubectl gpusched explain [-n NS] POD|podgroup/NAME
//   kubectl gpusched queue [-n NS] [LOCALQUEUE]
//   kubectl gpusched status
//   kubectl gpusched version
//
// Exit status 0 on success, 1 on any error (kubectl's convention), with
// the error and what to do about it on stderr.
#ifndef GPUSCHED_API_CLI_KUBECTL_PLUGIN_H_
#define GPUSCHED_API_CLI_KUBECTL_PLUGIN_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "api/kube/kube_client.h"
#include "api/kube/kube_config.h"

namespace gpusched::cli {

// The name kubectl finds the plugin by.
inline constexpr std::string_view kPluginName = "kubectl-gpusched";

struct KubectlPluginOptions {
  // $KUBECONFIG and $HOME; the flags set the rest.
  kube::KubeconfigSelection environment;
  // Unix seconds now, for ages and expected starts.
  std::function<int64_t()> now;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  kube::KubeClientOptions client;
};

// The process's environment, clock, stdout and stderr.
KubectlPluginOptions DefaultPluginOptions();

// Runs the plugin on `args` (what follows the plugin's name); returns the
// exit status.
int RunKubectlPlugin(const std::vector<std::string>& args,
                     const KubectlPluginOptions& options);

}  // namespace gpusched::cli

#endif  // GPUSCHED_API_CLI_KUBECTL_PLUGIN_H_
