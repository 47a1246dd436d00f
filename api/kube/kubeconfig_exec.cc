// users[].user.exec: a credential plugin's settings, checked as kubectl
// checks them when it loads the file (client-go's clientcmd validation), so
// a mistake is reported with its field before anything runs.
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "api/kube/kube_config.h"
#include "api/kube/kubeconfig_internal.h"

namespace gpusched::kube::internal {
namespace {

absl::Status ReadApiVersion(const YAML::Node& exec, const std::string& path,
                            ExecCredentialSpec& spec) {
  spec.api_version = Scalar(exec, "apiVersion");
  if (spec.api_version.empty()) {
    return FieldError(
        path + ".apiVersion",
        absl::StrFormat("missing: %s or %s", kExecApiV1, kExecApiV1Beta1));
  }
  if (spec.api_version != kExecApiV1 && spec.api_version != kExecApiV1Beta1) {
    return FieldError(
        path + ".apiVersion",
        absl::StrFormat("\"%s\" is not supported: use %s or %s",
                        spec.api_version, kExecApiV1, kExecApiV1Beta1));
  }
  return absl::OkStatus();
}

// v1 requires interactiveMode; v1beta1 defaults it to IfAvailable. All
// three modes are valid here, as for kubectl: whether a terminal is there
// to honour Always is asked when the plugin runs (exec_credential.h).
absl::Status ReadInteractiveMode(const YAML::Node& exec,
                                 const std::string& path,
                                 ExecCredentialSpec& spec) {
  const std::string field = path + ".interactiveMode";
  const std::string mode = Scalar(exec, "interactiveMode");
  if (mode.empty() && spec.api_version == kExecApiV1) {
    return FieldError(field, absl::StrFormat("missing: %s requires Never, "
                                             "IfAvailable or Always",
                                             kExecApiV1));
  }
  if (mode.empty() || mode == "IfAvailable") {
    spec.interactive_mode = ExecInteractiveMode::kIfAvailable;
  } else if (mode == "Never") {
    spec.interactive_mode = ExecInteractiveMode::kNever;
  } else if (mode == "Always") {
    spec.interactive_mode = ExecInteractiveMode::kAlways;
  } else {
    return FieldError(field, absl::StrFormat("\"%s\" is not one of Never, "
                                             "IfAvailable, Always",
                                             mode));
  }
  return absl::OkStatus();
}

absl::Status ReadArgs(const YAML::Node& exec, const std::string& path,
                      ExecCredentialSpec& spec) {
  const YAML::Node args = exec["args"];
  if (!args || args.IsNull()) return absl::OkStatus();
  if (!args.IsSequence()) {
    return FieldError(path + ".args", "expected a list of strings");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].IsScalar()) {
      return FieldError(absl::StrFormat("%s.args[%d]", path, i),
                        "expected a string");
    }
    spec.args.push_back(args[i].as<std::string>());
  }
  return absl::OkStatus();
}

absl::Status ReadEnv(const YAML::Node& exec, const std::string& path,
                     ExecCredentialSpec& spec) {
  const YAML::Node env = exec["env"];
  if (!env || env.IsNull()) return absl::OkStatus();
  if (!env.IsSequence()) {
    return FieldError(path + ".env", "expected a list of {name, value}");
  }
  for (size_t i = 0; i < env.size(); ++i) {
    const std::string at = absl::StrFormat("%s.env[%d]", path, i);
    if (!env[i].IsMap()) return FieldError(at, "expected {name, value}");
    std::string name = Scalar(env[i], "name");
    if (name.empty()) return FieldError(at + ".name", "missing");
    if (name.find('=') != std::string::npos) {
      return FieldError(at + ".name", "must not contain '='");
    }
    spec.env.emplace_back(std::move(name), Scalar(env[i], "value"));
  }
  return absl::OkStatus();
}

absl::Status ReadProvideClusterInfo(const YAML::Node& exec,
                                    const std::string& path,
                                    ExecCredentialSpec& spec) {
  const YAML::Node value = exec["provideClusterInfo"];
  if (!value || value.IsNull()) return absl::OkStatus();
  if (!value.IsScalar() ||
      !YAML::convert<bool>::decode(value, spec.provide_cluster_info)) {
    return FieldError(path + ".provideClusterInfo", "expected true or false");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadExec(const YAML::Node& exec, const std::string& path,
                      std::string_view dir, ExecCredentialSpec& spec) {
  if (!exec.IsMap()) return FieldError(path, "expected a mapping");
  spec.command = Scalar(exec, "command");
  if (spec.command.empty()) return FieldError(path + ".command", "missing");
  // kubectl resolves a command with a '/' against the kubeconfig's
  // directory, so a plugin can ship next to the file that names it.
  if (spec.command.find('/') != std::string::npos) {
    spec.command = ResolvePath(dir, spec.command);
  }
  for (auto read : {ReadApiVersion, ReadInteractiveMode, ReadArgs, ReadEnv,
                    ReadProvideClusterInfo}) {
    if (absl::Status s = read(exec, path, spec); !s.ok()) return s;
  }
  spec.install_hint = Scalar(exec, "installHint");
  return absl::OkStatus();
}

}  // namespace gpusched::kube::internal
