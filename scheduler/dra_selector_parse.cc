// The parser of the CEL subset DeviceSelector evaluates (the grammar is in
// dra_selector.h). A lexer cuts the text into tokens, each with its byte
// offset, and a recursive descent builds the tree; every failure names the
// byte and what was expected there.

#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_selector_internal.h"
#include "scheduler/quantity.h"

namespace gpusched {
namespace {

using NodePtr = std::shared_ptr<const DeviceSelector::Node>;
using Kind = DeviceSelector::Node::Kind;

struct Token {
  enum class Type { kIdent, kString, kInt, kPunct, kEnd };
  Type type = Type::kEnd;
  std::string text;  // identifier, unescaped string, punctuation
  int64_t number = 0;
  size_t offset = 0;
};

// Longest first, so that "==" is not read as "=" "=".
constexpr std::string_view kPunctuation[] = {
    "&&", "||", "==", "!=", ">=", "<=", ">", "<", "!", ".", "[", "]", "(", ")"};

// Keeps parsing bounded on hostile input: selectors are at most 10 KiB in
// the API, and nesting deeper than this is no selector anyone writes.
constexpr int kMaxDepth = 32;
constexpr size_t kMaxLength = 10 * 1024;

absl::Status Outside(size_t offset, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "outside the supported CEL subset at byte ", offset, ": ", Sv(what)));
}

absl::StatusOr<Token> LexString(std::string_view text, size_t& at) {
  Token token{Token::Type::kString, "", 0, at};
  const char quote = text[at++];
  while (at < text.size() && text[at] != quote) {
    char c = text[at++];
    if (c == '\\') {
      if (at >= text.size()) break;
      c = text[at++];
      if (c != '\\' && c != '\'' && c != '"') {
        return Outside(at - 2, "escape sequences other than \\\\ \\' \\\"");
      }
    }
    token.text += c;
  }
  if (at >= text.size()) return Outside(token.offset, "unterminated string");
  ++at;
  return token;
}

absl::StatusOr<Token> LexNumber(std::string_view text, size_t& at) {
  Token token{Token::Type::kInt, "", 0, at};
  bool negative = text[at] == '-';
  if (negative) ++at;
  if (at >= text.size() ||
      !std::isdigit(static_cast<unsigned char>(text[at]))) {
    return Outside(token.offset, "'-' other than before an integer");
  }
  while (at < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[at]))) {
    if (token.number > (INT64_MAX - 9) / 10) {
      return Outside(token.offset, "integer out of range");
    }
    token.number = token.number * 10 + (text[at++] - '0');
  }
  if (negative) token.number = -token.number;
  return token;
}

absl::StatusOr<Token> LexOne(std::string_view text, size_t& at) {
  const char c = text[at];
  if (c == '\'' || c == '"') return LexString(text, at);
  if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
    return LexNumber(text, at);
  }
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    Token token{Token::Type::kIdent, "", 0, at};
    while (at < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[at])) ||
            text[at] == '_')) {
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
  return Outside(at, absl::StrCat("character '", std::string(1, c), "'"));
}

