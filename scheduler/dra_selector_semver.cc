#include "scheduler/dra_selector_semver.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

bool IsVersionDigit(char c) { return c >= '0' && c <= '9'; }

// Empty text counts as all digits (and then fails as a number).
bool AllDigits(std::string_view text) {
  return std::all_of(text.begin(), text.end(), IsVersionDigit);
}

bool IdentifierChars(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return IsVersionDigit(c) || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '-';
  });
}

absl::Status Invalid(std::string_view why, std::string_view part) {
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(why), " \"", Sv(part), "\""));
}

// MAJOR, MINOR or PATCH.
absl::StatusOr<uint64_t> Number(std::string_view part, std::string_view which) {
  if (!AllDigits(part)) {
    return Invalid(
        absl::StrCat("Invalid character(s) found in ", Sv(which), " number"),
        part);
  }
  if (part.size() > 1 && part[0] == '0') {
    return Invalid(
        absl::StrCat(Sv(which), " number must not contain leading zeroes"),
        part);
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(Sv(part), &value)) {
    return Invalid(absl::StrCat(Sv(which), " number is not a 64-bit number"),
                   part);
  }
  return value;
}

// The dot-separated identifiers of a pre-release (or of build metadata).
absl::Status CheckIdentifiers(std::string_view list, bool prerelease) {
  size_t start = 0;
  while (true) {
    const size_t dot = std::min(list.find('.', start), list.size());
    std::string_view id = list.substr(start, dot - start);
    if (id.empty()) {
      return absl::InvalidArgumentError(
          prerelease ? "Prerelease is empty" : "Build meta data is empty");
    }
    uint64_t unused = 0;
    if (prerelease && AllDigits(id) &&
        ((id.size() > 1 && id[0] == '0') ||
         !absl::SimpleAtoi(Sv(id), &unused))) {
      return Invalid(
          "Numeric PreRelease version must be a 64-bit number "
          "without leading zeroes",
          id);
    }
    if (!IdentifierChars(id)) {
      return Invalid(prerelease ? "Invalid character(s) found in prerelease"
                                : "Invalid character(s) found in build meta "
                                  "data",
                     id);
    }
    if (dot == list.size()) return absl::OkStatus();
    start = dot + 1;
  }
}

int Sign(uint64_t a, uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

// Numeric identifiers have no leading zeros: the longer is the larger.
int CompareIdentifier(std::string_view a, std::string_view b) {
  const bool a_numeric = AllDigits(a);
  const bool b_numeric = AllDigits(b);
  if (a_numeric != b_numeric) return a_numeric ? -1 : 1;
  if (a_numeric && a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  const int order = a.compare(b);
  return order < 0 ? -1 : (order > 0 ? 1 : 0);
}

int ComparePrerelease(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) {
    return a.empty() == b.empty() ? 0 : (a.empty() ? 1 : -1);
  }
  size_t at_a = 0, at_b = 0;
  while (true) {
    const size_t end_a = std::min(a.find('.', at_a), a.size());
    const size_t end_b = std::min(b.find('.', at_b), b.size());
    const int order = CompareIdentifier(a.substr(at_a, end_a - at_a),
                                        b.substr(at_b, end_b - at_b));
    if (order != 0) return order;
    const bool a_done = end_a == a.size();
    const bool b_done = end_b == b.size();
    if (a_done || b_done) return a_done == b_done ? 0 : (a_done ? -1 : 1);
    at_a = end_a + 1;
    at_b = end_b + 1;
  }
}

}  // namespace

absl::StatusOr<Semver> ParseSemver(std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("Version string empty");
  const size_t dot1 = text.find('.');
  const size_t dot2 =
      dot1 == std::string_view::npos ? dot1 : text.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) {
    return absl::InvalidArgumentError("No Major.Minor.Patch elements found");
  }
  Semver out;
  absl::StatusOr<uint64_t> major = Number(text.substr(0, dot1), "Major");
  if (!major.ok()) return major.status();
  absl::StatusOr<uint64_t> minor =
      Number(text.substr(dot1 + 1, dot2 - dot1 - 1), "Minor");
  if (!minor.ok()) return minor.status();
  // PATCH[-PRERELEASE][+BUILD]: the build starts at the first '+', the
  // pre-release at the first '-' before it.
  std::string_view rest = text.substr(dot2 + 1);
  const size_t plus = rest.find('+');
  std::string_view build;
  if (plus != std::string_view::npos) build = rest.substr(plus + 1);
  rest = rest.substr(0, plus);
  const size_t dash = rest.find('-');
  if (dash != std::string_view::npos) out.prerelease = rest.substr(dash + 1);
  absl::StatusOr<uint64_t> patch = Number(rest.substr(0, dash), "Patch");
  if (!patch.ok()) return patch.status();
  if (dash != std::string_view::npos) {
    if (absl::Status s = CheckIdentifiers(out.prerelease, true); !s.ok()) {
      return s;
    }
  }
  if (plus != std::string_view::npos) {
    if (absl::Status s = CheckIdentifiers(build, false); !s.ok()) return s;
  }
  out.major = *major;
  out.minor = *minor;
  out.patch = *patch;
  return out;
}

int CompareSemver(const Semver& a, const Semver& b) {
  if (a.major != b.major) return Sign(a.major, b.major);
  if (a.minor != b.minor) return Sign(a.minor, b.minor);
  if (a.patch != b.patch) return Sign(a.patch, b.patch);
  return ComparePrerelease(a.prerelease, b.prerelease);
}

}  // namespace gpusched
