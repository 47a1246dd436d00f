// The compact JSON form of the `gpusched.io/gpu-topology` annotation (see
// gpu_topology.h). The domain takes no JSON library, so this holds a small
// reader for the subset the form needs: objects, arrays, strings and
// non-negative integers. Every value keeps its source position so that
// errors can name line and column.
//
// Steps: read the text into a JsonValue tree; check the top-level keys;
// build the matrix from "links" or from "gpus" + "all"; read "numa";
// validate the matrix.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/gpu_topology.h"
#include "scheduler/string_util.h"

namespace gpusched {
namespace {

using gpu_topology_internal::ErrorAt;
using gpu_topology_internal::TextPos;
using gpu_topology_internal::UnknownLinkAt;

// Deep nesting is never valid here; the limit keeps recursion bounded.
constexpr int kMaxDepth = 16;
// Integers above this are rejected instead of risking overflow.
constexpr int64_t kMaxInt = 1'000'000'000;

struct JsonValue {
  enum class Type { kObject, kArray, kString, kInt };
  Type type = Type::kInt;
  TextPos pos;
  std::string key;  // set when this value is an object member
  TextPos key_pos;
  std::string text;              // kString
  int64_t number = 0;            // kInt
  std::vector<JsonValue> items;  // kArray elements or kObject members
};

std::string_view TypeName(JsonValue::Type type) {
  switch (type) {
    case JsonValue::Type::kObject:
      return "an object";
    case JsonValue::Type::kArray:
      return "an array";
    case JsonValue::Type::kString:
      return "a string";
    case JsonValue::Type::kInt:
      return "an integer";
  }
  return "a value";
}

// Recursive-descent reader over the JSON subset. Tracks line and column as
// it advances so each error and each value carries a position.
class JsonReader {
 public:
  explicit JsonReader(std::string_view in) : in_(in) {}

  absl::StatusOr<JsonValue> ReadDocument() {
    absl::StatusOr<JsonValue> value = ReadValue(0);
    if (!value.ok()) return value;
    SkipSpace();
    if (!AtEnd()) return Error("unexpected text after the top-level value");
    return value;
  }

 private:
  bool AtEnd() const { return i_ >= in_.size(); }
  char Peek() const { return in_[i_]; }

  void Advance() {
    if (in_[i_] == '\n') {
      ++pos_.line;
      pos_.column = 1;
    } else {
      ++pos_.column;
    }
    ++i_;
  }

  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' ||
                        Peek() == '\r')) {
      Advance();
    }
  }

  absl::Status Error(std::string_view what) const {
    return ErrorAt(pos_, what);
  }

  absl::Status Unexpected(std::string_view expected) const {
    if (AtEnd()) {
      return Error(
          absl::StrCat("expected ", Sv(expected), ", found end of input"));
    }
    return Error(absl::StrCat("expected ", Sv(expected), ", found '",
                              std::string(1, Peek()), "'"));
  }

  absl::StatusOr<JsonValue> ReadValue(int depth) {
    SkipSpace();
    if (depth > kMaxDepth) return Error("nesting too deep");
    if (AtEnd()) return Unexpected("a value");
    switch (Peek()) {
      case '{':
        return ReadContainer(depth, JsonValue::Type::kObject);
      case '[':
        return ReadContainer(depth, JsonValue::Type::kArray);
      case '"':
        return ReadStringValue();
      case '-':
        return Error("negative numbers are not allowed");
      default:
        if (Peek() >= '0' && Peek() <= '9') return ReadInt();
        return Unexpected("an object, array, string or non-negative integer");
    }
  }

  absl::StatusOr<JsonValue> ReadInt() {
    JsonValue value;
    value.type = JsonValue::Type::kInt;
    value.pos = pos_;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      value.number = value.number * 10 + (Peek() - '0');
      if (value.number > kMaxInt) return Error("integer too large");
      Advance();
    }
    if (!AtEnd() && (Peek() == '.' || Peek() == 'e' || Peek() == 'E')) {
      return Error("only integers are allowed");
    }
    return value;
  }

  absl::StatusOr<std::string> ReadString() {
    if (AtEnd() || Peek() != '"') return Unexpected("'\"'");
    Advance();
    std::string out;
    while (!AtEnd() && Peek() != '"') {
      if (Peek() == '\n') return Error("unterminated string");
      if (Peek() == '\\') {
        Advance();
        if (AtEnd()) break;
        static constexpr std::string_view kFrom = "\"\\/bfnrt";
        static constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
        const size_t k = kFrom.find(Peek());
        if (k == std::string_view::npos) {
          return Error("unsupported escape in string");
        }
        out.push_back(kTo[k]);
      } else {
        out.push_back(Peek());
      }
      Advance();
    }
    if (AtEnd()) return Error("unterminated string");
    Advance();  // closing quote
    return out;
  }

  absl::StatusOr<JsonValue> ReadStringValue() {
    JsonValue value;
    value.type = JsonValue::Type::kString;
    value.pos = pos_;
    absl::StatusOr<std::string> text = ReadString();
    if (!text.ok()) return text.status();
    value.text = *std::move(text);
    return value;
  }

  // One object member: "key" ':' value.
  absl::StatusOr<JsonValue> ReadMember(int depth) {
    SkipSpace();
    const TextPos key_pos = pos_;
    absl::StatusOr<std::string> key = ReadString();
    if (!key.ok()) return key.status();
    SkipSpace();
    if (AtEnd() || Peek() != ':') return Unexpected("':'");
    Advance();
    absl::StatusOr<JsonValue> value = ReadValue(depth + 1);
    if (!value.ok()) return value;
    value->key = *std::move(key);
    value->key_pos = key_pos;
    return value;
  }

  // Objects and arrays share the comma/close loop.
  absl::StatusOr<JsonValue> ReadContainer(int depth, JsonValue::Type type) {
    const bool object = type == JsonValue::Type::kObject;
    const char close = object ? '}' : ']';
    JsonValue container;
    container.type = type;
    container.pos = pos_;
    Advance();  // opening bracket
    SkipSpace();
    if (!AtEnd() && Peek() == close) {
      Advance();
      return container;
    }
    while (true) {
      absl::StatusOr<JsonValue> item =
          object ? ReadMember(depth) : ReadValue(depth + 1);
      if (!item.ok()) return item;
      container.items.push_back(*std::move(item));
      SkipSpace();
      if (!AtEnd() && Peek() == ',') {
        Advance();
        continue;
      }
      if (!AtEnd() && Peek() == close) {
        Advance();
        return container;
      }
      return Unexpected(object ? "',' or '}'" : "',' or ']'");
    }
  }

  std::string_view in_;
  size_t i_ = 0;
  TextPos pos_;
};

