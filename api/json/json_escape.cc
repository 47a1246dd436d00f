#include "api/json/json_escape.h"

#include <cstdint>
#include <cstring>

namespace gpusched {

namespace {

bool NeedsEscape(char c) {
  return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
}

// True when one of the 8 bytes of `word` needs escaping (a quote, a
// backslash or a control character), eight characters per test.
bool AnyNeedsEscape(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const uint64_t below_space = (word - kOnes * 0x20) & ~word & kHigh;
  return (below_space | has_zero(word ^ (kOnes * '"')) |
          has_zero(word ^ (kOnes * '\\'))) != 0;
}

// How many leading bytes of `text` surely need no escape, eight at a time;
// text.size() when none does.
size_t CleanPrefixLength(std::string_view text) {
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if (AnyNeedsEscape(word)) break;
  }
  // The last few bytes: the last whole word, overlapping bytes already
  // found clean, so that clean tails skip the character loop too (a
  // fixed-size load; a partial copy stalls on store forwarding).
  if (i < text.size() && text.size() - i < 8 && text.size() >= 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + text.size() - 8, 8);
    if (!AnyNeedsEscape(word)) i = text.size();
  }
  return i;
}

// The escape of one character that NeedsEscape.
void AppendEscape(std::string& out, char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
  }
}

}  // namespace

// Appends runs of plain characters in one go: node names and reasons rarely
// need escaping, and a character at a time was a fifth of a filter response.
void AppendJsonEscaped(std::string& out, std::string_view text) {
  size_t run = 0;
  for (size_t i = CleanPrefixLength(text); i < text.size(); ++i) {
    const char c = text[i];
    if (!NeedsEscape(c)) continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    AppendEscape(out, c);
  }
  out.append(text.data() + run, text.size() - run);
}

}  // namespace gpusched
