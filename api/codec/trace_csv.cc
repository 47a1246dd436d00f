#include "api/codec/trace_csv.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/codec/file_text.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using replay::TraceNode;
using replay::TracePod;

constexpr int kMaxGpusPerTask = 64;

// One data row: its line number and fields, trimmed.
struct CsvRow {
  int line = 0;
  std::vector<absl::string_view> fields;
};

// A CSV text split into the header's column indices and the data rows.
// Fields are plain (the trace quotes nothing); a CR before the newline and
// blank lines are tolerated.
class CsvTable {
 public:
  static absl::StatusOr<CsvTable> Parse(absl::string_view text,
                                        absl::string_view file);

  // The column's index, or nullopt when the header lacks it.
  std::optional<int> Find(absl::string_view column) const;
  // The column's index; an error naming the file when it is missing.
  absl::StatusOr<int> Require(absl::string_view column) const;
  const std::vector<CsvRow>& rows() const { return rows_; }

  // "FILE:LINE: column NAME: " for messages about one value.
  std::string Where(const CsvRow& row, absl::string_view column) const {
    return absl::StrCat(file_, ":", row.line, ": column ", column, ": ");
  }
  absl::StatusOr<int64_t> Int(const CsvRow& row, int index,
                              absl::string_view column, int64_t min,
                              int64_t max) const;

 private:
  std::string file_;
  absl::flat_hash_map<std::string, int> columns_;
  std::vector<CsvRow> rows_;
};

std::vector<absl::string_view> SplitFields(absl::string_view line) {
  std::vector<absl::string_view> fields;
  for (absl::string_view field : absl::StrSplit(line, ',')) {
    fields.push_back(absl::StripAsciiWhitespace(field));
  }
  return fields;
}

absl::StatusOr<CsvTable> CsvTable::Parse(absl::string_view text,
                                         absl::string_view file) {
  CsvTable table;
  table.file_ = std::string(file);
  // Spreadsheet exports start with a UTF-8 byte order mark.
  text = absl::StripPrefix(text, "\xEF\xBB\xBF");
  int line_number = 0;
  bool have_header = false;
  size_t header_size = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripSuffix(line, "\r");
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<absl::string_view> fields = SplitFields(line);
    if (!have_header) {
      for (size_t i = 0; i < fields.size(); ++i) {
        if (!table.columns_.emplace(std::string(fields[i]), i).second) {
          return absl::InvalidArgumentError(
              absl::StrCat(file, ":", line_number, ": column \"", fields[i],
                           "\" appears twice in the header"));
        }
      }
      header_size = fields.size();
      have_header = true;
      continue;
    }
    if (fields.size() != header_size) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", line_number, ": ", fields.size(),
                       " fields, but the header has ", header_size));
    }
    table.rows_.push_back(CsvRow{line_number, std::move(fields)});
  }
  if (!have_header) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": empty; expected a header line"));
  }
  return table;
}

std::optional<int> CsvTable::Find(absl::string_view column) const {
  auto it = columns_.find(column);
  if (it == columns_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<int> CsvTable::Require(absl::string_view column) const {
  if (std::optional<int> index = Find(column)) return *index;
  return absl::InvalidArgumentError(
      absl::StrCat(file_, ":1: the header has no column \"", column, "\""));
}

absl::StatusOr<int64_t> CsvTable::Int(const CsvRow& row, int index,
                                      absl::string_view column, int64_t min,
                                      int64_t max) const {
  const absl::string_view text = row.fields[index];
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(row, column), "\"", text, "\" is not an integer"));
  }
  if (value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        Where(row, column), value, " is out of range (", min, "..", max, ")"));
  }
  return value;
}

absl::StatusOr<absl::string_view> Name(const CsvTable& table, const CsvRow& row,
                                       int index, absl::string_view column) {
  if (row.fields[index].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(table.Where(row, column), "empty"));
  }
  return row.fields[index];
}