absl::Status ExpectType(const JsonValue& value, JsonValue::Type type,
                        std::string_view what) {
  if (value.type == type) return absl::OkStatus();
  return ErrorAt(value.pos,
                 absl::StrCat(Sv(what), " must be ", Sv(TypeName(type)),
                              ", found ", Sv(TypeName(value.type))));
}

// The recognised top-level members; each may appear once.
struct CompactFields {
  const JsonValue* links = nullptr;
  const JsonValue* gpus = nullptr;
  const JsonValue* all = nullptr;
  const JsonValue* numa = nullptr;
};

absl::StatusOr<CompactFields> ReadFields(const JsonValue& root) {
  if (absl::Status s =
          ExpectType(root, JsonValue::Type::kObject, "the topology");
      !s.ok()) {
    return s;
  }
  CompactFields fields;
  for (const JsonValue& member : root.items) {
    const JsonValue** slot = member.key == "links"  ? &fields.links
                             : member.key == "gpus" ? &fields.gpus
                             : member.key == "all"  ? &fields.all
                             : member.key == "numa" ? &fields.numa
                                                    : nullptr;
    if (slot == nullptr) {
      return ErrorAt(member.key_pos,
                     absl::StrCat("unknown key \"", member.key,
                                  "\" (expected links, gpus, all or numa)"));
    }
    if (*slot != nullptr) {
      return ErrorAt(member.key_pos,
                     absl::StrCat("duplicate key \"", member.key, "\""));
    }
    *slot = &member;
  }
  return fields;
}

absl::StatusOr<GpuLink> ReadLink(const JsonValue& cell) {
  if (absl::Status s = ExpectType(cell, JsonValue::Type::kString, "a link");
      !s.ok()) {
    return s;
  }
  std::optional<GpuLink> link = ParseLinkName(cell.text);
  if (!link.has_value()) return UnknownLinkAt(cell.pos, cell.text);
  return *link;
}

struct Matrix {
  std::vector<std::vector<GpuLink>> links;
  std::vector<std::vector<TextPos>> where;
};

