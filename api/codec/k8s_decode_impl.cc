#include "api/codec/k8s_decode_impl.h"

#include <charconv>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace gpusched::codec_internal {
namespace {

// Keys such as "cpu" or "gpu-ids" print as ".cpu"; anything else (dots,
// slashes) is quoted so the path stays unambiguous: ["nvidia.com/gpu"].
bool IsPlainKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

void AppendSegment(const PathSegment& at, std::string* out) {
  using Kind = PathSegment::Kind;
  if (at.parent != nullptr) AppendSegment(*at.parent, out);
  const bool after_context =
      at.parent == nullptr || at.parent->kind == Kind::kContext;
  switch (at.kind) {
    case Kind::kRoot:
      out->append(at.text.data(), at.text.size());
      return;
    case Kind::kContext:
      if (!at.text.empty()) absl::StrAppend(out, ToAbsl(at.text), ": ");
      return;
    case Kind::kField:
      if (!out->empty() && !after_context) out->push_back('.');
      out->append(at.text.data(), at.text.size());
      return;
    case Kind::kIndex:
      absl::StrAppend(out, "[", at.index, "]");
      return;
    case Kind::kKey:
      if (IsPlainKey(at.text)) {
        if (!out->empty() && !after_context) out->push_back('.');
        out->append(at.text.data(), at.text.size());
      } else {
        absl::StrAppend(out, "[\"", absl::CEscape(ToAbsl(at.text)), "\"]");
      }
      return;
  }
}

int Digits(std::string_view text, size_t pos, size_t count) {
  int value = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// The form the API server always writes, "2025-01-01T00:00:00Z", without
// going through the general (and much slower) format parser.
std::optional<int64_t> ParseCanonicalUtc(std::string_view text) {
  if (text.size() != 20 || text[4] != '-' || text[7] != '-' ||
      text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      text[19] != 'Z') {
    return std::nullopt;
  }
  const int year = Digits(text, 0, 4), month = Digits(text, 5, 2),
            day = Digits(text, 8, 2), hour = Digits(text, 11, 2),
            minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  const absl::CivilSecond civil(year, month, day, hour, minute, second);
  // CivilSecond normalizes out-of-range fields (Feb 30 -> Mar 2); a changed
  // field means the text was not a real time, so let the full parser decide.
  if (year < 0 || civil.year() != year || civil.month() != month ||
      civil.day() != day || civil.hour() != hour || civil.minute() != minute ||
      civil.second() != second) {
    return std::nullopt;
  }
  return absl::ToUnixSeconds(absl::FromCivil(civil, absl::UTCTimeZone()));
}

}  // namespace

std::string RenderPath(const PathSegment& at) {
  std::string out;
  AppendSegment(at, &out);
  // A context with nothing after it ("document 2: ") reads better bare.
  if (out.size() >= 2 && out.ends_with(": ")) out.resize(out.size() - 2);
  return out;
}

absl::Status FieldError(int line, const PathSegment& at,
                        std::string_view message) {
  std::string text;
  if (line > 0) absl::StrAppend(&text, "line ", line, ": ");
  const std::string path = RenderPath(at);
  if (!path.empty()) absl::StrAppend(&text, path, ": ");
  absl::StrAppend(&text, ToAbsl(message));
  return absl::InvalidArgumentError(text);
}

std::string_view KindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNull:
      return "null";
    case ValueKind::kObject:
      return "object";
    case ValueKind::kArray:
      return "array";
    case ValueKind::kString:
      return "string";
    case ValueKind::kNumber:
      return "number";
    case ValueKind::kBool:
      return "boolean";
  }
  return "unknown";
}

std::string QuantityErrorMessage(std::string_view text,
                                 const absl::Status& status) {
  const absl::string_view why = status.message();
  if (absl::StartsWith(why, "invalid quantity")) return std::string(why);
  return absl::StrCat("invalid quantity \"", ToAbsl(text), "\": ", why);
}

absl::StatusOr<int64_t> ParseRfc3339Seconds(std::string_view text) {
  if (std::optional<int64_t> fast = ParseCanonicalUtc(text)) return *fast;
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, ToAbsl(text), &time, &error) ||
      time == absl::InfiniteFuture() || time == absl::InfinitePast()) {
    if (error.empty()) error = "not a finite time";
    return absl::InvalidArgumentError(
        absl::StrCat("invalid RFC 3339 time \"", ToAbsl(text), "\": ", error));
  }
  return absl::ToUnixSeconds(time);
}

void JoinPodClaimStatuses(std::vector<PodClaimRef>& statuses,
                          std::vector<PodClaimRef>* claims) {
  // By name through a map: a hostile pod may list thousands of each.
  std::unordered_map<std::string_view, PodClaimRef*> by_name;
  by_name.reserve(claims->size());
  for (PodClaimRef& claim : *claims) by_name.emplace(claim.name, &claim);
  for (PodClaimRef& status : statuses) {
    auto it = by_name.find(status.name);
    if (it == by_name.end()) continue;
    it->second->status_claim_name = std::move(status.status_claim_name);
  }
}

std::string_view FormatInt64(int64_t value, NumberBuffer* buffer) {
  auto [end, ec] =
      std::to_chars(buffer->data(), buffer->data() + buffer->size(), value);
  return std::string_view(buffer->data(), end - buffer->data());
}

std::string_view FormatUint64(uint64_t value, NumberBuffer* buffer) {
  auto [end, ec] =
      std::to_chars(buffer->data(), buffer->data() + buffer->size(), value);
  return std::string_view(buffer->data(), end - buffer->data());
}

std::string_view FormatDouble(double value, NumberBuffer* buffer) {
  auto [end, ec] =
      std::to_chars(buffer->data(), buffer->data() + buffer->size(), value);
  return std::string_view(buffer->data(), end - buffer->data());
}

}  // namespace gpusched::codec_internal
