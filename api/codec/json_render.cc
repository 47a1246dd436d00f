#include "api/codec/json_render.h"

#include <array>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "api/json/json_escape.h"
#include "scheduler/base/strings.h"
#include "simdjson.h"

namespace gpusched {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

void AppendQuoted(std::string& out, std::string_view text) {
  out += '"';
  AppendJsonEscaped(out, text);
  out += '"';
}

void Spaces(std::string& out, int count) { out.append(count, ' '); }

constexpr int kIndentStep = 4;

void Indent(std::string& out, element value, int depth);

void IndentObject(std::string& out, simdjson::dom::object object, int depth) {
  if (object.size() == 0) {
    out += "{}";
    return;
  }
  out += "{\n";
  bool first = true;
  for (simdjson::dom::key_value_pair field : object) {
    if (!first) out += ",\n";
    first = false;
    Spaces(out, kIndentStep * (depth + 1));
    AppendQuoted(out, field.key);
    out += ": ";
    Indent(out, field.value, depth + 1);
  }
  out += '\n';
  Spaces(out, kIndentStep * depth);
  out += '}';
}

void IndentArray(std::string& out, simdjson::dom::array array, int depth) {
  if (array.size() == 0) {
    out += "[]";
    return;
  }
  out += "[\n";
  bool first = true;
  for (element item : array) {
    if (!first) out += ",\n";
    first = false;
    Spaces(out, kIndentStep * (depth + 1));
    Indent(out, item, depth + 1);
  }
  out += '\n';
  Spaces(out, kIndentStep * depth);
  out += ']';
}

void Indent(std::string& out, element value, int depth) {
  if (value.type() == element_type::OBJECT) {
    IndentObject(out, value.get_object().value_unsafe(), depth);
  } else if (value.type() == element_type::ARRAY) {
    IndentArray(out, value.get_array().value_unsafe(), depth);
  } else if (value.type() == element_type::STRING) {
    AppendQuoted(out, value.get_string().value_unsafe());
  } else {
    out += simdjson::minify(value);  // numbers as the server wrote them
  }
}

// Whether YAML reads `text` back as this string when written plain: it
// starts with a letter or '/', holds no indicator that could end or
// comment it, and is not a YAML 1.1 boolean or null (which kubectl's YAML
// library quotes too).
bool PlainYaml(std::string_view text) {
  constexpr std::array<std::string_view, 11> kReserved = {
      "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~", ""};
  for (std::string_view word : kReserved) {
    if (absl::EqualsIgnoreCase(Sv(text), Sv(word))) return false;
  }
  if (!absl::ascii_isalpha(text[0]) && text[0] != '/') return false;
  if (text.back() == ' ' || text.back() == ':') return false;
  if (absl::StrContains(Sv(text), ": ") || absl::StrContains(Sv(text), " #")) {
    return false;
  }
  for (char c : text) {
    if (!absl::ascii_isalnum(c) &&
        std::string_view("-_./: ").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

void YamlString(std::string& out, std::string_view text) {
  if (PlainYaml(text)) {
    out += text;
  } else {
    AppendQuoted(out, text);  // JSON's escapes are YAML's too
  }
}

bool NonEmpty(element value) {
  if (value.type() == element_type::OBJECT) {
    return value.get_object().value_unsafe().size() > 0;
  }
  if (value.type() == element_type::ARRAY) {
    return value.get_array().value_unsafe().size() > 0;
  }
  return false;
}

void YamlScalar(std::string& out, element value) {
  if (value.type() == element_type::STRING) {
    YamlString(out, value.get_string().value_unsafe());
  } else if (value.type() == element_type::OBJECT) {
    out += "{}";
  } else if (value.type() == element_type::ARRAY) {
    out += "[]";
  } else {
    out += simdjson::minify(value);
  }
  out += '\n';
}

void YamlList(std::string& out, simdjson::dom::array array, int indent,
              bool first_inline);

// `first_inline`: the first key goes on the current line, after "- ".
void YamlMap(std::string& out, simdjson::dom::object object, int indent,
             bool first_inline) {
  bool first = true;
  for (simdjson::dom::key_value_pair field : object) {
    if (!first || !first_inline) Spaces(out, indent);
    first = false;
    YamlString(out, field.key);
    out += ':';
    if (!NonEmpty(field.value)) {
      out += ' ';
      YamlScalar(out, field.value);
    } else if (field.value.type() == element_type::OBJECT) {
      out += '\n';
      YamlMap(out, field.value.get_object().value_unsafe(), indent + 2, false);
    } else {
      out += '\n';
      YamlList(out, field.value.get_array().value_unsafe(), indent, false);
    }
  }
}

void YamlList(std::string& out, simdjson::dom::array array, int indent,
              bool first_inline) {
  bool first = true;
  for (element item : array) {
    if (!first || !first_inline) Spaces(out, indent);
    first = false;
    out += "- ";
    if (!NonEmpty(item)) {
      YamlScalar(out, item);
    } else if (item.type() == element_type::OBJECT) {
      YamlMap(out, item.get_object().value_unsafe(), indent + 2, true);
    } else {
      YamlList(out, item.get_array().value_unsafe(), indent + 2, true);
    }
  }
}

}  // namespace

absl::StatusOr<std::string> IndentJson(std::string_view json) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> document = codec_internal::ParseJson(parser, json);
  if (!document.ok()) return document.status();
  std::string out;
  Indent(out, *document, 0);
  out += '\n';
  return out;
}

absl::StatusOr<std::string> JsonToYaml(std::string_view json) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> document = codec_internal::ParseJson(parser, json);
  if (!document.ok()) return document.status();
  std::string out;
  if (!NonEmpty(*document)) {
    YamlScalar(out, *document);
  } else if (document->type() == element_type::OBJECT) {
    YamlMap(out, document->get_object().value_unsafe(), 0, false);
  } else {
    YamlList(out, document->get_array().value_unsafe(), 0, false);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ListItemsJson(std::string_view json) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> document =
      codec_internal::ParseJsonObject(parser, json, "List");
  if (!document.ok()) return document.status();
  absl::StatusOr<std::optional<simdjson::dom::array>> items =
      codec_internal::ListItems(*document,
                                codec_internal::PathSegment::Root("List"));
  if (!items.ok()) return items.status();
  std::vector<std::string> out;
  if (!items->has_value()) return out;
  for (element item : **items) out.push_back(simdjson::minify(item));
  return out;
}

std::string JsonList(const std::vector<std::string>& objects) {
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (size_t i = 0; i < objects.size(); ++i) {
    if (i > 0) out += ',';
    out += objects[i];
  }
  out += R"(],"metadata":{"resourceVersion":""}})";
  return out;
}

}  // namespace gpusched
