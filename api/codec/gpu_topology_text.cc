// The `nvidia-smi topo -m` text form of the gpusched.io/gpu-topology
// annotation (gpu_topology_annotation.h), in steps:
//   1. Split into lines and whitespace-separated tokens (with positions),
//      dropping blank lines and everything from "Legend:" on.
//   2. Read the header: GPU columns, other device columns, affinity labels.
//   3. Read each GPU row into the matrix; skip rows of other devices.
//   4. Check every GPU has a row, then the matrix itself.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/codec/gpu_topology_annotation.h"
#include "scheduler/base/strings.h"
#include "scheduler/gpu_topology.h"

namespace gpusched {
namespace {

using gpu_topology_internal::ErrorAt;
using gpu_topology_internal::TextPos;
using gpu_topology_internal::UnknownLinkAt;

struct Token {
  std::string_view text;
  TextPos pos;
};

struct Line {
  std::vector<Token> tokens;  // never empty
  TextPos end;                // just past the last byte, for "missing" errors
};

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// nvidia-smi underlines the header on a terminal ("ESC[4m"); a pasted
// capture may keep those sequences. Returns the index just past one.
size_t SkipEscape(std::string_view line, size_t i) {
  ++i;  // ESC
  if (i < line.size() && line[i] == '[') {
    ++i;
    while (i < line.size() && !(line[i] >= 0x40 && line[i] <= 0x7e)) ++i;
  }
  return std::min(i + 1, line.size());
}

std::vector<Token> Tokenize(std::string_view line, int line_number) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == '\x1b') {
      i = SkipEscape(line, i);
    } else if (IsBlank(line[i])) {
      ++i;
    } else {
      const size_t start = i;
      while (i < line.size() && !IsBlank(line[i]) && line[i] != '\x1b') ++i;
      tokens.push_back({line.substr(start, i - start),
                        TextPos{.line = line_number,
                                .column = static_cast<int>(start) + 1}});
    }
  }
  return tokens;
}

// Step 1.
std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  for (size_t begin = 0; begin <= text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++number;
    std::vector<Token> tokens = Tokenize(line, number);
    if (tokens.empty()) continue;
    if (tokens[0].text.starts_with("Legend")) break;
    lines.push_back(
        {std::move(tokens),
         TextPos{.line = number, .column = static_cast<int>(line.size()) + 1}});
  }
  return lines;
}

// "GPU7" -> 7; nullopt for anything else (including a bare "GPU").
std::optional<int> GpuIndex(std::string_view name) {
  if (!name.starts_with("GPU") || name.size() > 7) return std::nullopt;
  return gpu_topology_internal::ParseDigits(name.substr(3));
}

// The labels after the device columns, in header order.
enum class Trailer { kCpuAffinity, kNumaAffinity, kGpuNumaId };

struct Header {
  std::vector<Token> devices;  // GPU0..GPUn-1, then NICs etc.
  int gpu_count = 0;
  std::vector<Trailer> trailers;
};

bool StartsTrailers(std::string_view text) {
  return text == "CPU" || text == "NUMA" || text == "GPU";
}

// True when tokens[*i] (and maybe the next) spell `words`; advances *i.
// The last word is optional when `last_optional`.
bool ConsumeWords(const std::vector<Token>& tokens, size_t* i,
                  const std::vector<std::string_view>& words,
                  bool last_optional) {
  size_t k = *i;
  for (size_t w = 0; w < words.size(); ++w, ++k) {
    const bool present = k < tokens.size() && tokens[k].text == words[w];
    if (present) continue;
    if (last_optional && w + 1 == words.size() && w > 0) break;
    return false;
  }
  *i = k;
  return true;
}

