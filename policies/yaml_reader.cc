#include "policies/yaml_reader.h"

#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched::policy_internal {
namespace {

// A wrong-type error: quotes the value when it is a scalar.
void TypeError(DocContext& doc, const Value& value, std::string_view want) {
  const YAML::Node& node = value.node;
  if (node.IsScalar()) {
    doc.Error(value.line, value.path, InvalidValue(node.Scalar(), want));
    return;
  }
  const char* got = node.IsSequence() ? "a list" : "a mapping";
  doc.Error(value.line, value.path,
            InvalidNonScalar(absl::StrCat(Sv(want), ", not ", got)));
}

}  // namespace

void DocContext::Error(int line, std::string_view path, std::string_view text) {
  ++error_count_;
  diagnostics_->Add(file_, line, subject_, path, text);
}

int LineOf(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? 0 : mark.line + 1;
}

std::string ChildPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return absl::StrCat(Sv(parent), ".", Sv(key));
}

Value RootValue(const YAML::Node& node) {
  return Value{.node = node, .path = "", .line = LineOf(node)};
}

MapReader::MapReader(DocContext& doc, const Value& value)
    : doc_(doc), path_(value.path), line_(value.line) {
  if (!value.present()) return;
  if (!value.node.IsMap()) {
    TypeError(doc, value, "must be a mapping");
    return;
  }
  for (const auto& pair : value.node) {
    const int key_line = LineOf(pair.first);
    std::string key = pair.first.IsScalar() ? pair.first.Scalar() : "";
    if (Find(key) != nullptr) {
      doc.Error(key_line, ChildPath(path_, key),
                "Duplicate field: the key appears more than once");
      continue;
    }
    entries_.push_back({std::move(key), pair.second, key_line, false});
  }
}

MapReader::Entry* MapReader::Find(std::string_view key) {
  for (Entry& entry : entries_) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

Value MapReader::Get(std::string_view key) {
  Entry* entry = Find(key);
  if (entry == nullptr)
    return Value{.path = ChildPath(path_, key), .line = line_};
  entry->claimed = true;
  const int value_line = LineOf(entry->value);
  return Value{.node = entry->value,
               .path = ChildPath(path_, key),
               .line = value_line > 0 ? value_line : entry->key_line};
}

void MapReader::Ignore(std::string_view key) {
  if (Entry* entry = Find(key)) entry->claimed = true;
}

void MapReader::Unsupported(std::string_view key, std::string_view why) {
  Entry* entry = Find(key);
  if (entry == nullptr) return;
  entry->claimed = true;
  doc_.Error(entry->key_line, ChildPath(path_, key), UnsupportedField(why));
}

void MapReader::UnsupportedUnless(std::string_view key,
                                  std::string_view accepted,
                                  std::string_view why) {
  Entry* entry = Find(key);
  if (entry == nullptr) return;
  entry->claimed = true;
  if (entry->value.IsScalar() && entry->value.Scalar() == accepted) return;
  doc_.Error(entry->key_line, ChildPath(path_, key), UnsupportedField(why));
}

void MapReader::Finish(std::string_view hint) {
  const std::string text = hint.empty()
                               ? UnknownField()
                               : absl::StrCat(UnknownField(), ": ", Sv(hint));
  for (Entry& entry : entries_) {
    if (entry.claimed) continue;
    entry.claimed = true;  // a second Finish() stays quiet
    doc_.Error(entry.key_line, ChildPath(path_, entry.key), text);
  }
}

bool RequirePresent(DocContext& doc, const Value& value, std::string_view why) {
  if (value.present()) return true;
  doc.Error(value.line, value.path, RequiredValue(why));
  return false;
}

std::optional<std::string> ReadString(DocContext& doc, const Value& value) {
  if (!value.present()) return std::nullopt;
  if (!value.node.IsScalar()) {
    TypeError(doc, value, "must be a string");
    return std::nullopt;
  }
  return value.node.Scalar();
}

std::optional<int64_t> ReadInt(DocContext& doc, const Value& value, int64_t min,
                               int64_t max) {
  std::optional<std::string> text = ReadString(doc, value);
  if (!text) return std::nullopt;
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(*text, &parsed)) {
    doc.Error(value.line, value.path,
              InvalidValue(*text, "must be an integer"));
    return std::nullopt;
  }
  if (parsed < min || parsed > max) {
    doc.Error(value.line, value.path,
              InvalidValue(
                  *text, absl::StrCat("must be between ", min, " and ", max)));
    return std::nullopt;
  }
  return parsed;
}

std::optional<bool> ReadBool(DocContext& doc, const Value& value) {
  std::optional<std::string> text = ReadString(doc, value);
  if (!text) return std::nullopt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  doc.Error(value.line, value.path,
            InvalidValue(*text, "must be true or false"));
  return std::nullopt;
}

std::optional<StringMap> ReadStringMap(DocContext& doc, const Value& value) {
  if (!value.present()) return std::nullopt;
  MapReader reader(doc, value);
  StringMap out;
  const int errors = doc.error_count();
  for (const auto& pair : value.node.IsMap() ? value.node : YAML::Node()) {
    if (!pair.first.IsScalar()) continue;
    const std::string& key = pair.first.Scalar();
    std::optional<std::string> text = ReadString(doc, reader.Get(key));
    if (text) out.emplace(key, *text);
  }
  reader.Finish();
  if (doc.error_count() != errors) return std::nullopt;
  return out;
}

std::optional<int> ReadEnum(DocContext& doc, const Value& value,
                            std::span<const std::string_view> names) {
  std::optional<std::string> text = ReadString(doc, value);
  if (!text) return std::nullopt;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == *text) return static_cast<int>(i);
  }
  doc.Error(value.line, value.path, UnsupportedValue(*text, names));
  return std::nullopt;
}

std::optional<std::string> ReadName(DocContext& doc, const Value& value,
                                    std::string (*rule)(std::string_view)) {
  std::optional<std::string> text = ReadString(doc, value);
  if (!text) return std::nullopt;
  const std::string why = rule(*text);
  if (why.empty()) return text;
  doc.Error(value.line, value.path, InvalidValue(*text, why));
  return std::nullopt;
}

std::vector<Value> ReadList(DocContext& doc, const Value& value) {
  std::vector<Value> items;
  if (!value.present()) return items;
  if (!value.node.IsSequence()) {
    TypeError(doc, value, "must be a list");
    return items;
  }
  for (size_t i = 0; i < value.node.size(); ++i) {
    const YAML::Node item = value.node[i];
    const int line = LineOf(item);
    items.push_back(Value{.node = item,
                          .path = absl::StrCat(value.path, "[", i, "]"),
                          .line = line > 0 ? line : value.line});
  }
  return items;
}

std::optional<std::vector<std::string>> ReadStringList(DocContext& doc,
                                                       const Value& value) {
  if (!value.present()) return std::nullopt;
  const int errors = doc.error_count();
  std::vector<std::string> out;
  for (const Value& item : ReadList(doc, value)) {
    if (!RequirePresent(doc, item)) continue;
    std::optional<std::string> text = ReadString(doc, item);
    if (text) out.push_back(*text);
  }
  if (doc.error_count() != errors) return std::nullopt;
  return out;
}

}  // namespace gpusched::policy_internal
