// The compact JSON form of the `gpusched.io/gpu-topology` annotation (see
// gpu_topology_annotation.h), read with simdjson like the codec's other
// decoders. simdjson's On-Demand API hands out views into the text, so every
// value's line and column come from where its token starts, and every error
// names the byte it rejects.
//
// Steps: check the syntax (simdjson's DOM parser; on an error, locate the
// byte); check the top-level keys; build the matrix from "links" or from
// "gpus" + "all"; read "numa"; validate the matrix.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/gpu_topology_annotation.h"
#include "api/codec/json_syntax_error.h"
#include "scheduler/base/strings.h"
#include "scheduler/gpu_topology.h"
#include "simdjson.h"

namespace gpusched {
namespace {

using gpu_topology_internal::ErrorAt;
using gpu_topology_internal::TextPos;
using gpu_topology_internal::UnknownLinkAt;
using simdjson::ondemand::json_type;

// Integers above this are rejected instead of risking overflow.
constexpr int64_t kMaxInt = 1'000'000'000;

// A value and where its token starts in the text.
struct Located {
  simdjson::ondemand::value value;
  TextPos pos;
};

// Where each recognised top-level key is; each may appear once.
struct CompactFields {
  std::optional<TextPos> links;
  std::optional<TextPos> gpus;
  std::optional<TextPos> all;
  std::optional<TextPos> numa;
};

struct SizedArray {
  simdjson::ondemand::array items;
  size_t size = 0;
};

struct Matrix {
  std::vector<std::vector<GpuLink>> links;
  std::vector<std::vector<TextPos>> where;
};

std::string_view TypeName(json_type type) {
  switch (type) {
    case json_type::object:
      return "an object";
    case json_type::array:
      return "an array";
    case json_type::string:
      return "a string";
    case json_type::number:
      return "an integer";
    case json_type::boolean:
      return "a boolean";
    case json_type::null:
      return "null";
  }
  return "a value";
}

// A simdjson error while walking text that already passed the syntax check
// (a number simdjson cannot hold, say).
absl::Status WalkError(simdjson::error_code code, TextPos pos) {
  return ErrorAt(
      pos, absl::StrCat("malformed JSON: ", simdjson::error_message(code)));
}

// simdjson's DOM parser checks the whole text first, as the codec's other
// decoders do, so the walk meets only valid JSON. An error the locator
// cannot place (simdjson is stricter about huge numbers and depth) goes to
// `unplaced`, and the walk names the value it fails on.
absl::Status CheckSyntax(const simdjson::padded_string& text,
                         simdjson::error_code& unplaced) {
  simdjson::dom::parser parser;
  const simdjson::error_code code = parser.parse(text).error();
  if (code == simdjson::SUCCESS) return absl::OkStatus();
  const std::optional<codec_internal::JsonSyntaxError> error =
      codec_internal::LocateJsonSyntaxError(text);
  if (!error.has_value()) {
    unplaced = code;
    return absl::OkStatus();
  }
  return ErrorAt(TextPos{.line = static_cast<int>(error->line),
                         .column = static_cast<int>(error->column)},
                 absl::StrCat("malformed JSON: ", error->reason));
}

// Walks one syntactically valid document; keeps the text to turn token
// addresses into lines and columns.
class CompactReader {
 public:
  explicit CompactReader(const simdjson::padded_string& text) : text_(text) {}

  absl::StatusOr<GpuTopology> Read();

 private:
  TextPos At(const char* byte) const;
  Located Locate(simdjson::ondemand::value value) const {
    return {value, At(value.raw_json_token().data())};
  }
  absl::Status ExpectType(Located& value, json_type type,
                          std::string_view what) const;
  absl::StatusOr<int64_t> ReadInt(Located& value, std::string_view what) const;
  absl::StatusOr<SizedArray> ReadArray(Located& value,
                                       std::string_view what) const;
  absl::StatusOr<GpuLink> ReadLink(Located& cell) const;
  absl::StatusOr<Located> Find(std::string_view key);
  absl::StatusOr<CompactFields> ReadFields();
  absl::Status ReadLinksRow(Located& row, size_t i, size_t n,
                            Matrix& matrix) const;
  absl::StatusOr<Matrix> ReadLinks();
  absl::StatusOr<Matrix> ReadAllToAll();
  absl::StatusOr<Matrix> ReadMatrix(const CompactFields& fields);
  absl::StatusOr<std::vector<int>> ReadNuma(const CompactFields& fields,
                                            size_t gpus);

