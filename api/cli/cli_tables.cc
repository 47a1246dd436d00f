#include "api/cli/cli_tables.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/codec/visibility_json.h"
#include "scheduler/base/strings.h"
#include "scheduler/quantity.h"

namespace gpusched::cli {
namespace {

// kubectl's tabwriter settings (k8s.io/cli-runtime printers): padding 3,
// minimum width 6.
constexpr size_t kPadding = 3;
constexpr size_t kMinWidth = 6;

void AppendLine(std::string& out, const std::vector<std::string>& cells,
                const std::vector<size_t>& widths, int indent) {
  out.append(indent, ' ');
  for (size_t i = 0; i < cells.size(); ++i) {
    out += cells[i];
    if (i + 1 < cells.size()) out.append(widths[i] - cells[i].size(), ' ');
  }
  out += '\n';
}

}  // namespace

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (std::string& cell : cells) {
    if (cell.empty()) cell = "<none>";
  }
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render(int indent) const {
  std::vector<std::string> headers = headers_;
  for (std::string& header : headers) absl::AsciiStrToUpper(&header);
  std::vector<size_t> widths(headers.size(), kMinWidth);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      widths[i] = std::max(widths[i], cells[i].size() + kPadding);
    }
  };
  widen(headers);
  for (const auto& row : rows_) widen(row);
  std::string out;
  AppendLine(out, headers, widths, indent);
  for (const auto& row : rows_) AppendLine(out, row, widths, indent);
  return out;
}

std::string StartText(std::optional<int64_t> start, int64_t now) {
  if (!start.has_value()) return "unknown";
  if (*start <= now) return "now";
  return absl::StrCat("in ", HumanAge((*start - now) * 1000));
}

std::string AgeText(std::optional<int64_t> created, int64_t now) {
  if (!created.has_value()) return "<unknown>";
  return HumanAge((now - *created) * 1000);
}

std::string QuantityText(std::string_view resource, int64_t value) {
  if (resource == "cpu") return FormatMilli(value);
  if (resource != "memory" && !absl::EndsWith(Sv(resource), "storage")) {
    return absl::StrCat(value);
  }
  constexpr std::array<std::pair<int, std::string_view>, 5> kUnits{
      {{50, "Pi"}, {40, "Ti"}, {30, "Gi"}, {20, "Mi"}, {10, "Ki"}}};
  for (const auto& [shift, suffix] : kUnits) {
    const int64_t unit = int64_t{1} << shift;
    if (value != 0 && value % unit == 0) {
      return absl::StrCat(value / unit, Sv(suffix));
    }
  }
  return absl::StrCat(value);
}

std::string TimeText(int64_t unix_seconds) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                          absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

}  // namespace gpusched::cli
