#ifndef GPUSCHED_API_CODEC_JSON_WRITER_H_
#define GPUSCHED_API_CODEC_JSON_WRITER_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/json/json_escape.h"

namespace gpusched {

// Appends JSON to a string without building a tree: responses are written
// once, front to back, so a writer is all the hot path needs. The caller
// writes separators with Comma(); the writer only escapes and quotes.
class JsonWriter {
 public:
  std::string& out() { return out_; }
  std::string Take() { return std::move(out_); }

  JsonWriter& Raw(std::string_view text) {
    out_.append(text);
    return *this;
  }
  JsonWriter& String(std::string_view text);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value) { return Raw(value ? "true" : "false"); }
  JsonWriter& Null() { return Raw("null"); }
  // "key": — with the quotes and the colon.
  JsonWriter& Key(std::string_view key) { return String(key).Raw(":"); }

 private:
  std::string out_;
};

// RFC 3339 in UTC, to the second, as a metav1.Time: of a time point, or of
// Unix milliseconds.
std::string Rfc3339(std::chrono::system_clock::time_point time);
std::string Rfc3339(int64_t unix_ms);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_JSON_WRITER_H_