  const simdjson::padded_string& text_;
  simdjson::ondemand::parser parser_;
  simdjson::ondemand::document doc_;
  simdjson::ondemand::object root_;
  TextPos root_pos_;
};

TextPos CompactReader::At(const char* byte) const {
  const std::string_view before(text_.data(),
                                static_cast<size_t>(byte - text_.data()));
  const size_t line_start = before.rfind('\n');
  return TextPos{
      .line =
          static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1,
      .column =
          static_cast<int>(before.size() -
                           (line_start == before.npos ? 0 : line_start + 1)) +
          1};
}

absl::Status CompactReader::ExpectType(Located& value, json_type type,
                                       std::string_view what) const {
  json_type found = json_type::null;
  if (auto code = value.value.type().get(found)) {
    return WalkError(code, value.pos);
  }
  if (found == type) return absl::OkStatus();
  return ErrorAt(value.pos,
                 absl::StrCat(Sv(what), " must be ", Sv(TypeName(type)),
                              ", found ", Sv(TypeName(found))));
}

// A non-negative integer up to kMaxInt.
absl::StatusOr<int64_t> CompactReader::ReadInt(Located& value,
                                               std::string_view what) const {
  if (absl::Status s = ExpectType(value, json_type::number, what); !s.ok()) {
    return s;
  }
  simdjson::ondemand::number_type type;
  if (auto code = value.value.get_number_type().get(type)) {
    return WalkError(code, value.pos);
  }
  if (type == simdjson::ondemand::number_type::floating_point_number) {
    return ErrorAt(value.pos, "only integers are allowed");
  }
  if (value.value.raw_json_token().starts_with('-')) {
    return ErrorAt(value.pos, "negative numbers are not allowed");
  }
  uint64_t number = 0;
  if (value.value.get_uint64().get(number) != simdjson::SUCCESS ||
      number > static_cast<uint64_t>(kMaxInt)) {
    return ErrorAt(value.pos, "integer too large");
  }
  return static_cast<int64_t>(number);
}

// An array and its length, which the checks need before the elements.
absl::StatusOr<SizedArray> CompactReader::ReadArray(
    Located& value, std::string_view what) const {
  if (absl::Status s = ExpectType(value, json_type::array, what); !s.ok()) {
    return s;
  }
  SizedArray array{.items = value.value.get_array().value_unsafe()};
  if (auto code = array.items.count_elements().get(array.size)) {
    return WalkError(code, value.pos);
  }
  return array;
}

absl::StatusOr<GpuLink> CompactReader::ReadLink(Located& cell) const {
  if (absl::Status s = ExpectType(cell, json_type::string, "a link"); !s.ok()) {
    return s;
  }
  std::string_view text;
  if (auto code = cell.value.get_string().get(text)) {
    return WalkError(code, cell.pos);
  }
  std::optional<GpuLink> link = ParseLinkName(text);
  if (!link.has_value()) return UnknownLinkAt(cell.pos, text);
  return *link;
}

// A top-level member ReadFields saw. The document is read again from its
// start, so the value found last must be read before this is called.
absl::StatusOr<Located> CompactReader::Find(std::string_view key) {
  simdjson::ondemand::value value;
  doc_.rewind();
  if (auto code = doc_.get_object().get(root_)) {
    return WalkError(code, root_pos_);
  }
  if (auto code = root_.find_field_unordered(key).get(value)) {
    return WalkError(code, root_pos_);
  }
  return Locate(value);
}

absl::StatusOr<CompactFields> CompactReader::ReadFields() {
  CompactFields fields;
  for (auto member : root_) {
    simdjson::ondemand::field field;
    if (auto code = std::move(member).get(field)) {
      return WalkError(code, root_pos_);
    }
    const TextPos key_pos = At(field.key().raw() - 1);  // the opening quote
    std::string_view key;
    if (auto code = field.unescaped_key().get(key)) {
      return WalkError(code, key_pos);
    }
    std::optional<TextPos>* slot = key == "links"  ? &fields.links
                                   : key == "gpus" ? &fields.gpus
                                   : key == "all"  ? &fields.all
                                   : key == "numa" ? &fields.numa
                                                   : nullptr;
    if (slot == nullptr) {
      return ErrorAt(key_pos,
                     absl::StrCat("unknown key \"", Sv(key),
                                  "\" (expected links, gpus, all or numa)"));
    }
    if (slot->has_value()) {
      return ErrorAt(key_pos, absl::StrCat("duplicate key \"", Sv(key), "\""));
    }
    *slot = key_pos;
  }
  return fields;
}

// Row i of n: n link cells.
absl::Status CompactReader::ReadLinksRow(Located& row, size_t i, size_t n,
                                         Matrix& matrix) const {
  absl::StatusOr<SizedArray> cells = ReadArray(row, "a links row");
  if (!cells.ok()) return cells.status();
  if (cells->size != n) {
    return ErrorAt(row.pos, absl::StrCat("links row ", i, " has ", cells->size,
                                         " cells, expected ", n,
                                         " (the matrix must be square)"));
  }
  matrix.links.emplace_back();
  matrix.where.emplace_back();
  for (auto item : cells->items) {
    Located cell = Locate(item.value_unsafe());
    absl::StatusOr<GpuLink> link = ReadLink(cell);
    if (!link.ok()) return link.status();
    matrix.links.back().push_back(*link);
    matrix.where.back().push_back(cell.pos);
  }
  return absl::OkStatus();
}

absl::StatusOr<Matrix> CompactReader::ReadLinks() {
  absl::StatusOr<Located> links = Find("links");
  if (!links.ok()) return links.status();
  absl::StatusOr<SizedArray> rows = ReadArray(*links, "links");
  if (!rows.ok()) return rows.status();
  if (rows->size == 0) {
    return ErrorAt(links->pos, "links must name at least one GPU");
  }
  Matrix matrix;
  size_t i = 0;
  for (auto item : rows->items) {
    Located row = Locate(item.value_unsafe());
    if (absl::Status s = ReadLinksRow(row, i++, rows->size, matrix); !s.ok()) {
      return s;
    }
  }
  return matrix;
}

// The shorthand {"gpus": n, "all": "<link>"}.
absl::StatusOr<Matrix> CompactReader::ReadAllToAll() {
  absl::StatusOr<Located> gpus = Find("gpus");
  if (!gpus.ok()) return gpus.status();
  absl::StatusOr<int64_t> count = ReadInt(*gpus, "gpus");
  if (!count.ok()) return count.status();
  if (*count < 1 || *count > kMaxGpusPerNode) {
    return ErrorAt(gpus->pos,
                   absl::StrCat("gpus must be between 1 and ", kMaxGpusPerNode,
                                ", found ", *count));
  }
  absl::StatusOr<Located> all = Find("all");
  if (!all.ok()) return all.status();
  absl::StatusOr<GpuLink> link = ReadLink(*all);
  if (!link.ok()) return link.status();
  if (link->kind == LinkKind::kSelf) {
    return ErrorAt(all->pos, "all must name a link between two GPUs, not X");
  }
  const int n = static_cast<int>(*count);
  Matrix matrix{.links = std::vector<std::vector<GpuLink>>(
                    n, std::vector<GpuLink>(n, *link)),
                .where = std::vector<std::vector<TextPos>>(
                    n, std::vector<TextPos>(n, all->pos))};
  for (int i = 0; i < n; ++i) matrix.links[i][i] = {.kind = LinkKind::kSelf};
  return matrix;
}

absl::StatusOr<Matrix> CompactReader::ReadMatrix(const CompactFields& fields) {
  if (fields.links.has_value()) {
    if (fields.gpus.has_value() || fields.all.has_value()) {
      return ErrorAt(fields.gpus.has_value() ? *fields.gpus : *fields.all,
                     "use either links or gpus with all, not both");
    }
    return ReadLinks();
  }
  if (!fields.gpus.has_value() || !fields.all.has_value()) {
    return ErrorAt(root_pos_, "the topology needs links, or gpus with all");
  }
  return ReadAllToAll();
}

absl::StatusOr<std::vector<int>> CompactReader::ReadNuma(
    const CompactFields& fields, size_t gpus) {
  if (!fields.numa.has_value()) return std::vector<int>(gpus, -1);
  absl::StatusOr<Located> numa = Find("numa");
  if (!numa.ok()) return numa.status();
  absl::StatusOr<SizedArray> items = ReadArray(*numa, "numa");
  if (!items.ok()) return items.status();
  if (items->size != gpus) {
    return ErrorAt(numa->pos,
                   absl::StrCat("numa has ", items->size,
                                " entries, expected one per GPU (", gpus, ")"));
  }
  std::vector<int> nodes;
  for (auto item : items->items) {
    Located entry = Locate(item.value_unsafe());
    absl::StatusOr<int64_t> node = ReadInt(entry, "a numa entry");
    if (!node.ok()) return node.status();
    nodes.push_back(static_cast<int>(*node));
  }
  return nodes;
}

absl::StatusOr<GpuTopology> CompactReader::Read() {
  if (auto code = parser_.iterate(text_).get(doc_)) {
    return WalkError(code, TextPos{});
  }
  root_pos_ = At(doc_.raw_json_token().value_unsafe().data());
  if (auto code = doc_.get_object().get(root_)) {
    return ErrorAt(root_pos_, "the topology must be an object");
  }
  absl::StatusOr<CompactFields> fields = ReadFields();
  if (!fields.ok()) return fields.status();
  absl::StatusOr<Matrix> matrix = ReadMatrix(*fields);
  if (!matrix.ok()) return matrix.status();
  absl::StatusOr<std::vector<int>> numa =
      ReadNuma(*fields, matrix->links.size());
  if (!numa.ok()) return numa.status();
  if (absl::Status s = gpu_topology_internal::ValidateLinkMatrix(matrix->links,
                                                                 matrix->where);
      !s.ok()) {
    return s;
  }
  return GpuTopology::FromMatrix(std::move(matrix->links), *std::move(numa));
}

}  // namespace

absl::StatusOr<GpuTopology> ParseCompactGpuTopology(std::string_view json) {
  const simdjson::padded_string text(json);
  simdjson::error_code unplaced = simdjson::SUCCESS;
  if (absl::Status s = CheckSyntax(text, unplaced); !s.ok()) return s;
  absl::StatusOr<GpuTopology> topology = CompactReader(text).Read();
  if (topology.ok() && unplaced != simdjson::SUCCESS) {
    return WalkError(unplaced, TextPos{});
  }
  return topology;
}

}  // namespace gpusched
