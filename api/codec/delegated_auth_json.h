// The Kubernetes objects an aggregated API server reads and writes to
// delegate authentication and authorization to kube-apiserver
// (api/kube/delegated_auth.h): the ConfigMap
// kube-system/extension-apiserver-authentication, which holds the front
// proxy's CA, allowed names and header names, and SubjectAccessReviews.
#ifndef GPUSCHED_API_CODEC_DELEGATED_AUTH_JSON_H_
#define GPUSCHED_API_CODEC_DELEGATED_AUTH_JSON_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched {

// kube-apiserver's --requestheader-* flags as it publishes them.
struct RequestHeaderConfig {
  std::string client_ca_pem;  // requestheader-client-ca-file
  // Common names a front proxy's certificate may have; empty: any
  // certificate of the CA.
  std::vector<std::string> allowed_names;
  std::vector<std::string> username_headers;        // e.g. X-Remote-User
  std::vector<std::string> group_headers;           // e.g. X-Remote-Group
  std::vector<std::string> extra_headers_prefixes;  // e.g. X-Remote-Extra-
  friend bool operator==(const RequestHeaderConfig&,
                         const RequestHeaderConfig&) = default;
};

// The ConfigMap's data. Without requestheader-client-ca-file the API
// server has no front proxy configured: an error that says so.
absl::StatusOr<RequestHeaderConfig> DecodeRequestHeaderConfig(
    std::string_view configmap_json);

// Who a request is from, as the front proxy named them.
struct RequestUser {
  std::string name;
  std::vector<std::string> groups;
  // Extra attributes (X-Remote-Extra-<key>), keys lower-cased.
  std::vector<std::pair<std::string, std::vector<std::string>>> extra;
  friend bool operator==(const RequestUser&, const RequestUser&) = default;
};

// What a request does, as a SubjectAccessReview's resourceAttributes.
struct ResourceAttributes {
  std::string verb;  // "get"
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  std::string namespace_name;  // empty: cluster-scoped
  std::string name;
  friend bool operator==(const ResourceAttributes&,
                         const ResourceAttributes&) = default;
};

// POST body of authorization.k8s.io/v1 subjectaccessreviews.
std::string EncodeSubjectAccessReview(const RequestUser& user,
                                      const ResourceAttributes& attributes);

struct AccessVerdict {
  bool allowed = false;
  std::string reason;  // the authorizer's, may be empty
};

// status.allowed and status.reason of the API server's answer.
absl::StatusOr<AccessVerdict> DecodeSubjectAccessReview(std::string_view json);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_DELEGATED_AUTH_JSON_H_
