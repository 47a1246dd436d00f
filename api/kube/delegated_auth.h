// Authentication and authorization of an aggregated API server, delegated
// to kube-apiserver as k8s.io/apiserver does it:
//
//   - kube-apiserver proxies a request to us over TLS with its front-proxy
//     client certificate and names the user in headers (X-Remote-User,
//     X-Remote-Group, X-Remote-Extra-*). RequestHeaderAuthenticator trusts
//     those headers only when the connection's certificate chains to the
//     requestheader CA and its common name is an allowed name (any name
//     when none are listed). The CA, names and header names come from the
//     ConfigMap kube-system/extension-apiserver-authentication, read again
//     now and then (ReadRequestHeaderConfig) since they may be rotated.
//   - AccessReviewer asks kube-apiserver whether that user may do the
//     request (a SubjectAccessReview) and caches the answer briefly, so a
//     client polling a list costs the API server one review per TTL.
#ifndef GPUSCHED_API_KUBE_DELEGATED_AUTH_H_
#define GPUSCHED_API_KUBE_DELEGATED_AUTH_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "api/codec/delegated_auth_json.h"
#include "api/http/message.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {

inline constexpr std::string_view kAuthConfigMapPath =
    "/api/v1/namespaces/kube-system/configmaps/"
    "extension-apiserver-authentication";

// The ConfigMap's requestheader settings, read from the API server.
absl::StatusOr<RequestHeaderConfig> ReadRequestHeaderConfig(
    KubeClient& client, std::stop_token stop = {});

class RequestHeaderAuthenticator {
 public:
  // Replaces the settings; an unreadable CA keeps the previous ones.
  absl::Status Update(const RequestHeaderConfig& config);
  bool configured() const;

  // The user the front proxy names. Unauthenticated when the request has
  // no certificate, one that does not chain to the CA or has a common name
  // not allowed, or no user header; Unavailable before the first Update.
  absl::StatusOr<RequestUser> Authenticate(const http::Request& request) const;

 private:
  struct State;
  mutable std::mutex mu_;
  std::shared_ptr<const State> state_;
};

struct AccessReviewerOptions {
  // Sends a SubjectAccessReview body, returns the API server's answer.
  std::function<absl::StatusOr<std::string>(const std::string& body)> post;
  std::chrono::milliseconds allowed_ttl{10000};
  std::chrono::milliseconds denied_ttl{2000};
  size_t max_entries = 4096;
  std::function<std::chrono::steady_clock::time_point()> now =
      std::chrono::steady_clock::now;
};

// `post` for a client: POST /apis/authorization.k8s.io/v1/
// subjectaccessreviews with a short deadline (a reader waits on it).
std::function<absl::StatusOr<std::string>(const std::string&)>
PostSubjectAccessReview(KubeClient& client);

class AccessReviewer {
 public:
  explicit AccessReviewer(AccessReviewerOptions options)
      : options_(std::move(options)) {}
  // The API server's verdict, from the cache while it is fresh. A failed
  // review is an error and is not cached. Thread-safe.
  absl::StatusOr<AccessVerdict> Review(const RequestUser& user,
                                       const ResourceAttributes& attributes);

 private:
  struct Entry {
    AccessVerdict verdict;
    std::chrono::steady_clock::time_point expires;
  };
  void Remember(const std::string& key, const AccessVerdict& verdict);

  const AccessReviewerOptions options_;
  std::mutex mu_;
  std::map<std::string, Entry, std::less<>> cache_;  // by review body
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_DELEGATED_AUTH_H_
