#include "api/kube/exec_credential.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/kube/exec_process.h"
#include "scheduler/base/strings.h"

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace gpusched::kube {
namespace {

using WallClock = std::chrono::system_clock;

// What kubectl prints after "exec: executable X not found", so that a user
// who copied a kubeconfig from a cloud console learns what to install.
constexpr char kInstallHelp[] =
    "\n\nIt looks like you are trying to use a client-go credential plugin "
    "that is not installed.\n\nTo learn more about this feature, consult the "
    "documentation available at:\n      "
    "https://kubernetes.io/docs/reference/access-authn-authz/"
    "authentication/#client-go-credential-plugins";

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// A bare name is looked up on this process's PATH (not the plugin's env),
// as kubectl does; relative PATH entries are skipped, as Go's LookPath
// refuses results found through them.
std::optional<std::string> FindExecutable(const std::string& command) {
  if (command.find('/') != std::string::npos) {
    if (::access(command.c_str(), F_OK) != 0) return std::nullopt;
    return command;  // spawning says if it cannot run
  }
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate = absl::StrFormat("%s/%s", dir, command);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return std::nullopt;
}

absl::Status NotFound(const ExecCredentialSpec& spec) {
  std::string message = absl::StrFormat("exec: executable %s not found%s",
                                        spec.command, kInstallHelp);
  if (!spec.install_hint.empty()) {
    absl::StrAppendFormat(&message, "\n\n%s", spec.install_hint);
  }
  return absl::NotFoundError(message);
}

// This process's environment with the kubeconfig's entries and
// KUBERNETES_EXEC_INFO added; an added name replaces an inherited one, and
// of names added twice the last wins (as Go's os/exec dedups kubectl's).
std::vector<std::string> PluginEnvironment(const ExecCredentialSpec& spec,
                                           std::string exec_info) {
  std::vector<std::pair<std::string, std::string>> added = spec.env;
  added.emplace_back("KUBERNETES_EXEC_INFO", std::move(exec_info));
  auto added_after = [&](size_t from, std::string_view name) {
    return std::any_of(added.begin() + from, added.end(),
                       [&](const auto& entry) { return entry.first == name; });
  };
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!added_after(0, text.substr(0, text.find('=')))) env.emplace_back(text);
  }
  for (size_t i = 0; i < added.size(); ++i) {
    if (added_after(i + 1, added[i].first)) continue;
    env.push_back(absl::StrFormat("%s=%s", added[i].first, added[i].second));
  }
  return env;
}

// "exec: executable X failed with exit code N" (kubectl's words) and the
// end of what the plugin wrote on stderr, which usually says why.
absl::Status ExitError(const ExecCredentialSpec& spec,
                       const internal::ProcessResult& result) {
  std::string message =
      result.signal != 0
          ? absl::StrFormat("exec: executable %s was killed by signal %d",
                            spec.command, result.signal)
          : absl::StrFormat("exec: executable %s failed with exit code %d",
                            spec.command, result.exit_code);
  const absl::string_view tail = absl::StripAsciiWhitespace(result.stderr_tail);
  if (!tail.empty()) absl::StrAppendFormat(&message, "; stderr: %s", tail);
  return absl::UnauthenticatedError(message);
}

ExecCredential ToCredential(ExecCredentialStatus status) {
  ExecCredential credential{
      .token = std::move(status.token),
      .client_cert_pem = std::move(status.client_certificate_pem),
      .client_key_pem = std::move(status.client_key_pem)};
  if (status.expiration_unix_seconds.has_value()) {
    credential.expiry = WallClock::from_time_t(
        static_cast<time_t>(*status.expiration_unix_seconds));
  }
  return credential;
}