// One integer column of a row and where its value goes.
struct IntColumn {
  absl::string_view column;
  int index;
  int64_t min;
  int64_t max;
  int64_t* out;
};

absl::Status ReadInts(const CsvTable& table, const CsvRow& row,
                      std::initializer_list<IntColumn> fields) {
  for (const IntColumn& field : fields) {
    absl::StatusOr<int64_t> value =
        table.Int(row, field.index, field.column, field.min, field.max);
    if (!value.ok()) return value.status();
    *field.out = *value;
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

constexpr int64_t kMaxQuantity = int64_t{1} << 40;

struct NodeColumns {
  int name, cpu, memory, gpus;
  std::optional<int> model;
};

absl::StatusOr<NodeColumns> FindNodeColumns(const CsvTable& table) {
  NodeColumns columns{};
  std::optional<int> name = table.Find("sn");
  if (!name) name = table.Find("name");
  if (!name) {
    absl::StatusOr<int> required = table.Require("sn");
    return required.status();
  }
  columns.name = *name;
  absl::StatusOr<int> cpu = table.Require("cpu_milli");
  absl::StatusOr<int> memory = table.Require("memory_mib");
  absl::StatusOr<int> gpus = table.Require("gpu");
  for (const absl::StatusOr<int>* c : {&cpu, &memory, &gpus}) {
    if (!c->ok()) return c->status();
  }
  columns.cpu = *cpu;
  columns.memory = *memory;
  columns.gpus = *gpus;
  columns.model = table.Find("model");
  return columns;
}

absl::StatusOr<TraceNode> NodeOf(const CsvTable& table, const CsvRow& row,
                                 const NodeColumns& c) {
  TraceNode node;
  absl::StatusOr<absl::string_view> name = Name(table, row, c.name, "sn");
  if (!name.ok()) return name.status();
  node.name = std::string(*name);
  int64_t gpus = 0;
  if (absl::Status s =
          ReadInts(table, row,
                   {{"cpu_milli", c.cpu, 0, kMaxQuantity, &node.cpu_milli},
                    {"memory_mib", c.memory, 0, kMaxQuantity, &node.memory_mib},
                    {"gpu", c.gpus, 0, 32, &gpus}});
      !s.ok()) {
    return s;
  }
  node.gpus = static_cast<int>(gpus);
  if (c.model) node.model = std::string(row.fields[*c.model]);
  return node;
}

struct PodColumns {
  int name, cpu, memory, num_gpu, gpu_milli;
  std::optional<int> gpu_spec;
};

absl::StatusOr<PodColumns> FindPodColumns(const CsvTable& table) {
  PodColumns columns{};
  int* targets[] = {&columns.name, &columns.cpu, &columns.memory,
                    &columns.num_gpu, &columns.gpu_milli};
  const absl::string_view names[] = {"name", "cpu_milli", "memory_mib",
                                     "num_gpu", "gpu_milli"};
  for (size_t i = 0; i < std::size(names); ++i) {
    absl::StatusOr<int> index = table.Require(names[i]);
    if (!index.ok()) return index.status();
    *targets[i] = *index;
  }
  columns.gpu_spec = table.Find("gpu_spec");
  return columns;
}

// gpu_milli's range depends on num_gpu: none without GPUs, a share or a
// whole GPU for one, whole GPUs only for several.
absl::Status CheckGpuMilli(const CsvTable& table, const CsvRow& row,
                           const TracePod& pod) {
  const bool valid = pod.num_gpu == 0   ? pod.gpu_milli == 0
                     : pod.num_gpu == 1 ? pod.gpu_milli >= 1
                                        : pod.gpu_milli == 1000;
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(table.Where(row, "gpu_milli"), pod.gpu_milli,
                   " with num_gpu ", pod.num_gpu,
                   "; must be 0 without GPUs, 1..1000 with one GPU, 1000 "
                   "with several"));
}

absl::StatusOr<TracePod> PodOf(const CsvTable& table, const CsvRow& row,
                               const PodColumns& c) {
  TracePod pod;
  absl::StatusOr<absl::string_view> name = Name(table, row, c.name, "name");
  if (!name.ok()) return name.status();
  pod.name = std::string(*name);
  int64_t num_gpu = 0;
  int64_t gpu_milli = 0;
  if (absl::Status s =
          ReadInts(table, row,
                   {{"cpu_milli", c.cpu, 0, kMaxQuantity, &pod.cpu_milli},
                    {"memory_mib", c.memory, 0, kMaxQuantity, &pod.memory_mib},
                    {"num_gpu", c.num_gpu, 0, kMaxGpusPerTask, &num_gpu},
                    {"gpu_milli", c.gpu_milli, 0, 1000, &gpu_milli}});
      !s.ok()) {
    return s;
  }
  pod.num_gpu = static_cast<int>(num_gpu);
  pod.gpu_milli = static_cast<int>(gpu_milli);
  if (absl::Status s = CheckGpuMilli(table, row, pod); !s.ok()) return s;
  if (c.gpu_spec && !row.fields[*c.gpu_spec].empty()) {
    pod.gpu_spec =
        absl::StrSplit(row.fields[*c.gpu_spec], '|', absl::SkipWhitespace());
  }
  return pod;
}

}  // namespace

