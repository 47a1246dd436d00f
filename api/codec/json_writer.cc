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

namespace {
constexpr char kRfc3339Seconds[] = "%Y-%m-%dT%H:%M:%SZ";
}  // namespace

std::string Rfc3339(std::chrono::system_clock::time_point time) {
  return absl::FormatTime(kRfc3339Seconds, absl::FromChrono(time),
                          absl::UTCTimeZone());
}

std::string Rfc3339(int64_t unix_ms) {
  return absl::FormatTime(kRfc3339Seconds, absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

}  // namespace gpusched
