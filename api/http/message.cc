#include "api/http/message.h"

#include "absl/strings/str_cat.h"
#include "api/json/json_escape.h"

namespace gpusched::http {

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  AppendJsonEscaped(out, text);
  return out;
}

Response JsonError(int status, std::string_view message) {
  Response response;
  response.status = status;
  response.body = absl::StrCat("{\"error\":\"", JsonEscape(message),
                               "\",\"code\":", status, "}");
  return response;
}

std::vector<std::string_view> HeaderValues(const Request& request,
                                           std::string_view lowercase_name) {
  std::vector<std::string_view> values;
  for (const auto& [name, value] : request.headers) {
    if (name == lowercase_name) values.push_back(value);
  }
  return values;
}

}  // namespace gpusched::http
