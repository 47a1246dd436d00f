// Tables and cell texts as kubectl prints them: upper-case headers, each
// column as wide as its widest cell plus 3 spaces (6 at least), the last
// column unpadded; ages as "5m20s"; quantities as "500m" and "64Gi".
#ifndef GPUSCHED_API_CLI_CLI_TABLES_H_
#define GPUSCHED_API_CLI_CLI_TABLES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers)
      : headers_(std::move(headers)) {}
  // Empty cells print as "<none>", as kubectl prints them.
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  // The headers and rows, each line ending in a newline. `indent` spaces
  // go before each line (tables inside explain's sections).
  std::string Render(int indent = 0) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// "in 12m" for a start at `start` seen at `now` (Unix seconds), "now" for
// one already due, "unknown" without a forecast.
std::string StartText(std::optional<int64_t> start, int64_t now);

// The age of something created at `created`: "45s", "3m20s", "5h12m";
// "<unknown>" when the server did not say.
std::string AgeText(std::optional<int64_t> created, int64_t now);

// An integer of `resource`'s unit as kubectl shows quantities: cpu
// millicores as "500m" or "2", memory and storage bytes as "64Gi" when a
// whole number of a binary unit, anything else (GPUs) as the number.
std::string QuantityText(std::string_view resource, int64_t value);

// A Unix time as RFC 3339 in UTC: "2026-11-28T02:05:00Z".
std::string TimeText(int64_t unix_seconds);

}  // namespace gpusched::cli

#endif  // GPUSCHED_API_CLI_CLI_TABLES_H_
