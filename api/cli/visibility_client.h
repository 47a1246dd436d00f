// The plugin's calls to gpusched's visibility API, made through
// kube-apiserver with the user's own credentials (kube::KubeClient), and
// the one place that turns a failed call into a message saying what to do:
// install or fix the APIService, ask for a role, retry a standby.
#ifndef GPUSCHED_API_CLI_VISIBILITY_CLIENT_H_
#define GPUSCHED_API_CLI_VISIBILITY_CLIENT_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/kube/kube_client.h"

namespace gpusched::cli {

inline constexpr std::string_view kVisibilityApiPath =
    "/apis/visibility.gpusched.io/v1alpha1";
inline constexpr std::string_view kVisibilityApiService =
    "v1alpha1.visibility.gpusched.io";

// One read of the API: what the path is below kVisibilityApiPath, and what
// access it needs (for a 403's advice).
struct ApiRead {
  std::string path;            // "/namespaces/team-a/localqueues"
  std::string verb;            // "get" or "list"
  std::string resource;        // "localqueues" or "workloads/explain"
  std::string namespace_name;  // empty: cluster-scoped
};

ApiRead ExplainRead(std::string_view namespace_name, std::string_view name);
ApiRead LocalQueuesRead(std::string_view namespace_name);
ApiRead PendingWorkloadsRead(std::string_view namespace_name,
                             std::string_view local_queue, size_t limit,
                             size_t offset);
ApiRead ClusterQueuesRead();
ApiRead CohortsRead();

// What the discovery document of the group version answered: whether the
// APIService is there and routed to a serving gpusched.
enum class Discovery {
  kServed,       // 200: gpusched answers
  kNotFound,     // 404: no APIService (gpusched's API not installed)
  kUnavailable,  // 503 or another failure: installed, not available
};

// `failure` (a KubeClient error for `read`) rewritten for a person: the
// server's message and what to do about it. `discovery` is asked only for
// a 404 or a 503, which discovery tells apart (the object or the API
// missing; a standby replica or the APIService down). Keeps the code.
absl::Status DescribeFailure(const absl::Status& failure, const ApiRead& read,
                             std::optional<Discovery> discovery);

// Whether DescribeFailure needs discovery for `failure`.
bool NeedsDiscovery(const absl::Status& failure);

class VisibilityClient {
 public:
  // `client` must outlive this.
  explicit VisibilityClient(kube::KubeClient& client) : client_(client) {}

  // The answer's body; a failure is described (DescribeFailure).
  absl::StatusOr<std::string> Get(const ApiRead& read);

 private:
  Discovery Discover();

  kube::KubeClient& client_;
};

}  // namespace gpusched::cli

#endif  // GPUSCHED_API_CLI_VISIBILITY_CLIENT_H_
