// The lexer of the CEL subset DeviceSelector evaluates: tokens as CEL's
// grammar cuts them, each with its byte offset. What CEL's lexer reads
// differently, or the subset leaves out (escapes other than \\ \' \",
// triple-quoted, raw and byte strings, uint, hex and float literals), is
// outside the subset.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_selector_internal.h"

namespace gpusched {
namespace {

using Token = SelectorToken;

// Longest first, so that "==" is not read as "=" "=".
constexpr std::string_view kPunctuation[] = {
    "&&", "||", "==", "!=", ">=", "<=", ">", "<", "!", ".", "[", "]", "(", ")"};

// CEL's whitespace: no vertical tab.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Strict UTF-8: CEL reads the text as Unicode, and would read a byte that
// is no part of a character as U+FFFD, not as itself.
bool ValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80   ? 1
                    : lead < 0xC2 ? 0
                    : lead < 0xE0 ? 2
                    : lead < 0xF0 ? 3
                    : lead < 0xF5 ? 4
                                  : 0;
    if (length == 0 || i + length > text.size()) return false;
    uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < least[length] || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

absl::StatusOr<Token> LexString(std::string_view text, size_t& at) {
  Token token{Token::Type::kString, "", 0, at};
  const char quote = text[at];
  if (text.substr(at, 3) == std::string(3, quote)) {
    return OutsideSubset(at, "triple-quoted strings");
  }
  ++at;
  while (at < text.size() && text[at] != quote) {
    char c = text[at++];
    if (c == '\n' || c == '\r') {
      return OutsideSubset(at - 1, "not valid CEL: a line break in a string");
    }
    if (c == '\\') {
      if (at >= text.size()) break;
      c = text[at++];
      if (c != '\\' && c != '\'' && c != '"') {
        return OutsideSubset(at - 2,
                             "escape sequences other than \\\\ \\' \\\"");
      }
    }
    token.text += c;
  }
  if (at >= text.size()) {
    return OutsideSubset(token.offset, "unterminated string");
  }
  ++at;
  if (!ValidUtf8(token.text)) {
    return OutsideSubset(token.offset, "a string that is not UTF-8");
  }
  return token;
}

// A decimal int64, with its sign when a '-' is right before it (CEL
// reads -9223372036854775808 as one literal).
absl::StatusOr<Token> LexNumber(std::string_view text, size_t& at) {
  Token token{Token::Type::kInt, "", 0, at};
  const bool negative = text[at] == '-';
  if (negative) ++at;
  if (at >= text.size() || !IsDigit(text[at])) {
    return OutsideSubset(token.offset, "'-' other than before an integer");
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : INT64_MAX;
  uint64_t magnitude = 0;
  while (at < text.size() && IsDigit(text[at])) {
    const uint64_t digit = text[at++] - '0';
    if (magnitude > (limit - digit) / 10) {
      return OutsideSubset(token.offset, "integer out of range");
    }
    magnitude = magnitude * 10 + digit;
  }
  token.number = negative ? static_cast<int64_t>(0 - magnitude)
                          : static_cast<int64_t>(magnitude);
  return token;
}

absl::StatusOr<Token> LexOne(std::string_view text, size_t& at) {
  const char c = text[at];
  if (c == '\'' || c == '"') return LexString(text, at);
  if (c == '-' || IsDigit(c)) return LexNumber(text, at);
  if (IsIdentStart(c)) {
    Token token{Token::Type::kIdent, "", 0, at};
    while (at < text.size() && (IsIdentStart(text[at]) || IsDigit(text[at]))) {
      token.text += text[at++];
    }
    return token;
  }
  for (std::string_view punct : kPunctuation) {
    if (text.substr(at, punct.size()) == punct) {
      Token token{Token::Type::kPunct, std::string(punct), 0, at};
      at += punct.size();
      return token;
    }
  }
  return OutsideSubset(at, absl::StrCat("character '", std::string(1, c), "'"));
}

}  // namespace

absl::Status OutsideSubset(size_t offset, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "outside the supported CEL subset at byte ", offset, ": ", Sv(what)));
}

absl::StatusOr<std::vector<SelectorToken>> LexSelector(std::string_view text) {
  std::vector<Token> tokens;
  size_t at = 0;
  while (true) {
    while (at < text.size() && IsSpace(text[at])) ++at;
    if (at >= text.size()) break;
    absl::StatusOr<Token> token = LexOne(text, at);
    if (!token.ok()) return token.status();
    tokens.push_back(*std::move(token));
  }
  tokens.push_back(Token{Token::Type::kEnd, "", 0, text.size()});
  return tokens;
}

}  // namespace gpusched
