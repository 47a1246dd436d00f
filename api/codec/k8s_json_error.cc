// Locating JSON syntax errors. simdjson reports only an error code, so on
// that (rare) path the text is re-scanned with nlohmann::json's SAX parser,
// which stops at the first error with its position and builds nothing.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "api/codec/json_syntax_error.h"
#include "api/codec/k8s_json_adapter.h"
#include "nlohmann/json.hpp"

namespace gpusched::codec_internal {
namespace {

using Json = nlohmann::json;

// Accepts every event and records the first error; returning false from
// parse_error stops the scan without throwing.
class ErrorLocator final : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) override {
    position_ = position;
    reason_ = Reason(error.what());
    return false;
  }

  std::size_t position() const { return position_; }
  const std::string& reason() const { return reason_; }

 private:
  // "[json.exception.parse_error.101] parse error at line 1, column 6:
  // syntax error while parsing value - invalid literal; last read: '...'"
  // -> "syntax error while parsing value - invalid literal". The position
  // is reported separately and "last read" may hold invalid UTF-8.
  static std::string Reason(std::string_view what) {
    if (size_t colon = what.find("column "); colon != what.npos) {
      colon = what.find(": ", colon);
      if (colon != what.npos) what.remove_prefix(colon + 2);
    }
    what = what.substr(0, what.find("; last read"));
    return std::string(what);
  }

  std::size_t position_ = 0;
  std::string reason_;
};

}  // namespace

std::optional<JsonSyntaxError> LocateJsonSyntaxError(std::string_view text) {
  ErrorLocator locator;
  const bool accepted = Json::sax_parse(text.begin(), text.end(), &locator);
  if (accepted || locator.position() == 0) return std::nullopt;
  // nlohmann counts the offending byte 1-based; report a 0-based offset.
  const size_t offset = std::min(locator.position() - 1, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line_start = before.rfind('\n');
  return JsonSyntaxError{
      .offset = offset,
      .line =
          static_cast<size_t>(std::count(before.begin(), before.end(), '\n')) +
          1,
      .column = offset - (line_start == before.npos ? 0 : line_start + 1) + 1,
      .reason = locator.reason()};
}

absl::Status MalformedJsonError(std::string_view text,
                                simdjson::error_code code) {
  std::optional<JsonSyntaxError> error = LocateJsonSyntaxError(text);
  if (!error.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: ", simdjson::error_message(code)));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "malformed JSON at byte ", error->offset, " (line ", error->line,
      ", column ", error->column, "): ", error->reason));
}

}  // namespace gpusched::codec_internal