// kubectl's rule (client-go's isInteractive): whether the plugin gets our
// standard input and is told it may prompt.
absl::StatusOr<bool> Interactive(const ExecCredentialSpec& spec, int stdin_fd) {
  const bool terminal = ::isatty(stdin_fd) == 1;
  switch (spec.interactive_mode) {
    case ExecInteractiveMode::kNever:
      return false;
    case ExecInteractiveMode::kIfAvailable:
      return terminal;
    case ExecInteractiveMode::kAlways:
      if (terminal) return true;
      return absl::FailedPreconditionError(absl::StrFormat(
          "exec: executable %s: exec plugin cannot support interactive mode: "
          "standard input is not a terminal (its interactiveMode is Always: "
          "run it where standard input is a terminal, or set interactiveMode "
          "to IfAvailable or Never)",
          spec.command));
  }
  return false;
}

// The plugin's process: argv, environment with KUBERNETES_EXEC_INFO, bounds,
// and our standard input when it runs interactively.
internal::ProcessSpec PluginProcess(const ExecCredentialSpec& spec,
                                    std::string path,
                                    const ExecClusterInfo& cluster,
                                    const ExecCredentialOptions& options,
                                    bool interactive) {
  ExecCredentialRequest request{.api_version = spec.api_version,
                                .interactive = interactive};
  if (spec.provide_cluster_info) request.cluster = cluster;
  internal::ProcessSpec process{
      .path = std::move(path),
      .env = PluginEnvironment(spec, EncodeExecCredentialRequest(request)),
      .timeout = options.timeout,
      .max_stdout = options.max_output,
      .stdin_fd = interactive ? options.stdin_fd : -1};
  process.argv.push_back(spec.command);
  process.argv.insert(process.argv.end(), spec.args.begin(), spec.args.end());
  return process;
}

}  // namespace

absl::StatusOr<ExecCredential> RunExecPlugin(
    const ExecCredentialSpec& spec, const ExecClusterInfo& cluster,
    const ExecCredentialOptions& options) {
  // kubectl asks for a terminal before it looks for the command.
  absl::StatusOr<bool> interactive = Interactive(spec, options.stdin_fd);
  if (!interactive.ok()) return interactive.status();
  const std::optional<std::string> path = FindExecutable(spec.command);
  if (!path.has_value()) return NotFound(spec);
  absl::StatusOr<internal::ProcessResult> result = internal::RunProcess(
      PluginProcess(spec, *path, cluster, options, *interactive));
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrFormat("exec: executable %s: %s", spec.command,
                                        Message(result.status())));
  }
  if (result->exit_code != 0) return ExitError(spec, *result);
  absl::StatusOr<ExecCredentialStatus> status =
      DecodeExecCredential(result->stdout_text, spec.api_version);
  if (!status.ok()) {
    return absl::Status(
        status.status().code(),
        absl::StrFormat("exec: executable %s printed an unusable credential: "
                        "%s",
                        spec.command, Message(status.status())));
  }
  return ToCredential(*std::move(status));
}

ExecCredentialSource::ExecCredentialSource(const KubeConfig& config,
                                           ExecCredentialOptions options)
    : spec_(config.exec.value_or(ExecCredentialSpec{})),
      cluster_{.server = config.server_url,
               .tls_server_name = config.tls_server_name,
               .ca_pem = config.ca_pem},
      options_(std::move(options)) {}

bool ExecCredentialSource::FreshLocked() const {
  if (!cached_->expiry.has_value()) return true;
  const WallClock::time_point now =
      options_.now ? options_.now() : WallClock::now();
  return now < *cached_->expiry - options_.expiry_margin;
}

absl::StatusOr<std::shared_ptr<const ExecCredential>>
ExecCredentialSource::Get() {
  std::lock_guard lock(mu_);
  if (cached_ != nullptr && FreshLocked()) return cached_;
  absl::StatusOr<ExecCredential> fresh =
      RunExecPlugin(spec_, cluster_, options_);
  if (!fresh.ok()) return fresh.status();
  cached_ = std::make_shared<const ExecCredential>(*std::move(fresh));
  return cached_;
}

void ExecCredentialSource::Invalidate(
    const std::shared_ptr<const ExecCredential>& used) {
  std::lock_guard lock(mu_);
  if (cached_ == used) cached_ = nullptr;
}

}  // namespace gpusched::kube
