#include "api/codec/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "absl/time/time.h"

namespace gpusched {

JsonWriter& JsonWriter::String(std::string_view text) {
  out_ += '"';
  AppendJsonEscaped(out_, text);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out_.append(buffer, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  if (!std::isfinite(value)) return Null();
  char buffer[32];
  int n = std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  out_.append(buffer, n);
  return *this;
}

std::string MetaTime(std::chrono::system_clock::time_point time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromChrono(time),
                          absl::UTCTimeZone());
}

}  // namespace gpusched
