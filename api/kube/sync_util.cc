#include "api/kube/sync_util.h"

#include <cctype>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "absl/strings/str_format.h"

namespace gpusched::kube {

bool SleepFor(std::chrono::milliseconds duration, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += absl::StrFormat("%%%02X", c);
    }
  }
  return out;
}

absl::StatusOr<std::string> ListEveryPage(
    KubeClient& client, std::string_view path, int page_size,
    std::stop_token stop,
    const std::function<absl::Status(const std::string& body)>& on_page) {
  std::string continue_token;
  std::string version;
  do {
    // A path may carry its own query (a labelSelector).
    std::string target = absl::StrFormat(
        "%s%climit=%d", path,
        path.find('?') == std::string_view::npos ? '?' : '&', page_size);
    if (!continue_token.empty()) {
      target += "&continue=" + PercentEncode(continue_token);
    }
    absl::StatusOr<ListResult> page = client.List(target, {.stop = stop});
    if (!page.ok()) return page.status();
    if (absl::Status s = on_page(page->body); !s.ok()) return s;
    version = std::move(page->resource_version);
    continue_token = std::move(page->continue_token);
  } while (!continue_token.empty());
  return version;
}

}  // namespace gpusched::kube