absl::Status ParseTrailers(const std::vector<Token>& tokens, size_t i,
                           Header* header) {
  while (i < tokens.size()) {
    if (ConsumeWords(tokens, &i, {"CPU", "Affinity"}, true)) {
      header->trailers.push_back(Trailer::kCpuAffinity);
    } else if (ConsumeWords(tokens, &i, {"NUMA", "Affinity"}, true)) {
      header->trailers.push_back(Trailer::kNumaAffinity);
    } else if (ConsumeWords(tokens, &i, {"GPU", "NUMA", "ID"}, false)) {
      header->trailers.push_back(Trailer::kGpuNumaId);
    } else {
      return ErrorAt(
          tokens[i].pos,
          absl::StrCat("unexpected header column \"", Sv(tokens[i].text),
                       "\" (expected CPU Affinity, NUMA Affinity "
                       "or GPU NUMA ID)"));
    }
  }
  return absl::OkStatus();
}

// Step 2.
absl::StatusOr<Header> ParseHeader(const Line& line) {
  Header header;
  size_t i = 0;
  for (; i < line.tokens.size() && !StartsTrailers(line.tokens[i].text); ++i) {
    const Token& token = line.tokens[i];
    const std::optional<int> gpu = GpuIndex(token.text);
    const bool others_started =
        header.devices.size() > static_cast<size_t>(header.gpu_count);
    if (gpu.has_value() && (others_started || *gpu != header.gpu_count)) {
      return ErrorAt(
          token.pos,
          absl::StrCat("expected header column ",
                       others_started ? "for a non-GPU device"
                                      : absl::StrCat("GPU", header.gpu_count),
                       ", found \"", Sv(token.text),
                       "\" (GPU columns come first, in order)"));
    }
    if (gpu.has_value()) ++header.gpu_count;
    header.devices.push_back(token);
  }
  if (header.gpu_count == 0) {
    return ErrorAt(line.tokens[0].pos,
                   absl::StrCat("header names no GPU columns (expected GPU0 "
                                "first, found \"",
                                Sv(line.tokens[0].text), "\")"));
  }
  if (absl::Status s = ParseTrailers(line.tokens, i, &header); !s.ok()) {
    return s;
  }
  return header;
}

struct RowCells {
  std::vector<GpuLink> links;  // the GPU columns only
  std::vector<TextPos> where;
  int numa = -1;
};

bool IsAffinityValue(std::string_view text) {
  return text == "N/A" || absl::ascii_isdigit(text[0]);
}

// "0" -> 0; "N/A", "0-1" (several nodes) and the like -> unknown.
int ParseNuma(std::string_view text) {
  return gpu_topology_internal::ParseDigits(text).value_or(-1);
}

absl::Status CheckCellCount(const Header& header, const Line& line,
                            size_t first_value) {
  const size_t cells = first_value - 1;
  const size_t expected = header.devices.size();
  if (cells == expected) return absl::OkStatus();
  const TextPos pos = cells > expected ? line.tokens[1 + expected].pos
                      : first_value < line.tokens.size()
                          ? line.tokens[first_value].pos
                          : line.end;
  return ErrorAt(pos, absl::StrCat("row ", Sv(line.tokens[0].text), " has ",
                                   cells, " link cells, expected ", expected,
                                   " (one per device column of the header)"));
}

absl::Status ReadAffinities(const Header& header, const Line& line,
                            size_t first_value, RowCells* row) {
  for (size_t k = first_value; k < line.tokens.size(); ++k) {
    const size_t label = k - first_value;
    if (label >= header.trailers.size()) {
      return ErrorAt(line.tokens[k].pos,
                     absl::StrCat("unexpected cell \"", Sv(line.tokens[k].text),
                                  "\" after the affinity columns"));
    }
    if (header.trailers[label] == Trailer::kNumaAffinity) {
      row->numa = ParseNuma(line.tokens[k].text);
    }
  }
  return absl::OkStatus();
}

