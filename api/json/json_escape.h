// JSON string escaping, the one implementation every writer uses: the codec's
// JsonWriter, the HTTP layer's error bodies and the log formatter. It lives
// in its own small library so that the transport does not depend on the
// codec (or the codec on Beast) to share it.
#ifndef GPUSCHED_API_JSON_JSON_ESCAPE_H_
#define GPUSCHED_API_JSON_JSON_ESCAPE_H_

#include <string>
#include <string_view>

namespace gpusched {

// Appends `text` escaped for a JSON string literal (quotes not included):
// quote, backslash and control characters; UTF-8 passes through unchanged.
void AppendJsonEscaped(std::string& out, std::string_view text);

}  // namespace gpusched

#endif  // GPUSCHED_API_JSON_JSON_ESCAPE_H_
