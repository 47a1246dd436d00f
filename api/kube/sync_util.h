// What the cluster's list-and-watch loops share: a retry backoff, a sleep
// that a stop ends at once, and query escaping for continue tokens.
#ifndef GPUSCHED_API_KUBE_SYNC_UTIL_H_
#define GPUSCHED_API_KUBE_SYNC_UTIL_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {

// Doubles from `initial` to `max`; no jitter, so behaviour is reproducible.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max)
      : initial_(initial), max_(max), next_(initial) {}
  std::chrono::milliseconds Next() {
    std::chrono::milliseconds now = next_;
    next_ = std::min(next_ * 2, max_);
    return now;
  }
  void Reset() { next_ = initial_; }

 private:
  const std::chrono::milliseconds initial_, max_;
  std::chrono::milliseconds next_;
};

// False when `stop` was requested (at once, not after the full wait).
bool SleepFor(std::chrono::milliseconds duration, std::stop_token stop);

// A continue token is opaque base64; it must be escaped in a query.
std::string PercentEncode(std::string_view text);

// GETs `path` page by page (limit/continue), handing each page's body to
// `on_page`, and returns the list's resourceVersion (watch from there).
// Stops at the first error, its own or on_page's.
absl::StatusOr<std::string> ListEveryPage(
    KubeClient& client, std::string_view path, int page_size,
    std::stop_token stop,
    const std::function<absl::Status(const std::string& body)>& on_page);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_SYNC_UTIL_H_