absl::StatusOr<std::vector<Token>> Lex(std::string_view text) {
  std::vector<Token> tokens;
  size_t at = 0;
  while (true) {
    while (at < text.size() &&
           std::isspace(static_cast<unsigned char>(text[at]))) {
      ++at;
    }
    if (at >= text.size()) break;
    absl::StatusOr<Token> token = LexOne(text, at);
    if (!token.ok()) return token.status();
    tokens.push_back(*std::move(token));
  }
  tokens.push_back(Token{Token::Type::kEnd, "", 0, text.size()});
  return tokens;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<NodePtr> Whole() {
    absl::StatusOr<NodePtr> root = Or(0);
    if (!root.ok()) return root;
    if (Peek().type != Token::Type::kEnd) return Expected("&&, || or the end");
    return root;
  }

 private:
  const Token& Peek() const { return tokens_[next_]; }
  bool IsPunct(std::string_view punct) const {
    return Peek().type == Token::Type::kPunct && Peek().text == punct;
  }
  bool IsIdent(std::string_view ident) const {
    return Peek().type == Token::Type::kIdent && Peek().text == ident;
  }
  absl::Status Expected(std::string_view what) const {
    const Token& got = Peek();
    std::string seen = got.type == Token::Type::kEnd
                           ? "the end"
                           : absl::StrCat("'",
                                          got.type == Token::Type::kInt
                                              ? std::to_string(got.number)
                                              : got.text,
                                          "'");
    return Outside(got.offset,
                   absl::StrCat("expected ", Sv(what), ", got ", seen));
  }
  absl::Status Take(std::string_view punct) {
    if (!IsPunct(punct)) return Expected(absl::StrCat("'", Sv(punct), "'"));
    ++next_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> TakeString(std::string_view what) {
    if (Peek().type != Token::Type::kString) return Expected(what);
    return tokens_[next_++].text;
  }

  absl::StatusOr<NodePtr> Or(int depth);
  absl::StatusOr<NodePtr> And(int depth);
  absl::StatusOr<NodePtr> Unary(int depth);
  absl::StatusOr<NodePtr> Comparison(int depth);
  absl::StatusOr<NodePtr> Operand();
  absl::StatusOr<NodePtr> DeviceField();
  absl::StatusOr<std::pair<std::string, std::string>> DomainAndName();
  absl::StatusOr<NodePtr> CapacityCompare(std::string domain, std::string name);
  absl::StatusOr<NodePtr> Call(std::string_view function);
  absl::StatusOr<NodePtr> Has();

  std::vector<Token> tokens_;
  size_t next_ = 0;
};

NodePtr Joined(Kind kind, std::vector<NodePtr> children) {
  if (children.size() == 1) return children.front();
  auto node = std::make_shared<DeviceSelector::Node>();
  node->kind = kind;
  node->children = std::move(children);
  return node;
}

absl::StatusOr<NodePtr> Parser::Or(int depth) {
  if (depth > kMaxDepth) return Outside(Peek().offset, "nesting too deep");
  std::vector<NodePtr> terms;
  do {
    absl::StatusOr<NodePtr> term = And(depth);
    if (!term.ok()) return term;
    terms.push_back(*std::move(term));
  } while (IsPunct("||") && ++next_);
  return Joined(Kind::kOr, std::move(terms));
}

absl::StatusOr<NodePtr> Parser::And(int depth) {
  std::vector<NodePtr> terms;
  do {
    absl::StatusOr<NodePtr> term = Unary(depth);
    if (!term.ok()) return term;
    terms.push_back(*std::move(term));
  } while (IsPunct("&&") && ++next_);
  return Joined(Kind::kAnd, std::move(terms));
}

absl::StatusOr<NodePtr> Parser::Unary(int depth) {
  if (depth > kMaxDepth) return Outside(Peek().offset, "nesting too deep");
  if (IsPunct("!")) {
    ++next_;
    absl::StatusOr<NodePtr> operand = Unary(depth + 1);
    if (!operand.ok()) return operand;
    auto node = std::make_shared<DeviceSelector::Node>();
    node->kind = Kind::kNot;
    node->children.push_back(*std::move(operand));
    return node;
  }
  if (IsPunct("(")) {
    ++next_;
    absl::StatusOr<NodePtr> inner = Or(depth + 1);
    if (!inner.ok()) return inner;
    if (absl::Status closed = Take(")"); !closed.ok()) return closed;
    return inner;
  }
  if (Peek().type == Token::Type::kString &&
      tokens_[next_ + 1].type == Token::Type::kIdent &&
      tokens_[next_ + 1].text == "in") {
    return Has();
  }
  return Comparison(depth);
}

absl::StatusOr<NodePtr> Parser::Comparison(int depth) {
  absl::StatusOr<NodePtr> left = Operand();
  if (!left.ok()) return left;
  static constexpr std::string_view kOps[] = {"==", "!=", "<", "<=", ">", ">="};
  for (std::string_view op : kOps) {
    if (!IsPunct(op)) continue;
    ++next_;
    absl::StatusOr<NodePtr> right = Operand();
    if (!right.ok()) return right;
    auto node = std::make_shared<DeviceSelector::Node>();
    node->kind = Kind::kCompare;
    node->op = std::string(op);
    node->children = {*std::move(left), *std::move(right)};
    return node;
  }
  // A lone operand is a condition only when it is a bool: a literal or an
  // attribute (a non-bool attribute is CEL's runtime error, as there).
  if ((*left)->kind == Kind::kLiteral &&
      (*left)->literal.type != SelectorValue::Type::kBool) {
    return Expected("a comparison");
  }
  if ((*left)->kind == Kind::kDriver || (*left)->kind == Kind::kCapacity) {
    return Expected("a comparison");
  }
  return left;
}

NodePtr Literal(SelectorValue value) {
  auto node = std::make_shared<DeviceSelector::Node>();
  node->kind = Kind::kLiteral;
  node->literal = std::move(value);
  return node;
}

absl::StatusOr<NodePtr> Parser::Operand() {
  const Token& token = Peek();
  switch (token.type) {
    case Token::Type::kString:
      ++next_;
      return Literal({SelectorValue::Type::kString, token.text});
    case Token::Type::kInt:
      ++next_;
      return Literal({SelectorValue::Type::kInt, "", token.number});
    case Token::Type::kIdent:
      if (token.text == "true" || token.text == "false") {
        ++next_;
        return Literal(
            {SelectorValue::Type::kBool, "", 0, token.text == "true"});
      }
      if (token.text == "semver") return Call("semver");
      if (token.text == "device") return DeviceField();
      break;
    default:
      break;
  }
  return Expected(
      "device.driver, device.attributes, device.capacity or a literal");
}

// semver('1.2.3') as a literal (quantity(...) only inside compareTo).
absl::StatusOr<NodePtr> Parser::Call(std::string_view function) {
  ++next_;
  if (absl::Status open = Take("("); !open.ok()) return open;
  absl::StatusOr<std::string> text = TakeString("a string");
  if (!text.ok()) return text.status();
  if (absl::Status closed = Take(")"); !closed.ok()) return closed;
  return Literal({SelectorValue::Type::kVersion, *text});
}

absl::StatusOr<NodePtr> Parser::DeviceField() {
  ++next_;
  if (absl::Status dot = Take("."); !dot.ok()) return dot;
  const bool attributes = IsIdent("attributes");
  const bool capacity = IsIdent("capacity");
  if (IsIdent("driver")) {
    ++next_;
    auto node = std::make_shared<DeviceSelector::Node>();
    node->kind = Kind::kDriver;
    return NodePtr(node);
  }
  if (!attributes && !capacity)
    return Expected("driver, attributes or capacity");
  ++next_;
  absl::StatusOr<std::pair<std::string, std::string>> key = DomainAndName();
  if (!key.ok()) return key.status();
  if (capacity) return CapacityCompare(key->first, key->second);
  auto node = std::make_shared<DeviceSelector::Node>();
  node->kind = Kind::kAttribute;
  node->domain = key->first;
  node->name = key->second;
  node->key = absl::StrCat(node->domain, "/", node->name);
  return NodePtr(node);
}

// ['domain'].name or ['domain']['name'].
absl::StatusOr<std::pair<std::string, std::string>> Parser::DomainAndName() {
  if (absl::Status open = Take("["); !open.ok()) return open;
  absl::StatusOr<std::string> domain = TakeString("a quoted domain");
  if (!domain.ok()) return domain.status();
  if (absl::Status closed = Take("]"); !closed.ok()) return closed;
  if (IsPunct("[")) {
    ++next_;
    absl::StatusOr<std::string> name = TakeString("a quoted name");
    if (!name.ok()) return name.status();
    if (absl::Status closed = Take("]"); !closed.ok()) return closed;
    return std::make_pair(*domain, *name);
  }
  if (absl::Status dot = Take("."); !dot.ok()) return dot;
  if (Peek().type != Token::Type::kIdent) return Expected("a name");
  return std::make_pair(*domain, tokens_[next_++].text);
}

// .compareTo(quantity('40Gi')), the only use of a capacity in the subset.
absl::StatusOr<NodePtr> Parser::CapacityCompare(std::string domain,
                                                std::string name) {
  if (absl::Status dot = Take("."); !dot.ok()) return dot;
  if (!IsIdent("compareTo")) return Expected("compareTo");
  ++next_;
  if (absl::Status open = Take("("); !open.ok()) return open;
  if (!IsIdent("quantity")) return Expected("quantity(...)");
  ++next_;
  if (absl::Status open = Take("("); !open.ok()) return open;
  const size_t at = Peek().offset;
  absl::StatusOr<std::string> text = TakeString("a quoted quantity");
  if (!text.ok()) return text.status();
  absl::StatusOr<int64_t> milli = ParseQuantity(*text, 1000);
  if (!milli.ok()) return Outside(at, std::string(milli.status().message()));
  if (absl::Status closed = Take(")"); !closed.ok()) return closed;
  if (absl::Status closed = Take(")"); !closed.ok()) return closed;
  auto node = std::make_shared<DeviceSelector::Node>();
  node->kind = Kind::kCapacity;
  node->domain = std::move(domain);
  node->name = std::move(name);
  node->key = absl::StrCat(node->domain, "/", node->name);
  node->literal = {SelectorValue::Type::kInt, "", *milli};
  return NodePtr(node);
}

// 'name' in device.attributes['domain'].
absl::StatusOr<NodePtr> Parser::Has() {
  std::string name = tokens_[next_].text;
  next_ += 2;
  if (!IsIdent("device")) return Expected("device.attributes['domain']");
  ++next_;
  if (absl::Status dot = Take("."); !dot.ok()) return dot;
  if (!IsIdent("attributes")) return Expected("attributes");
  ++next_;
  if (absl::Status open = Take("["); !open.ok()) return open;
  absl::StatusOr<std::string> domain = TakeString("a quoted domain");
  if (!domain.ok()) return domain.status();
  if (absl::Status closed = Take("]"); !closed.ok()) return closed;
  auto node = std::make_shared<DeviceSelector::Node>();
  node->kind = Kind::kHas;
  node->domain = *std::move(domain);
  node->name = std::move(name);
  node->key = absl::StrCat(node->domain, "/", node->name);
  return NodePtr(node);
}

}  // namespace

absl::StatusOr<NodePtr> ParseSelector(std::string_view expression) {
  if (expression.size() > kMaxLength) {
    return Outside(kMaxLength, "longer than 10 KiB");
  }
  absl::StatusOr<std::vector<Token>> tokens = Lex(expression);
  if (!tokens.ok()) return tokens.status();
  return Parser(*std::move(tokens)).Whole();
}

}  // namespace gpusched
