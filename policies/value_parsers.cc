#include "policies/value_parsers.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "scheduler/resource_list.h"

namespace gpusched::policy_internal {
namespace {

using Int128 = __int128;

constexpr int64_t kNanosPerMs = 1'000'000;
constexpr char kDurationHint[] =
    "must be a duration such as 300s, 5m, 1h30m or 250ms";

absl::Status BadDuration(std::string_view detail) {
  return absl::InvalidArgumentError(
      absl::StrCat(kDurationHint, " (", Sv(detail), ")"));
}

// Nanoseconds per unit, longest spelling first so that "ms" wins over "m".
int64_t UnitNanos(std::string_view text, size_t* length) {
  static constexpr struct {
    std::string_view name;
    int64_t nanos;
  } kUnits[] = {
      {"ns", 1},
      {"us", 1'000},
      {"\xC2\xB5s", 1'000},  // U+00B5 micro sign, as Go accepts
      {"\xCE\xBCs", 1'000},  // U+03BC Greek mu
      {"ms", kNanosPerMs},
      {"s", 1'000 * kNanosPerMs},
      {"m", 60'000 * kNanosPerMs},
      {"h", 3'600'000 * kNanosPerMs},
  };
  for (const auto& unit : kUnits) {
    if (text.starts_with(unit.name)) {
      *length = unit.name.size();
      return unit.nanos;
    }
  }
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parses "<digits>[.<digits>]<unit>" at the front of `text` into
// nanoseconds added to `total`; advances `text`.
absl::Status ParseDurationTerm(std::string_view& text, Int128& total) {
  Int128 whole = 0;
  Int128 fraction = 0;
  Int128 fraction_scale = 1;
  size_t pos = 0;
  for (; pos < text.size() && IsDigit(text[pos]); ++pos) {
    whole = whole * 10 + (text[pos] - '0');
    if (whole > INT64_MAX) return BadDuration("too large");
  }
  const bool has_whole = pos > 0;
  if (pos < text.size() && text[pos] == '.') {
    for (++pos; pos < text.size() && IsDigit(text[pos]); ++pos) {
      // Digits past nanosecond precision cannot matter; Go drops them too.
      if (fraction_scale > 1'000'000'000'000'000) continue;
      fraction = fraction * 10 + (text[pos] - '0');
      fraction_scale *= 10;
    }
    if (!has_whole && fraction_scale == 1) return BadDuration("no digits");
  } else if (!has_whole) {
    return BadDuration("expected a number");
  }
  size_t unit_length = 0;
  const int64_t unit = UnitNanos(text.substr(pos), &unit_length);
  if (unit == 0) {
    return BadDuration(pos == text.size() ? "missing unit" : "unknown unit");
  }
  total += whole * unit + fraction * unit / fraction_scale;
  if (total > INT64_MAX) return BadDuration("too large");
  text.remove_prefix(pos + unit_length);
  return absl::OkStatus();
}

// apimachinery's wording for the shared character rules.
std::string AlnumRule(std::string_view what, std::string_view extra) {
  return absl::StrCat("must consist of ", Sv(what), "alphanumeric characters",
                      Sv(extra),
                      ", and must start and end with an alphanumeric "
                      "character");
}

bool IsLowerAlnum(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// One dot-free DNS label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDnsLabel(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// The name part of a qualified name or a label value:
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool IsQualifiedPart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// The text after `invalid quantity "...": ` in ParseQuantity's messages.
std::string_view QuantityDetail(const absl::Status& status) {
  std::string_view message = Message(status);
  const size_t cut = message.find("\": ");
  return cut == std::string_view::npos ? message : message.substr(cut + 3);
}

absl::StatusOr<int64_t> ParseNonNegativeQuantity(std::string_view name,
                                                 std::string_view text) {
  if (text.starts_with("-")) {
    return absl::InvalidArgumentError("must be non-negative");
  }
  absl::StatusOr<int64_t> amount = ResourceList::ParseAmount(name, text);
  if (!amount.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be a Kubernetes quantity such as 8, 500m or 64Gi (",
                     Sv(QuantityDetail(amount.status())), ")"));
  }
  return amount;
}

}  // namespace

absl::StatusOr<int64_t> ParseDurationMs(std::string_view text) {
  if (text.starts_with("-")) {
    return absl::InvalidArgumentError("must be non-negative");
  }
  if (text.starts_with("+")) text.remove_prefix(1);
  if (text == "0") return 0;
  if (text.empty()) return BadDuration("empty");
  Int128 total = 0;
  while (!text.empty()) {
    absl::Status status = ParseDurationTerm(text, total);
    if (!status.ok()) return status;
  }
  if (total % kNanosPerMs != 0) {
    return absl::InvalidArgumentError("must be a whole number of milliseconds");
  }
  return static_cast<int64_t>(total / kNanosPerMs);
}

std::string FormatDurationMs(int64_t ms) {
  if (ms == 0) return "0s";
  if (ms < 1000) return absl::StrCat(ms, "ms");
  std::string out;
  if (ms >= 3'600'000) absl::StrAppend(&out, ms / 3'600'000, "h");
  if (ms % 3'600'000 >= 60'000)
    absl::StrAppend(&out, ms % 3'600'000 / 60'000, "m");
  const int64_t seconds_ms = ms % 60'000;
  if (seconds_ms == 0) return out;
  absl::StrAppend(&out, seconds_ms / 1000);
  if (seconds_ms % 1000 != 0) {
    std::string fraction = absl::StrCat(1000 + seconds_ms % 1000).substr(1);
    while (fraction.back() == '0') fraction.pop_back();
    absl::StrAppend(&out, ".", fraction);
  }
  absl::StrAppend(&out, "s");
  return out;
}

absl::StatusOr<int64_t> ParseQuota(std::string_view name,
                                   std::string_view text) {
  // Quotas are summed up the cohort tree and across thousands of queues in
  // int64; capping each one at 2^52 base units keeps every sum exact.
  constexpr int64_t kMaxQuota = int64_t{1} << 52;
  absl::StatusOr<int64_t> amount = ParseNonNegativeQuantity(name, text);
  if (amount.ok() && *amount > kMaxQuota) {
    return absl::InvalidArgumentError(absl::StrCat(
        "must be at most ", ResourceList::FormatAmount(name, kMaxQuota),
        " (larger quotas could overflow when summed)"));
  }
  return amount;
}

absl::StatusOr<int64_t> ParseWeightMilli(std::string_view text) {
  // cpu's unit convention is exactly "thousandths of the written value".
  return ParseNonNegativeQuantity(kCpu, text);
}

std::string DnsSubdomainError(std::string_view value) {
  if (value.size() > 253) return "must be no more than 253 characters";
  bool ok = !value.empty();
  for (size_t start = 0; ok && start <= value.size();) {
    size_t dot = value.find('.', start);
    if (dot == std::string_view::npos) dot = value.size();
    ok = IsDnsLabel(value.substr(start, dot - start));
    start = dot + 1;
  }
  if (ok) return "";
  return absl::StrCat("a lowercase RFC 1123 subdomain ",
                      AlnumRule("lower case ", ", '-' or '.'"),
                      " (e.g. 'team-a')");
}

std::string DnsLabelError(std::string_view value) {
  if (value.size() > 63) return "must be no more than 63 characters";
  if (IsDnsLabel(value)) return "";
  return absl::StrCat("a lowercase RFC 1123 label ",
                      AlnumRule("lower case ", " or '-'"), " (e.g. 'team-a')");
}

std::string QualifiedNameError(std::string_view value) {
  std::string_view name = value;
  const size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view prefix = value.substr(0, slash);
    if (prefix.empty() || !DnsSubdomainError(prefix).empty()) {
      return "prefix part must be a lowercase RFC 1123 subdomain (e.g. "
             "'nvidia.com')";
    }
    name = value.substr(slash + 1);
  }
  if (name.size() > 63) return "name part must be no more than 63 characters";
  if (IsQualifiedPart(name)) return "";
  return absl::StrCat("name part ", AlnumRule("", ", '-', '_' or '.'"),
                      " (e.g. 'nvidia.com/gpu')");
}

std::string LabelValueError(std::string_view value) {
  if (value.empty()) return "";
  if (value.size() > 63) return "must be no more than 63 characters";
  if (IsQualifiedPart(value)) return "";
  return absl::StrCat("a valid label value ",
                      AlnumRule("", ", '-', '_' or '.'"));
}

}  // namespace gpusched::policy_internal