absl::StatusOr<Matrix> ReadLinks(const JsonValue& links) {
  if (absl::Status s = ExpectType(links, JsonValue::Type::kArray, "links");
      !s.ok()) {
    return s;
  }
  const size_t n = links.items.size();
  if (n == 0) return ErrorAt(links.pos, "links must name at least one GPU");
  Matrix matrix;
  for (size_t i = 0; i < n; ++i) {
    const JsonValue& row = links.items[i];
    if (absl::Status s =
            ExpectType(row, JsonValue::Type::kArray, "a links row");
        !s.ok()) {
      return s;
    }
    if (row.items.size() != n) {
      return ErrorAt(
          row.pos,
          absl::StrCat("links row ", i, " has ", row.items.size(),
                       " cells, expected ", n, " (the matrix must be square)"));
    }
    matrix.links.emplace_back();
    matrix.where.emplace_back();
    for (const JsonValue& cell : row.items) {
      absl::StatusOr<GpuLink> link = ReadLink(cell);
      if (!link.ok()) return link.status();
      matrix.links.back().push_back(*link);
      matrix.where.back().push_back(cell.pos);
    }
  }
  return matrix;
}

// The shorthand {"gpus": n, "all": "<link>"}.
absl::StatusOr<Matrix> ReadAllToAll(const JsonValue& gpus,
                                    const JsonValue& all) {
  if (absl::Status s = ExpectType(gpus, JsonValue::Type::kInt, "gpus");
      !s.ok()) {
    return s;
  }
  if (gpus.number < 1 || gpus.number > kMaxGpusPerNode) {
    return ErrorAt(gpus.pos, absl::StrCat("gpus must be between 1 and ",
                                          kMaxGpusPerNode, ", found ", gpus.number));
  }
  absl::StatusOr<GpuLink> link = ReadLink(all);
  if (!link.ok()) return link.status();
  if (link->kind == LinkKind::kSelf) {
    return ErrorAt(all.pos, "all must name a link between two GPUs, not X");
  }
  const int n = static_cast<int>(gpus.number);
  Matrix matrix{.links = std::vector<std::vector<GpuLink>>(
                    n, std::vector<GpuLink>(n, *link)),
                .where = std::vector<std::vector<TextPos>>(
                    n, std::vector<TextPos>(n, all.pos))};
  for (int i = 0; i < n; ++i) matrix.links[i][i] = {.kind = LinkKind::kSelf};
  return matrix;
}

absl::StatusOr<Matrix> ReadMatrix(const CompactFields& fields,
                                  const JsonValue& root) {
  if (fields.links != nullptr) {
    if (fields.gpus != nullptr || fields.all != nullptr) {
      const JsonValue& extra =
          fields.gpus != nullptr ? *fields.gpus : *fields.all;
      return ErrorAt(extra.key_pos,
                     "use either links or gpus with all, not both");
    }
    return ReadLinks(*fields.links);
  }
  if (fields.gpus == nullptr || fields.all == nullptr) {
    return ErrorAt(root.pos, "the topology needs links, or gpus with all");
  }
  return ReadAllToAll(*fields.gpus, *fields.all);
}

absl::StatusOr<std::vector<int>> ReadNuma(const JsonValue* numa, size_t gpus) {
  if (numa == nullptr) return std::vector<int>(gpus, -1);
  if (absl::Status s = ExpectType(*numa, JsonValue::Type::kArray, "numa");
      !s.ok()) {
    return s;
  }
  if (numa->items.size() != gpus) {
    return ErrorAt(numa->pos,
                   absl::StrCat("numa has ", numa->items.size(),
                                " entries, expected one per GPU (", gpus, ")"));
  }
  std::vector<int> nodes;
  for (const JsonValue& item : numa->items) {
    if (absl::Status s =
            ExpectType(item, JsonValue::Type::kInt, "a numa entry");
        !s.ok()) {
      return s;
    }
    nodes.push_back(static_cast<int>(item.number));
  }
  return nodes;
}

}  // namespace

absl::StatusOr<GpuTopology> ParseCompactGpuTopology(std::string_view json) {
  absl::StatusOr<JsonValue> root = JsonReader(json).ReadDocument();
  if (!root.ok()) return root.status();
  absl::StatusOr<CompactFields> fields = ReadFields(*root);
  if (!fields.ok()) return fields.status();
  absl::StatusOr<Matrix> matrix = ReadMatrix(*fields, *root);
  if (!matrix.ok()) return matrix.status();
  absl::StatusOr<std::vector<int>> numa =
      ReadNuma(fields->numa, matrix->links.size());
  if (!numa.ok()) return numa.status();
  if (absl::Status s = gpu_topology_internal::ValidateLinkMatrix(matrix->links,
                                                                 matrix->where);
      !s.ok()) {
    return s;
  }
  return GpuTopology::FromMatrix(std::move(matrix->links), *std::move(numa));
}

}  // namespace gpusched
