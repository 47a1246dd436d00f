// Shared by the libFuzzer targets (tests/fuzz/*_fuzz.cc): how an input picks
// one of a target's variants.
#ifndef GPUSCHED_TESTS_FUZZ_FUZZ_UTIL_H_
#define GPUSCHED_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpusched::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input's first byte picks a variant and the rest is the reader's text.
// A byte among `letters` picks by position, so the seed files stay readable
// ("f{...}" is a filter request); any other byte picks by its value, so
// every input exercises some variant.
struct Picked {
  size_t variant = 0;
  std::string_view text;
};
inline Picked Pick(const uint8_t* data, size_t size, std::string_view letters) {
  // Keep the pointer even when empty: production views come from strings
  // and are never null, and simdjson's memcpy of a null view is UB.
  if (size == 0) return {0, Text(data, 0)};
  const char first = static_cast<char>(data[0]);
  const size_t at = letters.find(first);
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  return {at != std::string_view::npos ? at : data[0] % letters.size(), rest};
}

}  // namespace gpusched::fuzz

#endif  // GPUSCHED_TESTS_FUZZ_FUZZ_UTIL_H_
