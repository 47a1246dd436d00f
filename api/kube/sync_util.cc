#include "api/kube/sync_util.h"

#include <cctype>
#include <condition_variable>
#include <mutex>

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

}  // namespace gpusched::kube
