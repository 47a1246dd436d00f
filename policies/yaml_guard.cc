#include "policies/yaml_guard.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpusched {
namespace {

// What came last on the line, outside quotes: it says whether the next
// character can start a value (where '*' is an alias, a quote opens a
// quoted scalar, and a ',' outside [ ] and { } is the one yaml-cpp never
// gets past).
enum class Prev {
  kNothing,    // start of a line outside [ ] and { }
  kIndicator,  // "key: ", "- ", "? ", "---"
  kFlowOpen,   // '[' or '{'
  kComma,      // ',' inside [ ] or { }
  kFlowClose,  // ']' or '}'
  kQuoted,     // the closing quote of a quoted scalar
  kPlain,      // any other text: a plain scalar goes on
};

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool IsFlowIndicator(char c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

bool EndsToken(std::string_view line, size_t i) {
  return i >= line.size() || IsBlank(line[i]);
}

class Scanner {
 public:
  explicit Scanner(const YamlLimits& limits) : limits_(limits) {
    indents_.reserve(static_cast<size_t>(limits.max_depth) + 2);
  }

  std::optional<YamlRejection> Run(std::string_view text) {
    size_t begin = 0;
    while (begin <= text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      ++line_number_;
      if (absl::Status s = Line(text.substr(begin, end - begin)); !s.ok()) {
        return YamlRejection{line_number_, std::string(s.message())};
      }
      begin = end + 1;
    }
    return std::nullopt;
  }

 private:
  absl::Status Error(size_t column, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", column + 1, ": ", what));
  }

  bool ValueStarts() const {
    return prev_ == Prev::kNothing || prev_ == Prev::kIndicator ||
           prev_ == Prev::kFlowOpen || prev_ == Prev::kComma;
  }

  // YAML 1.2 (§5.1) allows no C0 control character but tab, LF and CR,
  // and no DEL. yaml-cpp 0.7 takes a NUL where a value starts as an
  // empty one, so "\0, x" runs away like ", x" (found by
  // tests/fuzz/k8s_yaml_fuzz).
  absl::Status CheckControlCharacters(std::string_view line) const {
    for (size_t i = 0; i < line.size(); ++i) {
      const auto byte = static_cast<unsigned char>(line[i]);
      if ((byte < 0x20 && byte != '\t' && byte != '\r') || byte == 0x7f) {
        return Error(i, absl::StrCat("control character 0x",
                                     absl::Hex(byte, absl::kZeroPad2),
                                     " is not allowed in YAML"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Line(std::string_view line) {
    if (absl::Status s = CheckControlCharacters(line); !s.ok()) return s;
    const size_t indent = line.find_first_not_of(' ');
    if (block_scalar_parent_ >= 0) {
      // The text of a | or > block: anything goes while it is indented
      // past the line that opened it.
      if (indent == std::string_view::npos ||
          static_cast<int>(indent) > block_scalar_parent_) {
        return absl::OkStatus();
      }
      block_scalar_parent_ = -1;
    }
    if (quote_ == 0 && flow_depth_ == 0) {
      prev_ = Prev::kNothing;
      if (indent != std::string_view::npos && line[indent] != '#') {
        if (absl::Status s = Nest(line, indent); !s.ok()) return s;
      }
    }
    return Tokens(line, indent);
  }

  // The line's tokens, outside quotes and comments.
  absl::Status Tokens(std::string_view line, size_t indent) {
    for (size_t i = 0; i < line.size(); ++i) {
      if (quote_ != 0) {
        InQuote(line, i);
        continue;
      }
      if (IsBlank(line[i])) continue;
      if (line[i] == '#' && (i == 0 || IsBlank(line[i - 1]))) break;
      bool rest_of_line_is_text = false;
      if (absl::Status s = Token(line, indent, i, &rest_of_line_is_text);
          !s.ok()) {
        return s;
      }
      if (rest_of_line_is_text) break;
    }
    return absl::OkStatus();
  }

  // Block nesting: one level per deeper indentation and per "- " that opens
  // a sequence inside another on the same line.
  absl::Status Nest(std::string_view line, size_t indent) {
    const int column = static_cast<int>(indent);
    while (!indents_.empty() && indents_.back() > column) indents_.pop_back();
    if (indents_.empty() || indents_.back() < column) {
      indents_.push_back(column);
    }
    int dashes = 0;
    for (size_t j = indent;
         j < line.size() && line[j] == '-' && EndsToken(line, j + 1);) {
      ++dashes;
      j = line.find_first_not_of(' ', j + 1);
      if (j == std::string_view::npos) break;
    }
    if (static_cast<int>(indents_.size()) + dashes > limits_.max_depth) {
      return Error(indent, absl::StrCat("nested more than ", limits_.max_depth,
                                        " levels deep"));
    }
    return absl::OkStatus();
  }

  void InQuote(std::string_view line, size_t& i) {
    const char c = line[i];
    if (quote_ == '"') {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quote_ = 0;
        prev_ = Prev::kQuoted;
      }
      return;
    }
    if (c != '\'') return;
    if (i + 1 < line.size() && line[i + 1] == '\'') {
      ++i;  // '' is a quote inside the scalar
      return;
    }
    quote_ = 0;
    prev_ = Prev::kQuoted;
  }

  // One significant character outside quotes at line[i]; may move i past
  // the rest of its token.
  absl::Status Token(std::string_view line, size_t indent, size_t& i,
                     bool* rest_is_text) {
    const char c = line[i];
    // After a complete value (a closing quote or bracket) yaml-cpp's scanner
    // starts a new token, as it does where a value starts: "'a' {}" is a
    // quoted scalar and then a flow map, not text (a plain scalar such as
    // "a {}" goes on). Missing this let "'a' {}, b" through to a scan that
    // never ends.
    const bool token_starts =
        ValueStarts() || prev_ == Prev::kQuoted || prev_ == Prev::kFlowClose;
    switch (c) {
      case '"':
      case '\'':
        if (token_starts) {
          quote_ = c;
          return absl::OkStatus();
        }
        break;
      case '[':
      case '{':
        if (token_starts || flow_depth_ > 0) return OpenFlow(i);
        break;
      case ']':
      case '}':
        if (flow_depth_ > 0) {
          --flow_depth_;
          prev_ = Prev::kFlowClose;
          return absl::OkStatus();
        }
        break;
      case ',':
        return Comma(i);
      default:
        return ValueToken(line, indent, i, rest_is_text);
    }
    prev_ = Prev::kPlain;
    return absl::OkStatus();
  }

  // Aliases, block scalars, anchors, tags, indicators and plain text.
  absl::Status ValueToken(std::string_view line, size_t indent, size_t& i,
                          bool* rest_is_text) {
    const char c = line[i];
    const bool value_starts = ValueStarts();
    if (value_starts && c == '*') {
      return Error(i,
                   "YAML aliases (*name) are not accepted: each one "
                   "repeats its anchor's whole value");
    }
    if (value_starts && flow_depth_ == 0 && (c == '|' || c == '>')) {
      block_scalar_parent_ = static_cast<int>(indent);
      *rest_is_text = true;
      return absl::OkStatus();
    }
    if (value_starts && (c == '&' || c == '!')) {
      // An anchor or a tag: the value is still to come. yaml-cpp ends both
      // at a flow indicator too, so "!t," puts a ',' where a value starts
      // (found by tests/fuzz/k8s_yaml_fuzz: LoadAll never returned).
      while (!EndsToken(line, i + 1) && !IsFlowIndicator(line[i + 1])) ++i;
      return absl::OkStatus();
    }
    if (!Indicator(line, i)) prev_ = Prev::kPlain;
    return absl::OkStatus();
  }

  absl::Status OpenFlow(size_t i) {
    ++flow_depth_;
    prev_ = Prev::kFlowOpen;
    if (static_cast<int>(indents_.size()) + flow_depth_ > limits_.max_depth) {
      return Error(i, absl::StrCat("nested more than ", limits_.max_depth,
                                   " levels deep"));
    }
    return absl::OkStatus();
  }

  // Inside [ ] or { } a ',' separates entries. Outside them it is text
  // only within a plain scalar ("a: b, c"); after a value is complete, or
  // where one starts, yaml-cpp 0.7 scans it forever.
  absl::Status Comma(size_t i) {
    if (flow_depth_ > 0) {
      prev_ = Prev::kComma;
      return absl::OkStatus();
    }
    if (prev_ == Prev::kPlain) return absl::OkStatus();
    return Error(i, prev_ == Prev::kFlowClose || prev_ == Prev::kQuoted
                        ? "unexpected ',' after a complete value, outside "
                          "any [ ] or { }"
                        : "unexpected ',' where a value starts, outside any "
                          "[ ] or { }");
  }

  // ':', '-', '?' and "---" followed by a blank are structure, not text.
  bool Indicator(std::string_view line, size_t& i) {
    const char c = line[i];
    if (c == ':' &&
        (EndsToken(line, i + 1) ||
         (flow_depth_ > 0 &&
          (line[i + 1] == ',' || line[i + 1] == ']' || line[i + 1] == '}')))) {
      prev_ = Prev::kIndicator;
      return true;
    }
    if (i == 0 && (line.starts_with("---") || line.starts_with("...")) &&
        EndsToken(line, 3)) {
      i += 2;
      prev_ = Prev::kIndicator;
      return true;
    }
    if ((c == '-' || c == '?') && ValueStarts() && EndsToken(line, i + 1)) {
      prev_ = Prev::kIndicator;
      return true;
    }
    return false;
  }

  const YamlLimits limits_;
  int line_number_ = 0;
  int flow_depth_ = 0;
  char quote_ = 0;                // '"' or '\'' inside a quoted scalar
  int block_scalar_parent_ = -1;  // indentation of the line opening | or >
  std::vector<int> indents_;      // block indentation levels, outermost first
  Prev prev_ = Prev::kNothing;
};

}  // namespace

std::optional<YamlRejection> FindYamlRejection(std::string_view text,
                                               const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return YamlRejection{
        0, absl::StrCat("the text is ", text.size(), " bytes, more than the ",
                        limits.max_bytes, " accepted")};
  }
  // yaml-cpp skips a UTF-8 byte order mark at the start of the stream (and
  // only there), so the guard must read what follows it as yaml-cpp does:
  // '\xEF\xBB\xBF"a",' is a quoted scalar and a runaway ',' (found by
  // tests/fuzz/k8s_yaml_fuzz). Editors hide the mark, so line 1's columns
  // count from after it.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(3);
  return Scanner(limits).Run(text);
}

absl::Status CheckYamlText(std::string_view text, const YamlLimits& limits) {
  std::optional<YamlRejection> rejection = FindYamlRejection(text, limits);
  if (!rejection.has_value()) return absl::OkStatus();
  if (rejection->line == 0)
    return absl::InvalidArgumentError(rejection->message);
  return absl::InvalidArgumentError(
      absl::StrCat("line ", rejection->line, ", ", rejection->message));
}

}  // namespace gpusched
