#ifndef GPUSCHED_API_CODEC_JSON_SYNTAX_ERROR_H_
#define GPUSCHED_API_CODEC_JSON_SYNTAX_ERROR_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched::codec_internal {

// The first syntax error in a JSON text: where (0-based byte offset, 1-based
// line and column) and why.
struct JsonSyntaxError {
  size_t offset = 0;
  size_t line = 1;
  size_t column = 1;
  std::string reason;  // e.g. "syntax error while parsing array - ..."
};

// simdjson reports only an error code, so on that (rare) path the text is
// re-scanned to find the byte. nullopt when the scan accepts the text
// (simdjson is stricter in places: depth, huge numbers).
std::optional<JsonSyntaxError> LocateJsonSyntaxError(std::string_view text);

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_JSON_SYNTAX_ERROR_H_
