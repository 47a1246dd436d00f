#include "api/cli/visibility_client.h"

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kViewerRole = "gpusched-visibility-viewer";
constexpr std::string_view kClusterViewerRole =
    "gpusched-visibility-cluster-viewer";
constexpr std::string_view kCheckApiService =
    "kubectl get apiservice v1alpha1.visibility.gpusched.io";

// The StatusReason kubectl prints in "Error from server (...)".
std::string_view ReasonOf(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

std::string FromServer(const kube::HttpFailure& failure) {
  return absl::StrCat("Error from server (", Sv(ReasonOf(failure.code)),
                      "): ", failure.message);
}

// `kubectl auth can-i` for the read: "get localqueues.visibility.gpusched.io
// --subresource=pendingworkloads -n team-a".
std::string CanI(const ApiRead& read) {
  const size_t slash = read.resource.find('/');
  std::string out =
      absl::StrCat("kubectl auth can-i ", read.verb, " ",
                   read.resource.substr(0, slash), ".visibility.gpusched.io");
  if (slash != std::string::npos) {
    absl::StrAppend(&out, " --subresource=", read.resource.substr(slash + 1));
  }
  if (!read.namespace_name.empty()) {
    absl::StrAppend(&out, " -n ", read.namespace_name);
  }
  return out;
}

// Which right is missing, and the binding that grants it (the roles of
// deploy/manifests/70-visibility.yaml).
std::string ForbiddenAdvice(const ApiRead& read) {
  if (read.namespace_name.empty()) {
    return absl::StrCat(
        "You may not ", read.verb, " ", read.resource,
        " (visibility.gpusched.io) cluster-wide; they show every team's "
        "workloads.\nAsk a cluster admin to bind the ClusterRole ",
        Sv(kClusterViewerRole), " to you:\n  kubectl create ",
        "clusterrolebinding ", Sv(kClusterViewerRole), "-YOUR-USER ",
        "--clusterrole=", Sv(kClusterViewerRole), " --user=YOUR-USER\n",
        "Check with: ", CanI(read));
  }
  return absl::StrCat(
      "You may not ", read.verb, " ", read.resource,
      " (visibility.gpusched.io) in namespace ", read.namespace_name,
      ".\nAsk an admin to bind the ClusterRole ", Sv(kViewerRole),
      " to you in that namespace (the built-in view role includes it where "
      "role aggregation runs):\n  kubectl create rolebinding ",
      Sv(kViewerRole), " -n ", read.namespace_name,
      " --clusterrole=", Sv(kViewerRole),
      " --user=YOUR-USER\nCheck with: ", CanI(read));
}

std::string NotInstalled() {
  return absl::StrCat(
      "error: gpusched's visibility API (visibility.gpusched.io/v1alpha1) is "
      "not installed in this cluster.\nCheck with: ",
      Sv(kCheckApiService),
      "\nIt is installed with gpusched, from "
      "deploy/manifests/70-visibility.yaml.");
}

std::string NotReady(const kube::HttpFailure& failure) {
  return absl::StrCat(
      "error: gpusched's visibility API is installed but not ready (",
      FromServer(failure), ").\nCheck with: ", Sv(kCheckApiService),
      "\n(AVAILABLE must be True; when it is not, its message says why), "
      "and: kubectl -n gpusched-system get pods");
}

std::string Standby(const kube::HttpFailure& failure) {
  return absl::StrCat(FromServer(failure),
                      "\nThe gpusched replica that answered is not serving "
                      "queues yet (a standby, or the leader starting). "
                      "Retry in a few seconds.");
}

std::string Unauthorized(const kube::HttpFailure& failure) {
  return absl::StrCat(FromServer(failure),
                      "\nThe API server did not accept your credentials: log "
                      "in again (check with: kubectl auth whoami).");
}

}  // namespace

ApiRead ExplainRead(std::string_view namespace_name, std::string_view name) {
  return {.path = absl::StrCat("/namespaces/", Sv(namespace_name),
                               "/workloads/", Sv(name), "/explain"),
          .verb = "get",
          .resource = "workloads/explain",
          .namespace_name = std::string(namespace_name)};
}

ApiRead LocalQueuesRead(std::string_view namespace_name) {
  return {
      .path = absl::StrCat("/namespaces/", Sv(namespace_name), "/localqueues"),
      .verb = "list",
      .resource = "localqueues",
      .namespace_name = std::string(namespace_name)};
}

ApiRead PendingWorkloadsRead(std::string_view namespace_name,
                             std::string_view local_queue, size_t limit,
                             size_t offset) {
  return {
      .path = absl::StrCat("/namespaces/", Sv(namespace_name), "/localqueues/",
                           Sv(local_queue), "/pendingworkloads?limit=", limit,
                           "&offset=", offset),
      .verb = "get",
      .resource = "localqueues/pendingworkloads",
      .namespace_name = std::string(namespace_name)};
}

ApiRead ClusterQueuesRead() {
  return {
      .path = "/clusterqueues", .verb = "list", .resource = "clusterqueues"};
}

ApiRead CohortsRead() {
  return {.path = "/cohorts", .verb = "list", .resource = "cohorts"};
}

bool NeedsDiscovery(const absl::Status& failure) {
  std::optional<kube::HttpFailure> http = kube::HttpFailureOf(failure);
  return http.has_value() && (http->code == 404 || http->code == 503);
}

absl::Status DescribeFailure(const absl::Status& failure, const ApiRead& read,
                             std::optional<Discovery> discovery) {
  std::optional<kube::HttpFailure> http = kube::HttpFailureOf(failure);
  if (!http.has_value()) {
    // No answer: the API server unreachable, a timeout, no credentials
    // (the credential plugin's own message says what to do).
    std::string text = absl::StrCat("error: ", Sv(Message(failure)));
    if (failure.code() == absl::StatusCode::kUnavailable ||
        failure.code() == absl::StatusCode::kDeadlineExceeded) {
      absl::StrAppend(&text,
                      "\nIs the API server reachable? Check with: kubectl "
                      "cluster-info");
    }
    return absl::Status(failure.code(), text);
  }
  std::string text;
  if (discovery == Discovery::kNotFound) {
    text = NotInstalled();
  } else if (discovery == Discovery::kUnavailable) {
    text = NotReady(*http);
  } else if (http->code == 503) {
    text = Standby(*http);
  } else if (http->code == 403) {
    text = absl::StrCat(FromServer(*http), "\n", ForbiddenAdvice(read));
  } else if (http->code == 401) {
    text = Unauthorized(*http);
  } else {
    text = FromServer(*http);  // a 404 says why (not gpusched's, not queued)
  }
  return absl::Status(failure.code(), text);
}

absl::StatusOr<std::string> VisibilityClient::Get(const ApiRead& read) {
  absl::StatusOr<std::string> body =
      client_.Get(absl::StrCat(Sv(kVisibilityApiPath), read.path));
  if (body.ok()) return body;
  std::optional<Discovery> discovery;
  if (NeedsDiscovery(body.status())) discovery = Discover();
  return DescribeFailure(body.status(), read, discovery);
}

Discovery VisibilityClient::Discover() {
  absl::StatusOr<std::string> body = client_.Get(kVisibilityApiPath);
  if (body.ok()) return Discovery::kServed;
  std::optional<kube::HttpFailure> http = kube::HttpFailureOf(body.status());
  if (http.has_value() && http->code == 404) return Discovery::kNotFound;
  return Discovery::kUnavailable;
}

}  // namespace gpusched::cli
