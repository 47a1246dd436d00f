#include "api/http/message.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpusched::http {

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        // Other control characters are not allowed raw in JSON strings.
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

Response JsonError(int status, std::string_view message) {
  Response response;
  response.status = status;
  response.body = absl::StrCat("{\"error\":\"", JsonEscape(message),
                               "\",\"code\":", status, "}");
  return response;
}

}  // namespace gpusched::http
