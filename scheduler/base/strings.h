#ifndef GPUSCHED_SCHEDULER_BASE_STRINGS_H_
#define GPUSCHED_SCHEDULER_BASE_STRINGS_H_

// The bottom of the stack (scheduler/base): string helpers every layer may
// include; nothing here knows the domain.
//
// Debian 12's abseil is built with its own absl::string_view (not an alias of
// std::string_view), so absl::StrCat and absl hash maps do not take
// std::string_view directly. These adapters bridge the two.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpusched {

inline absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

// A status message as std::string_view (spdlog and our codecs take those).
inline std::string_view Message(const absl::Status& status) {
  return {status.message().data(), status.message().size()};
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

struct StringEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept {
    return a == b;
  }
};

// A hash map keyed by std::string that std::string_view can look up.
template <typename V>
using StringKeyMap = absl::flat_hash_map<std::string, V, StringHash, StringEq>;

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_BASE_STRINGS_H_