absl::StatusOr<std::vector<TraceNode>> ParseTraceNodes(std::string_view text,
                                                       std::string_view file) {
  absl::StatusOr<CsvTable> table = CsvTable::Parse(Sv(text), Sv(file));
  if (!table.ok()) return table.status();
  absl::StatusOr<NodeColumns> columns = FindNodeColumns(*table);
  if (!columns.ok()) return columns.status();
  std::vector<TraceNode> nodes;
  absl::flat_hash_set<std::string> names;
  for (const CsvRow& row : table->rows()) {
    absl::StatusOr<TraceNode> node = NodeOf(*table, row, *columns);
    if (!node.ok()) return node.status();
    if (!names.insert(node->name).second) {
      return absl::InvalidArgumentError(absl::StrCat(Sv(file), ":", row.line,
                                                     ": node \"", node->name,
                                                     "\" is listed twice"));
    }
    nodes.push_back(*std::move(node));
  }
  return nodes;
}

absl::StatusOr<std::vector<TracePod>> ParseTracePods(std::string_view text,
                                                     std::string_view file) {
  absl::StatusOr<CsvTable> table = CsvTable::Parse(Sv(text), Sv(file));
  if (!table.ok()) return table.status();
  absl::StatusOr<PodColumns> columns = FindPodColumns(*table);
  if (!columns.ok()) return columns.status();
  std::vector<TracePod> pods;
  pods.reserve(table->rows().size());
  for (const CsvRow& row : table->rows()) {
    absl::StatusOr<TracePod> pod = PodOf(*table, row, *columns);
    if (!pod.ok()) return pod.status();
    pods.push_back(*std::move(pod));
  }
  return pods;
}

absl::StatusOr<replay::Trace> ReadTrace(const std::string& nodes_path,
                                        const std::string& pods_path) {
  replay::Trace trace;
  absl::StatusOr<std::string> nodes_text = ReadTextFile(nodes_path);
  if (!nodes_text.ok()) return nodes_text.status();
  absl::StatusOr<std::vector<TraceNode>> nodes =
      ParseTraceNodes(*nodes_text, nodes_path);
  if (!nodes.ok()) return nodes.status();
  absl::StatusOr<std::string> pods_text = ReadTextFile(pods_path);
  if (!pods_text.ok()) return pods_text.status();
  absl::StatusOr<std::vector<TracePod>> pods =
      ParseTracePods(*pods_text, pods_path);
  if (!pods.ok()) return pods.status();
  trace.nodes = *std::move(nodes);
  trace.pods = *std::move(pods);
  return trace;
}

}  // namespace gpusched