// Step 3, one GPU row.
absl::StatusOr<RowCells> ParseGpuRow(const Header& header, const Line& line) {
  size_t first_value = 1;
  while (first_value < line.tokens.size() &&
         !IsAffinityValue(line.tokens[first_value].text)) {
    ++first_value;
  }
  if (absl::Status s = CheckCellCount(header, line, first_value); !s.ok()) {
    return s;
  }
  RowCells row;
  for (size_t col = 0; col < header.devices.size(); ++col) {
    const Token& cell = line.tokens[1 + col];
    const std::optional<GpuLink> link = ParseLinkName(cell.text);
    if (!link.has_value()) return UnknownLinkAt(cell.pos, cell.text);
    if (col >= static_cast<size_t>(header.gpu_count)) continue;  // a NIC
    row.links.push_back(*link);
    row.where.push_back(cell.pos);
  }
  if (absl::Status s = ReadAffinities(header, line, first_value, &row);
      !s.ok()) {
    return s;
  }
  return row;
}

bool IsOtherDevice(const Header& header, std::string_view name) {
  return std::any_of(header.devices.begin() + header.gpu_count,
                     header.devices.end(),
                     [&](const Token& t) { return t.text == name; });
}

// Which GPU a body line describes: its index, -1 for another device's row
// (ignored), or an error for anything else.
absl::StatusOr<int> RowGpu(const Header& header, const Token& label,
                           const std::vector<bool>& seen) {
  const std::optional<int> gpu = GpuIndex(label.text);
  if (!gpu.has_value()) {
    if (IsOtherDevice(header, label.text)) return -1;
    return ErrorAt(label.pos,
                   absl::StrCat("unexpected row \"", Sv(label.text),
                                "\" (expected GPU0..GPU", header.gpu_count - 1,
                                " or a device named in the header)"));
  }
  if (*gpu >= header.gpu_count) {
    return ErrorAt(label.pos, absl::StrCat("row ", Sv(label.text),
                                           " has no column in the header (",
                                           header.gpu_count, " GPUs)"));
  }
  if (seen[*gpu]) {
    return ErrorAt(label.pos, absl::StrCat("duplicate row ", Sv(label.text)));
  }
  return *gpu;
}

// Step 4a.
absl::Status CheckAllRowsSeen(const Header& header,
                              const std::vector<bool>& seen) {
  const int rows = static_cast<int>(std::count(seen.begin(), seen.end(), true));
  for (int g = 0; g < header.gpu_count; ++g) {
    if (seen[g]) continue;
    return ErrorAt(header.devices[g].pos,
                   absl::StrCat("no row for GPU", g, " (row count mismatch: ",
                                "header names ", header.gpu_count,
                                " GPUs, found ", rows, " GPU rows)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GpuTopology> ParseNvidiaSmiTopology(std::string_view text) {
  const std::vector<Line> lines = SplitLines(text);
  if (lines.empty()) return ErrorAt(TextPos{}, "empty input");
  absl::StatusOr<Header> header = ParseHeader(lines[0]);
  if (!header.ok()) return header.status();
  const int n = header->gpu_count;
  std::vector<std::vector<GpuLink>> links(n);
  std::vector<std::vector<TextPos>> where(n);
  std::vector<int> numa(n, -1);
  std::vector<bool> seen(n, false);
  for (size_t l = 1; l < lines.size(); ++l) {
    absl::StatusOr<int> gpu = RowGpu(*header, lines[l].tokens[0], seen);
    if (!gpu.ok()) return gpu.status();
    if (*gpu < 0) continue;
    absl::StatusOr<RowCells> row = ParseGpuRow(*header, lines[l]);
    if (!row.ok()) return row.status();
    seen[*gpu] = true;
    links[*gpu] = std::move(row->links);
    where[*gpu] = std::move(row->where);
    numa[*gpu] = row->numa;
  }
  if (absl::Status s = CheckAllRowsSeen(*header, seen); !s.ok()) return s;
  if (absl::Status s = gpu_topology_internal::ValidateLinkMatrix(links, where);
      !s.ok()) {
    return s;
  }
  return GpuTopology::FromMatrix(std::move(links), std::move(numa));
}

}  // namespace gpusched
