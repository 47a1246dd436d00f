#include "api/kube/kube_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

const char* Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// Splits "host", "host:port" or "[v6]:port"; `port` keeps its default when
// the text has none.
absl::Status SplitHostPort(std::string_view authority, std::string& host,
                           uint16_t& port) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("unterminated '[' in host");
    }
    host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() == ':') port_text = rest.substr(1);
  } else {
    size_t colon = authority.rfind(':');
    host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
    }
  }
  if (host.empty()) return absl::InvalidArgumentError("missing host");
  if (port_text.empty()) return absl::OkStatus();
  uint32_t parsed = 0;
  if (!absl::SimpleAtoi(Sv(port_text), &parsed) || parsed == 0 ||
      parsed > 65535) {
    return absl::InvalidArgumentError(
        absl::StrFormat("invalid port \"%s\"", port_text));
  }
  port = static_cast<uint16_t>(parsed);
  return absl::OkStatus();
}

}  // namespace

bool InClusterAvailable() {
  return Env("KUBERNETES_SERVICE_HOST") != nullptr &&
         Env("KUBERNETES_SERVICE_PORT") != nullptr;
}

absl::StatusOr<std::string> ReadFileText(std::string_view path) {
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) {
    return absl::NotFoundError(absl::StrFormat("cannot read %s", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status ParseServerUrl(std::string_view url, KubeConfig& config) {
  std::string_view rest = url;
  if (rest.starts_with("https://")) {
    config.tls = true;
    config.port = 443;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    config.tls = false;
    config.port = 80;
    rest.remove_prefix(7);
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "server \"%s\": must start with https:// (or http://)", url));
  }
  size_t slash = rest.find('/');
  std::string_view path =
      slash == std::string_view::npos ? "" : rest.substr(slash);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  config.base_path = std::string(path);
  absl::Status split =
      SplitHostPort(rest.substr(0, slash), config.host, config.port);
  if (!split.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("server \"%s\": %s", url, Message(split)));
  }
  return absl::OkStatus();
}

absl::StatusOr<KubeConfig> LoadInClusterConfig(std::string_view account_dir) {
  const char* host = Env("KUBERNETES_SERVICE_HOST");
  const char* port = Env("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr) {
    return absl::FailedPreconditionError(
        "not running in a pod: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT are not set; use --kubeconfig");
  }
  std::string_view host_text = host;
  // An IPv6 service address must be bracketed to be followed by a port.
  bool v6 = host_text.find(':') != std::string_view::npos;
  KubeConfig config;
  absl::Status url =
      ParseServerUrl(absl::StrFormat("https://%s%s%s:%s", v6 ? "[" : "",
                                     host_text, v6 ? "]" : "", port),
                     config);
  if (!url.ok()) return url;
  const std::string dir(account_dir);
  config.token_file = dir + "/token";
  absl::StatusOr<std::string> token = ReadFileText(config.token_file);
  if (!token.ok()) return token.status();
  absl::StatusOr<std::string> ca = ReadFileText(dir + "/ca.crt");
  if (!ca.ok()) return ca.status();
  config.ca_pem = *std::move(ca);
  // The namespace file is optional: its absence only matters to callers
  // that create namespaced objects of their own.
  absl::StatusOr<std::string> ns = ReadFileText(dir + "/namespace");
  if (ns.ok())
    config.namespace_name = std::string(absl::StripAsciiWhitespace(*ns));
  config.source = "in-cluster";
  return config;
}

}  // namespace gpusched::kube
