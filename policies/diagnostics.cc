#include "policies/diagnostics.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/base/strings.h"

namespace gpusched::policy_internal {

void Diagnostics::Add(const SourceFile& file, int line,
                      std::string_view subject, std::string_view path,
                      std::string_view text) {
  std::string body =
      path.empty() ? absl::StrCat(Sv(subject), ": ", Sv(text))
                   : absl::StrCat(Sv(subject), ": ", Sv(path), ": ", Sv(text));
  AddFileError(file, line, body);
}

void Diagnostics::AddFileError(const SourceFile& file, int line,
                               std::string_view text) {
  const std::string where =
      line > 0 ? absl::StrCat(file.name, ":", line) : file.name;
  entries_.push_back({file.index, PolicyError{.file = file.name,
                                              .line = line,
                                              .message = absl::StrCat(
                                                  where, ": ", Sv(text))}});
}

std::vector<PolicyError> Diagnostics::Sorted() const {
  std::vector<Entry> sorted = entries_;
  auto key = [](const Entry& e) {
    return std::tie(e.file_index, e.error.line, e.error.message);
  };
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
  std::vector<PolicyError> out;
  for (const Entry& e : sorted) {
    if (out.empty() || !(out.back() == e.error)) out.push_back(e.error);
  }
  return out;
}

std::string Quoted(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string InvalidValue(std::string_view value, std::string_view why) {
  return absl::StrCat("Invalid value ", Quoted(value), ": ", Sv(why));
}

std::string InvalidNonScalar(std::string_view why) {
  return absl::StrCat("Invalid value: ", Sv(why));
}

std::string RequiredValue(std::string_view why) {
  if (why.empty()) return "Required value";
  return absl::StrCat("Required value: ", Sv(why));
}

std::string UnsupportedValue(std::string_view value,
                             std::span<const std::string_view> supported) {
  std::vector<std::string> quoted;
  for (std::string_view s : supported) quoted.push_back(Quoted(s));
  return absl::StrCat("Unsupported value ", Quoted(value),
                      ": supported values: ", absl::StrJoin(quoted, ", "));
}

std::string DuplicateValue(std::string_view value, std::string_view why) {
  return absl::StrCat("Duplicate value ", Quoted(value), ": ", Sv(why));
}

std::string NotFound(std::string_view value, std::string_view why) {
  return absl::StrCat("Not found ", Quoted(value), ": ", Sv(why));
}

std::string UnknownField() { return "Unknown field"; }

std::string UnsupportedField(std::string_view why) {
  return absl::StrCat("Unsupported field: ", Sv(why));
}

std::string Forbidden(std::string_view why) {
  return absl::StrCat("Forbidden: ", Sv(why));
}

}  // namespace gpusched::policy_internal
