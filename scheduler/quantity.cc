#include "scheduler/quantity.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using Int128 = __int128;

// A quantity as "mantissa * 10^exponent10 * 2^exponent2".
struct Parsed {
  Int128 mantissa = 0;
  int exponent10 = 0;
  int exponent2 = 0;
};

absl::Status Invalid(std::string_view text, size_t pos, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("invalid quantity \"",
                                                 Sv(text), "\": ", Sv(why),
                                                 " at character ", pos + 1));
}

// Applies the suffix at text[pos..] to `parsed`; false if not a suffix.
bool ApplySuffix(std::string_view suffix, Parsed& parsed) {
  static constexpr struct {
    std::string_view name;
    int exponent10;
    int exponent2;
  } kSuffixes[] = {
      {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
      {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
      {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
      {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
  };
  for (const auto& s : kSuffixes) {
    if (s.name == suffix) {
      parsed.exponent10 += s.exponent10;
      parsed.exponent2 += s.exponent2;
      return true;
    }
  }
  return false;
}

// The digits (with at most one '.') from text[pos] into `parsed`; returns
// the index just past them.
absl::StatusOr<size_t> ReadMantissa(std::string_view text, size_t pos,
                                    Parsed& parsed) {
  int digits = 0;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (++digits > 30) return Invalid(text, pos, "too many digits");
    parsed.mantissa = parsed.mantissa * 10 + (c - '0');
    if (seen_point) --parsed.exponent10;
  }
  if (digits == 0) return Invalid(text, pos, "expected a digit");
  return pos;
}

// "1e3" is an exponent; a lone "E" is the exa suffix, "Ei" the exbi one.
bool IsExponent(std::string_view rest) {
  return !rest.empty() && (rest[0] == 'e' || rest[0] == 'E') &&
         rest.size() > 1 && rest != "Ei";
}

// The exponent `rest` (text[pos..], IsExponent) added to parsed.exponent10.
absl::Status ReadExponent(std::string_view text, size_t pos,
                          std::string_view rest, Parsed& parsed) {
  size_t epos = 1;
  bool negative = false;
  if (rest[epos] == '+' || rest[epos] == '-') negative = rest[epos++] == '-';
  int exponent = 0;
  size_t start = epos;
  for (; epos < rest.size() && rest[epos] >= '0' && rest[epos] <= '9'; ++epos) {
    exponent = exponent * 10 + (rest[epos] - '0');
    if (exponent > 40) return Invalid(text, pos + epos, "exponent too large");
  }
  if (epos == start || epos != rest.size()) {
    return Invalid(text, pos + epos, "malformed exponent");
  }
  parsed.exponent10 += negative ? -exponent : exponent;
  return absl::OkStatus();
}

absl::StatusOr<Parsed> ParseNumberAndSuffix(std::string_view text) {
  Parsed parsed;
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '+') ++pos;
  if (pos < text.size() && text[pos] == '-') {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid quantity \"", Sv(text), "\": must be non-negative"));
  }
  absl::StatusOr<size_t> end = ReadMantissa(text, pos, parsed);
  if (!end.ok()) return end.status();
  pos = *end;
  std::string_view rest = text.substr(pos);
  if (IsExponent(rest)) {
    if (absl::Status s = ReadExponent(text, pos, rest, parsed); !s.ok()) {
      return s;
    }
    return parsed;
  }
  if (!ApplySuffix(rest, parsed)) {
    return Invalid(text, pos,
                   absl::StrCat("unknown suffix \"", Sv(rest), "\""));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantity(std::string_view text, int64_t scale) {
  absl::StatusOr<ScaledQuantity> scaled = ParseScaledQuantity(text, scale);
  if (!scaled.ok()) return scaled.status();
  return scaled->value;
}

absl::StatusOr<ScaledQuantity> ParseScaledQuantity(std::string_view text,
                                                   int64_t scale) {
  if (text.empty()) {
    return absl::InvalidArgumentError("invalid quantity \"\": empty");
  }
  absl::StatusOr<Parsed> parsed = ParseNumberAndSuffix(text);
  if (!parsed.ok()) return parsed.status();
  // value = mantissa * scale * 2^e2 * 10^e10, rounded up to an integer.
  constexpr Int128 kLimit = static_cast<Int128>(INT64_MAX);
  Int128 numerator = parsed->mantissa * scale;
  Int128 denominator = 1;
  for (int i = 0; i < parsed->exponent2; ++i) {
    numerator *= 2;
    if (numerator > kLimit * 1000000000) break;
  }
  for (int i = 0; i < parsed->exponent10; ++i) {
    numerator *= 10;
    if (numerator > kLimit * 1000000000) break;
  }
  for (int i = 0; i > parsed->exponent10; --i) {
    // Once the denominator exceeds the numerator the rounded-up result is 1
    // (or 0 for zero) however many more tens follow; stopping here keeps
    // both within Int128.
    if (denominator > numerator) break;
    denominator *= 10;
  }
  Int128 value = (numerator + denominator - 1) / denominator;
  if (value > kLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid quantity \"", Sv(text), "\": too large"));
  }
  // Exact when nothing was rounded up. Had the last loop stopped early, its
  // denominator exceeds a non-zero numerator: a fraction too.
  return ScaledQuantity{.value = static_cast<int64_t>(value),
                        .exact = numerator % denominator == 0};
}

std::string FormatMilli(int64_t milli) {
  if (milli % 1000 == 0) return absl::StrCat(milli / 1000);
  return absl::StrCat(milli, "m");
}

}  // namespace gpusched
